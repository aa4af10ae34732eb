/*
 * js_text.c: the text and number rules the TypeScript converter gets from
 * JavaScript itself (TextDecoder, String.prototype.trim, Number(text),
 * String(n), JSON.stringify), written out so that the native converter's
 * bytes are the same as the TypeScript one's for any input.
 */
#include "analysis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sw_fail(struct sw_error *err, int kind, const char *fmt, ...) {
    if (err->kind != SW_OK) return; /* the first failure is the one to tell */
    err->kind = kind;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

void sw_bytes_reserve(struct sw_bytes *b, size_t more) {
    if (b->n + more <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) abort();
    b->p = p;
    b->cap = cap;
}

void sw_bytes_put(struct sw_bytes *b, const void *src, size_t n) {
    /* Nothing to put: an empty buffer's NULL is no place to memcpy to. */
    if (n == 0) return;
    sw_bytes_reserve(b, n);
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

void sw_bytes_free(struct sw_bytes *b) {
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

static const uint8_t REPLACEMENT[3] = {0xef, 0xbf, 0xbd};

void sw_utf8_sanitize(struct sw_bytes *out, const uint8_t *s, const uint8_t *e) {
    /* At most 3 output bytes per input byte (a lone byte becomes U+FFFD). */
    sw_bytes_reserve(out, (size_t)(e - s) * 3);
    uint8_t *o = out->p + out->n;
    const uint8_t *i = s;
    while (i < e) {
        /* Call stacks are long and nearly always ASCII: 8 bytes a step
         * while no byte has its top bit set. */
        while (e - i >= 8) {
            uint64_t w;
            memcpy(&w, i, 8);
            if (w & 0x8080808080808080ull) break;
            memcpy(o, &w, 8);
            o += 8;
            i += 8;
        }
        if (i == e) break;
        uint8_t c = *i;
        if (c < 0x80) {
            *o++ = c;
            i++;
            continue;
        }
        int need;
        uint8_t lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf) need = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            need = 2;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        } else {
            memcpy(o, REPLACEMENT, 3);
            o += 3;
            i++;
            continue;
        }
        const uint8_t *j = i + 1;
        bool ok = true;
        for (int k = 0; k < need; k++, j++) {
            if (j >= e || *j < lo || *j > hi) {
                ok = false;
                break;
            }
            lo = 0x80;
            hi = 0xbf;
        }
        if (ok) {
            memcpy(o, i, (size_t)(j - i));
            o += j - i;
        } else {
            /* The byte that broke the sequence is read again on its own. */
            memcpy(o, REPLACEMENT, 3);
            o += 3;
        }
        i = j;
    }
    out->n = (size_t)(o - out->p);
}

void sw_field_text(struct sw_bytes *out, const uint8_t *s, const uint8_t *e) {
    if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
        s++;
        e--;
        const uint8_t *from = s;
        for (const uint8_t *p = s; p + 1 < e;) {
            /* The next quote with a byte after it: a doubled one is one. */
            const uint8_t *q = memchr(p, '"', (size_t)(e - 1 - p));
            if (!q) break;
            if (q[1] == '"') {
                sw_utf8_sanitize(out, from, q);
                sw_bytes_put(out, "\"", 1);
                p = q + 2;
                from = p;
            } else {
                p = q + 1;
            }
        }
        sw_utf8_sanitize(out, from, e);
        return;
    }
    sw_utf8_sanitize(out, s, e);
}

size_t sw_utf16_length(const uint8_t *s, size_t n) {
    size_t units = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if ((c & 0xc0) != 0x80) units += c >= 0xf0 ? 2 : 1;
    }
    return units;
}

int sw_js_space(const uint8_t *s, const uint8_t *e) {
    if (s >= e) return 0;
    uint8_t c = s[0];
    if (c == ' ' || (c >= 9 && c <= 13)) return 1;
    if (c < 0x80) return 0;
    size_t left = (size_t)(e - s);
    if (c == 0xc2 && left >= 2 && s[1] == 0xa0) return 2;
    if (left < 3) return 0;
    if (c == 0xe1 && s[1] == 0x9a && s[2] == 0x80) return 3;
    if (c == 0xe2 && s[1] == 0x80 &&
        (s[2] <= 0x8a || s[2] == 0xa8 || s[2] == 0xa9 || s[2] == 0xaf) && s[2] >= 0x80)
        return 3;
    if (c == 0xe2 && s[1] == 0x81 && s[2] == 0x9f) return 3;
    if (c == 0xe3 && s[1] == 0x80 && s[2] == 0x80) return 3;
    if (c == 0xef && s[1] == 0xbb && s[2] == 0xbf) return 3;
    return 0;
}

int sw_js_terminator(const uint8_t *s, const uint8_t *e) {
    if (s >= e) return 0;
    if (s[0] == '\n' || s[0] == '\r') return 1;
    if (e - s >= 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) return 3;
    return 0;
}

/* Length of the JavaScript white space that ends just before e, else 0. */
static int space_before(const uint8_t *s, const uint8_t *e) {
    if (e <= s) return 0;
    uint8_t c = e[-1];
    if (c == ' ' || (c >= 9 && c <= 13)) return 1;
    if (c < 0x80) return 0;
    if (e - s >= 2 && sw_js_space(e - 2, e) == 2) return 2;
    if (e - s >= 3 && sw_js_space(e - 3, e) == 3) return 3;
    return 0;
}

void sw_js_trim(const uint8_t **s, const uint8_t **e) {
    int k;
    while ((k = sw_js_space(*s, *e)) > 0) *s += k;
    while ((k = space_before(*s, *e)) > 0) *e -= k;
}

