/*
 * leak_freed.h: the Ptrs a log frees, as a first pass of check_leaks saw
 * them (leak_scan.c), for the replay as the rows are read (leak_stream.c).
 * A MALLOC whose Ptr no FREE of the window names can only be cleared by a
 * later MALLOC with its ID: the replay need not hold it as a pending block,
 * only count it once no such MALLOC can come. On a log whose window frees
 * nothing (every MALLOC a leak, 7M of them in 1 GB) the blocks held had
 * filled the replay's room again and again, and each split was a read of
 * the whole log: 9 reads, 6.9-8.1 s.
 *
 * A Bloom filter of two bits a Ptr, keyed by the Ptr alone (a device's
 * index differs between the halves of a first pass): a Ptr it does not
 * have was freed nowhere in the file past the marks' bounds; one it has
 * may have been (another device's, or two bits shared), and its blocks
 * are replayed as any other's. Its first word says whether the pass that
 * filled it saw every such FREE.
 */
#ifndef SW_LEAK_FREED_H
#define SW_LEAK_FREED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "leak_ptrs.h"

/* 2^27 bits, 16 MiB: on a 1 GB log of 3.5M FREEs, about 0.3% of the Ptrs
 * never freed look freed. Past some tens of millions of FREEs it says
 * "may have been" of nearly every Ptr, and the replay holds blocks as it
 * did without it. */
#define SW_LEAK_FREED_BITS_LOG2 27
/* The state word, then the bits. */
#define SW_LEAK_FREED_BYTES (8 + ((uint64_t)1 << SW_LEAK_FREED_BITS_LOG2) / 8)

/* The state word's values. */
enum {
  SW_FREED_UNKNOWN = 0, /* not filled: the pass kept every row, or did not finish */
  SW_FREED_COMPLETE = 1, /* every FREE past where the pass kept rows, and each of those */
  SW_FREED_UNREADABLE = 2, /* a FREE's Ptr could not be read: the filter says nothing */
};

/* The key a Ptr is filtered by: the replay's own mix, of no device. */
static inline uint64_t sw_leak_freed_key(double ptr) { return sw_leak_mix(ptr, 0); }

static inline uint64_t sw_leak_freed_bit(uint64_t key, int which) {
  return (key >> (which * SW_LEAK_FREED_BITS_LOG2)) & (((uint64_t)1 << SW_LEAK_FREED_BITS_LOG2) - 1);
}

/* Both threads of a first pass fill it: each bit set atomically. */
static inline void sw_leak_freed_add(uint64_t *filter, uint64_t key) {
  _Atomic uint64_t *bits = (_Atomic uint64_t *)(filter + 1);
  for (int which = 0; which < 2; which++) {
    const uint64_t bit = sw_leak_freed_bit(key, which);
    atomic_fetch_or_explicit(&bits[bit / 64], (uint64_t)1 << (bit % 64), memory_order_relaxed);
  }
}

/* False where no FREE named the Ptr whose key this is. */
static inline bool sw_leak_freed_may_have(const uint64_t *filter, uint64_t key) {
  const uint64_t *bits = filter + 1;
  bool all = true;
  for (int which = 0; which < 2; which++) {
    const uint64_t bit = sw_leak_freed_bit(key, which);
    all = all && (bits[bit / 64] >> (bit % 64) & 1);
  }
  return all;
}

/* The state word, set once the pass is over or a Ptr was unreadable. */
static inline void sw_leak_freed_state(uint64_t *filter, uint64_t state) {
  atomic_store_explicit((_Atomic uint64_t *)filter, state, memory_order_relaxed);
}
static inline uint64_t sw_leak_freed_state_of(const uint64_t *filter) {
  return atomic_load_explicit((_Atomic const uint64_t *)filter, memory_order_relaxed);
}

#endif
