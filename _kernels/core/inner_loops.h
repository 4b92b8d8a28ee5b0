/* Inner loops that the C compiler does not vectorise or keep in registers when written in Cython
 * (conditional selects, accumulators across an outer loop). Plain C99 + SSE2 where available. */
#ifndef SSVM_INNER_LOOPS_H
#define SSVM_INNER_LOOPS_H
#include <stddef.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A hint to the cache: start loading [p, p + bytes) now, for reading or for writing, so that a
 * later access finds it (results do not depend on it; a no-op where the compiler has no prefetch). */
static inline void ssvm_prefetch(const void *p, ptrdiff_t bytes, int for_write)
{
#if defined(__GNUC__)
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63), *end = (const char *)p + bytes;
    if (for_write)
        for (; c < end; c += 64)
            __builtin_prefetch(c, 1, 3);
    else
        for (; c < end; c += 64)
            __builtin_prefetch(c, 0, 3);
#else
    (void)p; (void)bytes; (void)for_write;
#endif
}

/* out[c] = sum_k val[k] * w[ind[k]*stride + c] for c < stride: the product of a sparse row with
 * the (feature-major) weight blocks. Eight outputs at a time stay in registers over the nonzeros;
 * each output is summed in the order of the nonzeros. */
static inline void ssvm_row_gemv(const int *ind, const double *val, ptrdiff_t nnz, const double *w,
                                 ptrdiff_t stride, double *out)
{
    ptrdiff_t c = 0, k;
    for (; c + 8 <= stride; c += 8) {
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0, a4 = 0.0, a5 = 0.0, a6 = 0.0, a7 = 0.0;
        for (k = 0; k < nnz; k++) {
            const double v = val[k];
            const double *wj = w + (ptrdiff_t)ind[k] * stride + c;
            a0 += v * wj[0]; a1 += v * wj[1]; a2 += v * wj[2]; a3 += v * wj[3];
            a4 += v * wj[4]; a5 += v * wj[5]; a6 += v * wj[6]; a7 += v * wj[7];
        }
        out[c] = a0; out[c + 1] = a1; out[c + 2] = a2; out[c + 3] = a3;
        out[c + 4] = a4; out[c + 5] = a5; out[c + 6] = a6; out[c + 7] = a7;
    }
    for (; c < stride; c++) {
        double a = 0.0;
        for (k = 0; k < nnz; k++)
            a += val[k] * w[(ptrdiff_t)ind[k] * stride + c];
        out[c] = a;
    }
}

/* A few columns of the product of a sparse row with the feature-major weight blocks, in one sweep
 * over the nonzeros: out[k] = sum_p val[p] * w[ind[p]*stride + labels[k]] for k < n, and *own the
 * same for column own. Up to four columns' sums stay in registers; each is summed in the order of
 * the nonzeros. */
static inline void ssvm_row_gather(const int *ind, const double *val, ptrdiff_t nnz, const double *w,
                                   ptrdiff_t stride, int own, const int *labels, int n,
                                   double *out, double *own_out)
{
    ptrdiff_t p;
    int k;
    double f = 0.0, a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    const ptrdiff_t l0 = n > 0 ? labels[0] : 0, l1 = n > 1 ? labels[1] : 0;
    const ptrdiff_t l2 = n > 2 ? labels[2] : 0, l3 = n > 3 ? labels[3] : 0;
    switch (n) {
    case 1:
        for (p = 0; p < nnz; p++) {
            const double v = val[p], *wj = w + (ptrdiff_t)ind[p] * stride;
            f += v * wj[own]; a0 += v * wj[l0];
        }
        break;
    case 2:
        for (p = 0; p < nnz; p++) {
            const double v = val[p], *wj = w + (ptrdiff_t)ind[p] * stride;
            f += v * wj[own]; a0 += v * wj[l0]; a1 += v * wj[l1];
        }
        break;
    case 3:
        for (p = 0; p < nnz; p++) {
            const double v = val[p], *wj = w + (ptrdiff_t)ind[p] * stride;
            f += v * wj[own]; a0 += v * wj[l0]; a1 += v * wj[l1]; a2 += v * wj[l2];
        }
        break;
    case 4:
        for (p = 0; p < nnz; p++) {
            const double v = val[p], *wj = w + (ptrdiff_t)ind[p] * stride;
            f += v * wj[own]; a0 += v * wj[l0]; a1 += v * wj[l1]; a2 += v * wj[l2]; a3 += v * wj[l3];
        }
        break;
    default:
        for (k = 0; k < n; k++)
            out[k] = 0.0;
        for (p = 0; p < nnz; p++) {
            const double v = val[p], *wj = w + (ptrdiff_t)ind[p] * stride;
            f += v * wj[own];
            for (k = 0; k < n; k++)
                out[k] += v * wj[labels[k]];
        }
        *own_out = f;
        return;
    }
    if (n > 0) out[0] = a0;
    if (n > 1) out[1] = a1;
    if (n > 2) out[2] = a2;
    if (n > 3) out[3] = a3;
    *own_out = f;
}

/* The transpose of ssvm_row_gather: w[ind[p]*stride + labels[k]] += coefs[k] * val[p] for k < n,
 * in one sweep over the nonzeros (each nonzero's weight block is touched once, for all columns).
 * Columns must be distinct; each column's additions happen in the order of the nonzeros. */
static inline void ssvm_row_scatter(const int *ind, const double *val, ptrdiff_t nnz, double *w,
                                    ptrdiff_t stride, const int *labels, const double *coefs, int n)
{
    ptrdiff_t p;
    int k;
    const ptrdiff_t l0 = n > 0 ? labels[0] : 0, l1 = n > 1 ? labels[1] : 0, l2 = n > 2 ? labels[2] : 0;
    const double c0 = n > 0 ? coefs[0] : 0.0, c1 = n > 1 ? coefs[1] : 0.0, c2 = n > 2 ? coefs[2] : 0.0;
    switch (n) {
    case 0:
        break;
    case 1:
        for (p = 0; p < nnz; p++)
            w[(ptrdiff_t)ind[p] * stride + l0] += c0 * val[p];
        break;
    case 2:
        for (p = 0; p < nnz; p++) {
            double *wj = w + (ptrdiff_t)ind[p] * stride;
            const double v = val[p];
            wj[l0] += c0 * v; wj[l1] += c1 * v;
        }
        break;
    case 3:
        for (p = 0; p < nnz; p++) {
            double *wj = w + (ptrdiff_t)ind[p] * stride;
            const double v = val[p];
            wj[l0] += c0 * v; wj[l1] += c1 * v; wj[l2] += c2 * v;
        }
        break;
    default:
        for (p = 0; p < nnz; p++) {
            double *wj = w + (ptrdiff_t)ind[p] * stride;
            const double v = val[p];
            for (k = 0; k < n; k++)
                wj[labels[k]] += coefs[k] * v;
        }
    }
}

/* Max-plus step of the Viterbi recursion, branch-free:
 *   cur[k] = max_p prev[p] + tr[p*K + k],  arg[k] = the lowest such p (as a double),
 * p outer and k inner over contiguous rows of tr; SSE2 two lanes at a time where available.
 * Ties keep the lowest p (strict >), exactly as a scalar loop over increasing p would. */
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
