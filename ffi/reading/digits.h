/*
 * digits.h: up to eight ASCII digits read at once, for both native readers
 * of an event log (daemon/leak_scan.c, analysis/memory_row.c): nearly every
 * number of a log (an ID, a size, a timestamp's parts) is plain digits, and
 * a digit-by-digit loop over them was a tenth of a pass.
 */
#ifndef STOMPWATCH_DIGITS_H
#define STOMPWATCH_DIGITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Eight ASCII digits packed in v (the first in the low byte) as a number,
 * or -1 when one is not a digit (simdjson's check and its multiply-and-
 * shift combination). */
static inline int64_t sw_eight_digits(uint64_t v) {
    if (((v & 0xf0f0f0f0f0f0f0f0ull) | (((v + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) !=
        0x3333333333333333ull)
        return -1;
    v = ((v & 0x0f0f0f0f0f0f0f0full) * 2561) >> 8;
    v = ((v & 0x00ff00ff00ff00ffull) * 6553601) >> 16;
    return (int64_t)(((v & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32);
}

/* 1 to 8 digits at s, as a number or -1, where 8 bytes can be read at s (a
 * field of a mapped log, which has a page of zeros after its end, or of a
 * read buffer with slack): the digits are moved up and '0's put in front. */
static inline int64_t sw_few_digits(const uint8_t *s, size_t n) {
    uint64_t v;
    memcpy(&v, s, 8);
    if (n < 8) v = (v << (8 * (8 - n))) | (0x3030303030303030ull >> (8 * n));
    return sw_eight_digits(v);
}

/* Plain digits [s, e), 1 to 16 of them, below 2^53 (most numbers of a
 * log), their value into *out; false for any other text, which the
 * caller's general reading takes (past 2^53 its own rounding decides).
 * 8 bytes can be read at s and at s + 8, as for sw_few_digits. */
static inline bool sw_plain_digits(const uint8_t *s, const uint8_t *e, double *out) {
    static const int64_t POW10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    const size_t n = (size_t)(e - s);
    if (n == 0 || n > 16) return false;
    int64_t v;
    if (n <= 8) {
        v = sw_few_digits(s, n);
    } else {
        const int64_t hi = sw_few_digits(s, 8), lo = sw_few_digits(s + 8, n - 8);
        v = hi < 0 || lo < 0 ? -1 : hi * POW10[n - 8] + lo;
    }
    if (v < 0 || v >= (int64_t)(1ull << 53)) return false;
    *out = (double)v;
    return true;
}

#endif
