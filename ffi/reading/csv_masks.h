/*
 * csv_masks.h: the 64-byte step of both native framers of an event log
 * (daemon/csv_frame.c, analysis/csv_reader.c), as the WebAssembly scanner
 * takes it: which bytes are quotes, commas and newlines, and which lie
 * inside quotes (a prefix XOR of the quotes, as simdjson finds the bytes
 * inside strings).
 */
#ifndef STOMPWATCH_CSV_MASKS_H
#define STOMPWATCH_CSV_MASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

struct sw_csv_masks {
    uint64_t quote, comma, newline;
};

/* Whether this CPU takes the AVX2 step: asked once a framing. Its
 * framers also count bits with POPCNT and TZCNT (BMI1), which every AVX2
 * CPU has in practice; asked all the same. */
static inline bool sw_csv_avx2(void) {
#if defined(__x86_64__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("bmi");
#else
    return false;
#endif
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) static inline struct sw_csv_masks sw_csv_masks_avx2(const uint8_t *p) {
    const __m256i q = _mm256_set1_epi8('"'), c = _mm256_set1_epi8(','), nl = _mm256_set1_epi8('\n');
    __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
    struct sw_csv_masks m;
    m.quote = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, q)) |
              (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, q)) << 32;
    m.comma = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, c)) |
              (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, c)) << 32;
    m.newline = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl)) |
                (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl)) << 32;
    return m;
}
#endif

/* The masks of the n (at most 64) bytes at p; all 64 must be readable (a
 * mapped log has a page of zeros after it). */
static inline struct sw_csv_masks sw_csv_masks(const uint8_t *p, size_t n, bool avx2) {
    struct sw_csv_masks m = {0, 0, 0};
#if defined(__x86_64__)
    if (avx2) {
        m = sw_csv_masks_avx2(p);
    } else {
        const __m128i q = _mm_set1_epi8('"'), c = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n');
        for (int i = 0; i < 4; i++) {
            __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * i));
            m.quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, q)) << (16 * i);
            m.comma |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, c)) << (16 * i);
            m.newline |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl)) << (16 * i);
        }
    }
#else
    (void)avx2;
    for (int i = 0; i < 64; i++) {
        m.quote |= (uint64_t)(p[i] == '"') << i;
        m.comma |= (uint64_t)(p[i] == ',') << i;
        m.newline |= (uint64_t)(p[i] == '\n') << i;
    }
#endif
    if (n < 64) {
        uint64_t keep = (1ull << n) - 1;
        m.quote &= keep;
        m.comma &= keep;
        m.newline &= keep;
    }
    return m;
}

/* The bytes of the block inside quotes, given its quotes and `inq` (all
 * ones when the block before ended inside them), which it moves on. */
static inline uint64_t sw_csv_inside(uint64_t quote, uint64_t *inq) {
    uint64_t x = quote;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    uint64_t inside = x ^ *inq;
    *inq = (uint64_t)-(int64_t)(inside >> 63);
    return inside;
}

/* A block's separators and row ends: its commas and newlines outside
 * quotes (`inq` as for sw_csv_inside). */
struct sw_csv_block {
    uint64_t seps, ends;
};
static inline struct sw_csv_block sw_csv_block_of(struct sw_csv_masks k, uint64_t *inq) {
    const uint64_t inside = sw_csv_inside(k.quote, inq);
    return (struct sw_csv_block){k.comma & ~inside, k.newline & ~inside};
}

/* The block's next row end: its bit, the block's bits through it, and the
 * separators before it, which leave the block (the rest are the next
 * row's). Both framers take a row's separators at its end, at once: a
 * loop over separators and ends together mispredicted which each bit was. */
struct sw_csv_end {
    unsigned bit;
    uint64_t through, seps;
};
static inline struct sw_csv_end sw_csv_next_end(struct sw_csv_block *b) {
    struct sw_csv_end e;
    e.bit = (unsigned)__builtin_ctzll(b->ends);
    b->ends &= b->ends - 1;
    e.through = e.bit == 63 ? ~0ull : (2ull << e.bit) - 1;
    e.seps = b->seps & e.through;
    b->seps &= ~e.through;
    return e;
}

#endif
