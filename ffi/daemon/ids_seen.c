/*
 * ids_seen.c: see ids_seen.h.
 */
#include "ids_seen.h"

#include <stdlib.h>
#include <string.h>

void sw_ids_seen_free(struct ids_seen *s) {
  free(s->bits);
  s->bits = NULL;
  s->words = 0;
}

/* From here on, every ID may have come twice. */
static void says_nothing(struct ids_seen *s) {
  sw_ids_seen_free(s);
  s->maybe_twice = true;
}

/* Room for the word of ID `v`: twice as many words (1,024 at first), the
 * old ones where they were (growing down, below them as much room as
 * above); false past IDS_SEEN_MAX_WORDS, or when memory is short. */
static bool grown(struct ids_seen *s, uint64_t v) {
  const uint64_t at = v / 64, old_lo = s->base / 64, old_hi = old_lo + s->words;
  const uint64_t lo = s->bits && old_lo < at ? old_lo : at, hi = s->bits && old_hi > at + 1 ? old_hi : at + 1;
  uint64_t words = s->words ? 2 * s->words : 1024;
  while (words < hi - lo) words *= 2;
  if (hi - lo > IDS_SEEN_MAX_WORDS) return false;
  if (words > IDS_SEEN_MAX_WORDS) words = IDS_SEEN_MAX_WORDS;
  /* The new IDs came below: room below them; else above. */
  const uint64_t base = s->bits && at < old_lo ? (hi > words ? hi - words : 0) : lo;
  uint64_t *bits = calloc(words, sizeof *bits);
  if (!bits) return false;
  if (s->bits) memcpy(bits + (old_lo - base), s->bits, s->words * sizeof *bits);
  free(s->bits);
  s->bits = bits;
  s->base = base * 64;
  s->words = words;
  return true;
}

/* Whether `s` has the word of ID `v`, or can be grown to. */
static bool covers(struct ids_seen *s, uint64_t v) {
  return (s->bits && v >= s->base && v - s->base < 64 * s->words) || grown(s, v);
}

void sw_ids_seen_add(struct ids_seen *s, double id) {
  if (s->maybe_twice) return;
  if (!sw_id_whole(id) || !covers(s, (uint64_t)id)) {
    says_nothing(s);
    return;
  }
  const uint64_t v = (uint64_t)id;
  uint64_t *word = &s->bits[(v - s->base) / 64];
  const uint64_t bit = UINT64_C(1) << ((v - s->base) % 64);
  if (*word & bit) says_nothing(s);
  else *word |= bit;
}

void sw_ids_seen_join(struct ids_seen *to, struct ids_seen *from) {
  if (from->maybe_twice) says_nothing(to);
  if (!to->maybe_twice && from->bits) {
    /* Both ends of from's words in to's, then word by word. */
    const uint64_t top = from->base + 64 * from->words - 1;
    if (!(covers(to, from->base) && covers(to, top))) says_nothing(to);
    for (uint64_t w = 0; !to->maybe_twice && w < from->words; w++) {
      uint64_t *word = &to->bits[(from->base - to->base) / 64 + w];
      if (*word & from->bits[w]) says_nothing(to);
      else *word |= from->bits[w];
    }
  }
  sw_ids_seen_free(from);
}
