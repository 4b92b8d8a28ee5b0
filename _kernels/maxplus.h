/* Max-plus step of the Viterbi recursion, branch-free:
 *   cur[k] = max_p prev[p] + tr[p*K + k],  arg[k] = the lowest such p (as a double),
 * p outer and k inner over contiguous rows of tr; SSE2 two lanes at a time where available.
 * Ties keep the lowest p (strict >), exactly as a scalar loop over increasing p would. */
#ifndef SSVM_MAXPLUS_H
#define SSVM_MAXPLUS_H
#include <stddef.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline void ssvm_maxplus_step(const double *prev, const double *tr, double *cur, double *arg,
                                     ptrdiff_t K)
{
    ptrdiff_t k, p;
    for (k = 0; k < K; k++) {
        cur[k] = prev[0] + tr[k];
        arg[k] = 0.0;
    }
    for (p = 1; p < K; p++) {
        const double vp = prev[p], pd = (double)p;
        const double *row = tr + p * K;
        k = 0;
#if defined(__SSE2__)
        {
            const __m128d vvp = _mm_set1_pd(vp), vpd = _mm_set1_pd(pd);
            for (; k + 2 <= K; k += 2) {
                __m128d v = _mm_add_pd(vvp, _mm_loadu_pd(row + k));
                __m128d c = _mm_loadu_pd(cur + k);
                __m128d a = _mm_loadu_pd(arg + k);
                __m128d gt = _mm_cmpgt_pd(v, c);
                _mm_storeu_pd(cur + k, _mm_or_pd(_mm_and_pd(gt, v), _mm_andnot_pd(gt, c)));
                _mm_storeu_pd(arg + k, _mm_or_pd(_mm_and_pd(gt, vpd), _mm_andnot_pd(gt, a)));
            }
        }
#endif
        for (; k < K; k++) {
            const double v = vp + row[k];
            if (v > cur[k]) {
                cur[k] = v;
                arg[k] = pd;
            }
        }
    }
}
#endif
