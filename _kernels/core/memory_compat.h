/* Give the heap's free pages back to the system (glibc's malloc_trim): after a large store of
 * small blocks is freed, glibc keeps them mapped, and the next large allocation (a copy of the
 * weights) would add to the peak instead of reusing them. No-op on other C libraries. */
#ifndef SSVM_MEMORY_COMPAT_H
#define SSVM_MEMORY_COMPAT_H
#if defined(__GLIBC__)
#include <malloc.h>
static inline void ssvm_release_free_memory(void) { malloc_trim(0); }
#else
static inline void ssvm_release_free_memory(void) {}
#endif
#endif
