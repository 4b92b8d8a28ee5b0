/* Mutex and condition variable for the kernels' helper threads, on every platform we build on:
 * POSIX threads where they exist (Linux, macOS, BSDs: macOS's libc has no C11 <threads.h>), C11
 * threads otherwise (Windows with a recent MSVC). All functions return 0 on success. */
#ifndef SSVM_THREADS_COMPAT_H
#define SSVM_THREADS_COMPAT_H

#if defined(_WIN32)
#include <threads.h>
typedef mtx_t ssvm_mutex_t;
typedef cnd_t ssvm_cond_t;
static inline int ssvm_mutex_init(ssvm_mutex_t *m) { return mtx_init(m, mtx_plain) == thrd_success ? 0 : -1; }
static inline void ssvm_mutex_destroy(ssvm_mutex_t *m) { mtx_destroy(m); }
static inline void ssvm_mutex_lock(ssvm_mutex_t *m) { mtx_lock(m); }
static inline void ssvm_mutex_unlock(ssvm_mutex_t *m) { mtx_unlock(m); }
static inline int ssvm_cond_init(ssvm_cond_t *c) { return cnd_init(c) == thrd_success ? 0 : -1; }
static inline void ssvm_cond_destroy(ssvm_cond_t *c) { cnd_destroy(c); }
static inline void ssvm_cond_wait(ssvm_cond_t *c, ssvm_mutex_t *m) { cnd_wait(c, m); }
static inline void ssvm_cond_signal(ssvm_cond_t *c) { cnd_signal(c); }
static inline void ssvm_cond_broadcast(ssvm_cond_t *c) { cnd_broadcast(c); }
#else
#include <pthread.h>
typedef pthread_mutex_t ssvm_mutex_t;
typedef pthread_cond_t ssvm_cond_t;
static inline int ssvm_mutex_init(ssvm_mutex_t *m) { return pthread_mutex_init(m, NULL); }
static inline void ssvm_mutex_destroy(ssvm_mutex_t *m) { pthread_mutex_destroy(m); }
static inline void ssvm_mutex_lock(ssvm_mutex_t *m) { pthread_mutex_lock(m); }
static inline void ssvm_mutex_unlock(ssvm_mutex_t *m) { pthread_mutex_unlock(m); }
static inline int ssvm_cond_init(ssvm_cond_t *c) { return pthread_cond_init(c, NULL); }
static inline void ssvm_cond_destroy(ssvm_cond_t *c) { pthread_cond_destroy(c); }
static inline void ssvm_cond_wait(ssvm_cond_t *c, ssvm_mutex_t *m) { pthread_cond_wait(c, m); }
static inline void ssvm_cond_signal(ssvm_cond_t *c) { pthread_cond_signal(c); }
static inline void ssvm_cond_broadcast(ssvm_cond_t *c) { pthread_cond_broadcast(c); }
#endif

/* Spin-then-sleep waits (the team's helpers between short jobs): an acquire load of a counter
 * another thread changes under the mutex, and the CPU's spin-loop hint. */
#if defined(_MSC_VER)
#include <intrin.h>
static inline long long ssvm_atomic_load(volatile long long *p) { return _InterlockedOr64((volatile __int64 *)p, 0); }
static inline void ssvm_cpu_relax(void) { _mm_pause(); }
#else
static inline long long ssvm_atomic_load(volatile long long *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void ssvm_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
#endif

#endif
