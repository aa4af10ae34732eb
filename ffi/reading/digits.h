/*
 * digits.h: up to eight ASCII digits read at once, for both native readers
 * of an event log (daemon/leak_scan.c, analysis/memory_row.c): nearly every
 * number of a log (an ID, a size, a timestamp's parts) is plain digits, and
 * a digit-by-digit loop over them was a tenth of a pass.
 */
#ifndef STOMPWATCH_DIGITS_H
#define STOMPWATCH_DIGITS_H

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

#endif
