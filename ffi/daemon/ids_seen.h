/*
 * ids_seen.h: whether a log's MALLOC IDs are each written once, as a
 * first pass of check_leaks reads them (leak_scan.c), for the replay as
 * the rows are read (leak_stream.c). msMemScope numbers its rows with one
 * counter, so each ID comes once; a replay that knows it keeps no ID for
 * a later MALLOC to take, and counts a block at a Ptr never freed as a
 * leak at once. Without it, a log written as msMemScope writes one (each
 * MALLOC row at its block's free), whose blocks are all freed at exit in
 * any order, held every block until the end: a 1.12 GB log of 3.3M such
 * blocks was read in parts, 4.49 s and 283 MB (1.66 s and 188 MB now).
 *
 * The IDs are bits from `base`, in words grown as IDs come, twice as many
 * each time (a log's IDs are near each other); an ID not a whole number
 * below 2^53, or IDs whose words would pass IDS_SEEN_MAX_WORDS (2^27 IDs,
 * 16 MiB; the room grown past the IDs counts, so IDs spread somewhat
 * less may too), say nothing: the replay then keeps IDs as before.
 */
#ifndef SW_IDS_SEEN_H
#define SW_IDS_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDS_SEEN_MAX_WORDS ((uint64_t)1 << 21)

/* An ID that is a whole number below 2^53 (msMemScope writes no other):
 * one a uint64_t holds exactly. */
static inline bool sw_id_whole(double id) { return id >= 0 && id < 9007199254740992.0 && (double)(uint64_t)id == id; }

/* Zeroed: no ID yet. */
struct ids_seen {
  uint64_t *bits;
  uint64_t base, words; /* base: the ID of bit 0, a multiple of 64 */
  /* Some ID may have come twice: one did, or the IDs said nothing. */
  bool maybe_twice;
};

/* A MALLOC with `id` read. */
void sw_ids_seen_add(struct ids_seen *s, double id);
/* Where the bit of `id` lies, to fetch ahead of sw_ids_seen_add; NULL
 * where there is none yet. */
static inline const uint64_t *sw_ids_seen_word(const struct ids_seen *s, double id) {
  if (!s->bits || !sw_id_whole(id)) return NULL;
  const uint64_t v = (uint64_t)id;
  return v >= s->base && v - s->base < 64 * s->words ? &s->bits[(v - s->base) / 64] : NULL;
}
/* `from`'s IDs (another part of the same file) added to `to`'s; `from`
 * freed. */
void sw_ids_seen_join(struct ids_seen *to, struct ids_seen *from);
/* Whether every ID added came once. */
static inline bool sw_ids_seen_once(const struct ids_seen *s) { return !s->maybe_twice; }
void sw_ids_seen_free(struct ids_seen *s);

#endif
