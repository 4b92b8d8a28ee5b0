/* Parsing numbers of text data files (the svmlight and CRFsuite readers): finite decimal floats
 * as Python's float() reads them, in the "C" locale whatever setlocale() the host called. */
#ifndef SSVM_PARSE_NUMBERS_H
#define SSVM_PARSE_NUMBERS_H
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <locale.h>
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <xlocale.h>
#endif

#if defined(_WIN32)
typedef _locale_t ssvm_locale_t;
static ssvm_locale_t ssvm_new_c_locale(void) { return _create_locale(LC_NUMERIC, "C"); }
static void ssvm_free_locale(ssvm_locale_t l) { if (l) _free_locale(l); }
static double ssvm_strtod(const char *s, char **e, ssvm_locale_t l) {
    return l ? _strtod_l(s, e, l) : strtod(s, e);
}
#elif defined(__GLIBC__) || defined(__APPLE__) || defined(__FreeBSD__)
typedef locale_t ssvm_locale_t;
static ssvm_locale_t ssvm_new_c_locale(void) {
    return newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}
static void ssvm_free_locale(ssvm_locale_t l) { if (l) freelocale(l); }
static double ssvm_strtod(const char *s, char **e, ssvm_locale_t l) {
    return l ? strtod_l(s, e, l) : strtod(s, e);
}
#else
typedef void *ssvm_locale_t;
static ssvm_locale_t ssvm_new_c_locale(void) { return NULL; }
static void ssvm_free_locale(ssvm_locale_t l) { (void)l; }
static double ssvm_strtod(const char *s, char **e, ssvm_locale_t l) {
    (void)l; return strtod(s, e);
}
#endif

static const double ssvm_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int ssvm_is_ws(char c) { return c == 32 || (c >= 9 && c <= 13); }
static inline int ssvm_is_digit(char c) { return c >= 48 && c <= 57; }

/* Parse [s, e) as a finite float: 0 ok, 1 malformed, 2 NaN/inf/overflow. The byte at e must not
 * continue a number (a separator or the buffer's end), as strtod reads on. Exact fast path for
 * short decimals (Clinger: m <= 2**53 and 10**k, k <= 22, are exact doubles, so m / 10**k is
 * correctly rounded); hexadecimal floats, NaN and infinities are refused, as Python's float()
 * refuses the first and the readers the others. */
static int ssvm_parse_double(const char *s, const char *e, double *out, ssvm_locale_t loc) {
    const char *p = s;
    int neg = 0, nd = 0, nf = 0;
    uint64_t m = 0;
    char *endp = NULL;
    double v;
    if (p >= e) return 1;
    if (p[0] == '-') { neg = 1; p++; }
    else if (p[0] == '+') p++;
    while (p < e && ssvm_is_digit(p[0]) && nd < 19) { m = m * 10 + (uint64_t)(p[0] - 48); nd++; p++; }
    if (p < e && p[0] == '.') {
        p++;
        while (p < e && ssvm_is_digit(p[0]) && nd < 19) { m = m * 10 + (uint64_t)(p[0] - 48); nd++; nf++; p++; }
    }
    if (p == e && nd > 0 && nf <= 22 && m <= ((uint64_t)1 << 53)) {
        v = (double)m;
        if (nf > 0) v = v / ssvm_pow10[nf];
        *out = neg ? -v : v;
        return 0;
    }
    p = s;
    if (p[0] == '-' || p[0] == '+') p++;
    if (p + 1 < e && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return 1;
    if (ssvm_is_ws(s[0])) return 1;
    v = ssvm_strtod(s, &endp, loc);
    if ((const char *)endp != e) return 1;
    if (!isfinite(v)) return 2;
    *out = v;
    return 0;
}
#endif