double sw_parse_decimal(const uint8_t *s, const uint8_t *e) {
    while (s < e && (*s == ' ' || (*s >= 9 && *s <= 13))) s++;
    while (e > s && (e[-1] == ' ' || (e[-1] >= 9 && e[-1] <= 13))) e--;
    bool neg = false;
    if (s < e && (*s == '-' || *s == '+')) {
        neg = *s == '-';
        s++;
    }
    if (s == e) return NAN;
    /* Exact in integers while below 2^53, where each double step is exact
     * too; past it, the doubles' own rounding, step by step. */
    uint64_t u = 0;
    double n = 0;
    bool big = false;
    for (const uint8_t *i = s; i < e; i++) {
        unsigned d = (unsigned)(*i - '0');
        if (d <= 9) {
            if (!big) {
                u = u * 10 + d;
                if (u >= (1ull << 53)) {
                    big = true;
                    n = (double)u;
                }
            } else {
                n = n * 10 + d;
            }
        } else if (*i != '_' || i == s || i == e - 1 || i[-1] == '_') {
            return NAN;
        }
    }
    if (!big) n = (double)u;
    return neg ? -n : n;
}

static double radix_number(const uint8_t *s, const uint8_t *e, int bits) {
    if (s == e) return NAN;
    double n = 0;
    uint64_t u = 0;
    bool big = false;
    for (const uint8_t *i = s; i < e; i++) {
        int c = *i, d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
        else return NAN;
        if (d >= (1 << bits)) return NAN;
        if (!big && u < (1ull << (64 - bits))) {
            u = (u << bits) | (uint64_t)d;
            n = (double)u;
        } else {
            big = true;
            n = n * (double)(1 << bits) + d;
        }
    }
    return n;
}

double sw_js_number(const uint8_t *s, const uint8_t *e) {
    sw_js_trim(&s, &e);
    size_t n = (size_t)(e - s);
    if (n == 0) return 0;
    if (n > 2 && s[0] == '0') {
        int c = s[1] | 0x20;
        if (c == 'x') return radix_number(s + 2, e, 4);
        if (c == 'o') return radix_number(s + 2, e, 3);
        if (c == 'b') return radix_number(s + 2, e, 1);
    }
    const uint8_t *p = s;
    bool neg = false;
    if (*p == '+' || *p == '-') {
        neg = *p == '-';
        p++;
    }
    if ((size_t)(e - p) == 8 && memcmp(p, "Infinity", 8) == 0) return neg ? -INFINITY : INFINITY;
    /* StrDecimalLiteral: digits [. digits] | . digits, then [eE][+-]digits */
    const uint8_t *q = p;
    size_t ip = 0, fp = 0;
    while (q < e && *q >= '0' && *q <= '9') q++, ip++;
    if (q < e && *q == '.') {
        q++;
        while (q < e && *q >= '0' && *q <= '9') q++, fp++;
    }
    if (ip + fp == 0) return NAN;
    if (q < e && (*q | 0x20) == 'e') {
        q++;
        if (q < e && (*q == '+' || *q == '-')) q++;
        size_t ep = 0;
        while (q < e && *q >= '0' && *q <= '9') q++, ep++;
        if (ep == 0) return NAN;
    }
    if (q != e) return NAN;
    char stack_buf[128];
    char *buf = n < sizeof stack_buf ? stack_buf : malloc(n + 1);
    memcpy(buf, s, n);
    buf[n] = 0;
    double v = strtod(buf, NULL);
    if (buf != stack_buf) free(buf);
    return v;
}

int sw_js_num_str(double n, char *out) {
    if (isnan(n)) return sprintf(out, "NaN");
    if (isinf(n)) return sprintf(out, n < 0 ? "-Infinity" : "Infinity");
    if (n == 0) return sprintf(out, "0");
    if (n == trunc(n) && fabs(n) < 9007199254740992.0) return sprintf(out, "%lld", (long long)n);
    /* Shortest digits that read back as n, then ECMAScript's layout. */
    char e[40];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, fabs(n));
        if (strtod(e, NULL) == fabs(n)) break;
    }
    char digits[24];
    int k = 0;
    const char *c = e;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9') digits[k++] = *c;
    while (k > 1 && digits[k - 1] == '0') k--;
    int x = atoi(c + 1) + 1; /* the decimal point sits after x digits */
    char *o = out;
    if (n < 0) *o++ = '-';
    if (k <= x && x <= 21) {
        memcpy(o, digits, (size_t)k);
        o += k;
        for (int i = k; i < x; i++) *o++ = '0';
    } else if (0 < x && x <= 21) {
        memcpy(o, digits, (size_t)x);
        o += x;
        *o++ = '.';
        memcpy(o, digits + x, (size_t)(k - x));
        o += k - x;
    } else if (-6 < x && x <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -x; i++) *o++ = '0';
        memcpy(o, digits, (size_t)k);
        o += k;
    } else {
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += sprintf(o, "e%c%d", x - 1 >= 0 ? '+' : '-', abs(x - 1));
    }
    *o = 0;
    return (int)(o - out);
}

void sw_json_string(struct sw_bytes *out, const uint8_t *s, size_t n) {
    sw_bytes_reserve(out, n * 6 + 2);
    uint8_t *o = out->p + out->n;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            *o++ = c;
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '\b': *o++ = 'b'; break;
        case '\f': *o++ = 'f'; break;
        case '\n': *o++ = 'n'; break;
        case '\r': *o++ = 'r'; break;
        case '\t': *o++ = 't'; break;
        default:
            o += sprintf((char *)o, "u%04x", c);
        }
    }
    *o++ = '"';
    out->n = (size_t)(o - out->p);
}
