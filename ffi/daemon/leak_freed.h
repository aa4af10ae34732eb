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
 * filled it saw every such FREE. Each thread of a pass fills a filter of
 * its own, with plain stores (an atomic OR a FREE, on a cache line not in
 * the cache, cost a 1 GB log tens of ms), and the second's is merged into
 * the first's once both are done (sw_leak_freed_merge).
 */
#ifndef SW_LEAK_FREED_H
#define SW_LEAK_FREED_H

#include <stdbool.h>
#include <stdint.h>

#include "leak_ptrs.h"

/* 2^19 groups of Ptrs, each 16 bytes in one cache line: a word of bits,
 * two of them a Ptr's (one load, one cache miss a lookup: two bits
 * anywhere made a tenth of a replay's time on a log whose every block is
 * freed), and the smallest FREE ID of the group, so that a Ptr whose FREEs
 * all come past C (a job that frees its blocks only at exit, after its last
 * mark: its 1.13 GB log took 3.5 s, the bits alone saying "freed" of each;
 * 1.1 s with the ID) counts as never freed in that window. On a 1 GB log of
 * 3.5M FREEs, 13 bits of a word are set on average, and about 4% of the
 * Ptrs never freed look freed (held as other blocks are). Past some tens of
 * millions of FREEs it says "may have been" of nearly every Ptr, and the
 * replay holds blocks as it did without it. 8 MiB: a thread of a first
 * pass fills one of its own. */
#define SW_LEAK_FREED_GROUPS_LOG2 19
/* The state word and one unused, then the groups (a group lies in one
 * line of a filter aligned to 16 bytes), then the MALLOCs to come. */
#define SW_LEAK_MALLOCS_AT (8 * (2 + 2 * ((uint64_t)1 << SW_LEAK_FREED_GROUPS_LOG2)))
/*
 * The MALLOC rows past where a first pass stopped keeping rows, counted
 * by their Ptr's share of 2^22 bytes (the top bits of its key), up to 255
 * (then for good): what a replay that reads on from there has still to
 * read, counting down as it reads them. A FREE whose Ptr's count is down
 * to 0 need not be remembered: no MALLOC it could clear is still to come.
 * On a log written as msMemScope writes one (each MALLOC row just before
 * its block's FREE, a long-lived block's far back) the replay remembered
 * every FREE of the window, a Ptr each, past its room: a 1 GB log was
 * read twice more. 4 MiB: a thread of a first pass fills one of its own.
 */
#define SW_LEAK_MALLOCS_LOG2 22
#define SW_LEAK_FREED_BYTES (SW_LEAK_MALLOCS_AT + ((uint64_t)1 << SW_LEAK_MALLOCS_LOG2))

/* The state word's values. */
enum {
  SW_FREED_UNKNOWN = 0, /* not filled: the pass kept every row, or did not finish */
  SW_FREED_COMPLETE = 1, /* every FREE past where the pass kept rows, and each of those */
  SW_FREED_UNREADABLE = 2, /* a FREE's Ptr could not be read: the filter says nothing */
};

/* The key a Ptr is filtered by: the replay's own mix, of no device. */
static inline uint64_t sw_leak_freed_key(double ptr) { return sw_leak_mix(ptr, 0); }

/* The bits word of the group of `key`; the next word is its smallest FREE
 * ID: 0 for none, else the ID's order (sw_leak_id_order) inverted, so that
 * the smallest ID is the largest word and untouched pages say "none". */
static inline uint64_t sw_leak_freed_group(uint64_t key) {
  return 2 + 2 * (key & (((uint64_t)1 << SW_LEAK_FREED_GROUPS_LOG2) - 1));
}

/* The two bits of `key` in its group's word. */
static inline uint64_t sw_leak_freed_bits(uint64_t key) {
  return (uint64_t)1 << (key >> SW_LEAK_FREED_GROUPS_LOG2 & 63) |
         (uint64_t)1 << (key >> (SW_LEAK_FREED_GROUPS_LOG2 + 6) & 63);
}

/* A FREE with `id` at the Ptr of `key`, added by the one thread that fills
 * the filter. */
static inline void sw_leak_freed_add(uint64_t *filter, uint64_t key, double id) {
  uint64_t *group = &filter[sw_leak_freed_group(key)];
  group[0] |= sw_leak_freed_bits(key);
  const uint64_t first = ~sw_leak_id_order(id);
  if (first > group[1]) group[1] = first;
}

/* False where no FREE with an ID up to `c` named the Ptr whose key this
 * is. */
static inline bool sw_leak_freed_may_have(const uint64_t *filter, uint64_t key, double c) {
  const uint64_t *group = &filter[sw_leak_freed_group(key)];
  const uint64_t bits = sw_leak_freed_bits(key);
  return (group[0] & bits) == bits && ~group[1] <= sw_leak_id_order(c);
}

/* Where what `key` looks up lies (16 bytes, in one line): fetched ahead. */
static inline const uint64_t *sw_leak_freed_at(const uint64_t *filter, uint64_t key) {
  return &filter[sw_leak_freed_group(key)];
}

/* The state word, set once the pass is over or a Ptr was unreadable. */
static inline void sw_leak_freed_state(uint64_t *filter, uint64_t state) { filter[0] = state; }
static inline uint64_t sw_leak_freed_state_of(const uint64_t *filter) { return filter[0]; }

/* The MALLOCs to come of a filter. */
static inline uint8_t *sw_leak_mallocs(uint64_t *filter) { return (uint8_t *)filter + SW_LEAK_MALLOCS_AT; }

/* Where the MALLOCs to come at the Ptr of `key` are counted. */
static inline uint32_t sw_leak_mallocs_slot(uint64_t key) { return (uint32_t)(key >> (64 - SW_LEAK_MALLOCS_LOG2)); }

/* One more MALLOC to come in `slot`. */
static inline void sw_leak_mallocs_add(uint8_t *mallocs, uint32_t slot) { mallocs[slot] += mallocs[slot] != 255; }

/* One MALLOC to come in `slot` read (counted, so never at 0: the replay
 * checks, leak_stream.c). */
static inline void sw_leak_mallocs_take(uint8_t *mallocs, uint32_t slot) { mallocs[slot] -= mallocs[slot] != 255; }

/* The MALLOCs to come of `from` (another thread's, done) added to `to`'s. */
static inline void sw_leak_mallocs_merge(uint64_t *to, uint64_t *from) {
  uint8_t *t = sw_leak_mallocs(to);
  const uint8_t *f = sw_leak_mallocs(from);
  for (uint32_t i = 0; i < (UINT32_C(1) << SW_LEAK_MALLOCS_LOG2); i++) {
    const unsigned sum = (unsigned)t[i] + f[i];
    t[i] = (uint8_t)(sum < 255 ? sum : 255);
  }
}

/* The Ptrs of `from` (another thread's, done) added to `to`'s; an
 * unreadable Ptr in either makes both say nothing. */
static inline void sw_leak_freed_merge(uint64_t *to, const uint64_t *from) {
  if (from[0] == SW_FREED_UNREADABLE) to[0] = SW_FREED_UNREADABLE;
  if (to[0] == SW_FREED_UNREADABLE) return;
  for (uint64_t i = 2; i < SW_LEAK_MALLOCS_AT / 8; i += 2) {
    to[i] |= from[i];
    if (from[i + 1] > to[i + 1]) to[i + 1] = from[i + 1];
  }
}

#endif
