/*
 * leak_replay.c: check_leaks' replay of one device's window (the rule of
 * analysis/leaks/_leak_rows.ts replayWindow, which calls this): the rows of
 * the window in ID order (file order among equal IDs), as msMemScope's
 * analyser walks them:
 * - a MALLOC with A <= ID <= B becomes pending; a later MALLOC with the same
 *   ID (next to it in this order) replaces it;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 * Pending blocks are chained per Ptr in a table of the Ptrs with pending
 * blocks (struct live_ptrs), so a FREE walks only its own Ptr's chain;
 * nothing is allocated per row.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sw_common.h"

enum { MALLOC = 1, FREE = 2 };

/* Shared with ffi/bindings.ts leakReplay, field for field. */
struct sw_leak_replay_args {
  const uint8_t *kind;
  const uint32_t *device;
  const double *id, *ptr, *size;
  uint64_t rows;
  double a, b, c;
  uint32_t dev;
  uint32_t pad;
  uint32_t *out; /* room for `rows` indices */
};

_Static_assert(offsetof(struct sw_leak_replay_args, a) == 48, "layout");
_Static_assert(offsetof(struct sw_leak_replay_args, dev) == 72, "layout");
_Static_assert(offsetof(struct sw_leak_replay_args, out) == 80, "layout");

/* Rows are picked by index alone (4 bytes, their IDs read where they lie):
 * the replay's memory is fresh pages, and a page fault cost 2.5 us on a
 * virtual machine of ours. */
static int by_id_then_row(const void *x, const void *y, void *ids) {
  const double *id = ids;
  uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
  if (id[p] != id[q]) return id[p] < id[q] ? -1 : 1;
  return p < q ? -1 : p > q;
}

static uint32_t mix(double key) {
  uint64_t bits;
  if (key == 0) key = 0; /* -0 and 0 are one Ptr key */
  memcpy(&bits, &key, sizeof bits);
  bits ^= bits >> 33;
  bits *= 0xff51afd7ed558ccdULL;
  bits ^= bits >> 33;
  return (uint32_t)bits;
}

/*
 * Puts order[0, n) in (ID, row) order when the IDs are whole numbers within
 * a range not much wider than n, as a log's IDs are (a counter, a few rows
 * written out of turn): counted into place, in row order among equal IDs.
 * False when they are not, or memory is short (the caller sorts).
 */
static bool order_by_counting(uint32_t *order, size_t n, const double *id, double lo, double hi) {
  if (!(hi - lo <= 2.0 * (double)n + 1024)) return false;
  size_t range = (size_t)(hi - lo) + 1;
  for (size_t k = 0; k < n; k++)
    if (id[order[k]] != __builtin_floor(id[order[k]])) return false;
  uint32_t *at = calloc(range + 1, sizeof *at);
  uint32_t *out = malloc(n * sizeof *out);
  if (!at || !out) {
    free(at);
    free(out);
    return false;
  }
  for (size_t k = 0; k < n; k++) at[(size_t)(id[order[k]] - lo) + 1]++;
  for (size_t v = 1; v <= range; v++) at[v] += at[v - 1];
  /* order is in row order: equal IDs keep it. */
  for (size_t k = 0; k < n; k++) out[at[(size_t)(id[order[k]] - lo)]++] = order[k];
  memcpy(order, out, n * sizeof *out);
  free(at);
  free(out);
  return true;
}

/*
 * The Ptrs that have pending blocks, each with the chain of them (its
 * newest first): an open-addressing table, linear probing, whose slot is
 * emptied when a FREE clears its Ptr. Sized by the blocks alive at once,
 * not by every MALLOC of the window: on a window of a million unique Ptrs
 * a table of them all was out of cache at every probe.
 */
struct live_slot {
  double key;
  int32_t head; /* the newest pending block; -1: an empty slot */
  /* Whether the chain holds more than `head`: a FREE of a Ptr with one
   * block, the usual case, then need not read `next` (out of cache). */
  int32_t more;
};

/* How many rows ahead the replay asks for a row's slot. */
#define PREFETCH_AHEAD 32

struct live_ptrs {
  struct live_slot *slots;
  size_t mask, count;
};

static bool live_alloc(struct live_ptrs *t, size_t cap) {
  t->slots = malloc(cap * sizeof *t->slots);
  if (!t->slots) return false;
  for (size_t s = 0; s < cap; s++) t->slots[s].head = -1;
  t->mask = cap - 1;
  t->count = 0;
  return true;
}

static bool live_init(struct live_ptrs *t) { return live_alloc(t, 1024); }

/* The slot of `key`, or the empty slot where it would go. */
static struct live_slot *live_find(const struct live_ptrs *t, double key) {
  if (key == 0) key = 0; /* -0 and 0 are one Ptr key */
  size_t s = mix(key) & t->mask;
  while (t->slots[s].head >= 0 && t->slots[s].key != key) s = (s + 1) & t->mask;
  return &t->slots[s];
}

/* Asks for the home slot of `key` ahead of its row: a table of a million
 * live Ptrs is out of cache, and the probes of rows to come then overlap
 * instead of each waiting its turn. */
static inline void live_prefetch(const struct live_ptrs *t, double key) {
  __builtin_prefetch(&t->slots[mix(key) & t->mask]);
}

/* Fills the empty slot `at` with `key` (no chain yet); the slot, moved
 * when the table grew, or NULL when memory is short. */
static struct live_slot *live_add(struct live_ptrs *t, struct live_slot *at, double key) {
  if (key == 0) key = 0;
  at->key = key;
  at->head = INT32_MAX; /* taken: a chain is about to start */
  if (++t->count * 2 <= t->mask + 1) return at;
  struct live_ptrs old = *t;
  if (!live_alloc(t, (old.mask + 1) * 2)) {
    *t = old;
    return NULL;
  }
  struct live_slot *moved = NULL;
  for (size_t s = 0; s <= old.mask; s++) {
    if (old.slots[s].head < 0) continue;
    struct live_slot *to = live_find(t, old.slots[s].key);
    *to = old.slots[s];
    t->count++;
    if (&old.slots[s] == at) moved = to;
  }
  free(old.slots);
  return moved;
}

/* Empties `at`, moving back the slots after it that probed past it, so
 * that every key stays reachable from its home slot. */
static void live_remove(struct live_ptrs *t, struct live_slot *at) {
  size_t hole = (size_t)(at - t->slots);
  for (size_t s = (hole + 1) & t->mask; t->slots[s].head >= 0; s = (s + 1) & t->mask) {
    size_t home = mix(t->slots[s].key) & t->mask;
    /* Stays put when its home lies cyclically in (hole, s]. */
    bool stays = hole <= s ? home > hole && home <= s : home > hole || home <= s;
    if (stays) continue;
    t->slots[hole] = t->slots[s];
    hole = s;
  }
  t->slots[hole].head = -1;
  t->count--;
}

/*
 * Writes the indices of the blocks still pending after the window into
 * a->out, ordered by ID; returns how many, -1 when out of memory, or
 * -(2 + i) for row i, the first (in file order) MALLOC of the window with no
 * size, which msMemScope's analyser stops on.
 */
SW_EXPORT int64_t stompwatch_leak_replay(struct sw_leak_replay_args *a, const uint8_t *kind, const uint32_t *device,
                                         const double *id, const double *ptr, const double *size, uint32_t *out) {
  /* Arrays come as arguments: a grant of this library alone may pass them. */
  a->kind = kind;
  a->device = device;
  a->id = id;
  a->ptr = ptr;
  a->size = size;
  a->out = out;
  /* Room for every row: only the pages the window's rows fill are touched. */
  uint32_t *order = malloc((a->rows ? a->rows : 1) * sizeof *order);
  if (!order) return -1;
  size_t n = 0;
  bool sorted = true;
  double prev = -__builtin_inf(), lo = __builtin_inf(), hi = -__builtin_inf();
  for (uint64_t i = 0; i < a->rows; i++) {
    if (a->device[i] != a->dev) continue;
    double x = a->id[i];
    bool is_malloc = a->kind[i] == MALLOC;
    if (x < a->a || x > (is_malloc ? a->b : a->c)) continue;
    if (is_malloc && a->size[i] != a->size[i]) {
      free(order);
      return -(int64_t)(2 + i);
    }
    if (x < prev) sorted = false;
    prev = x;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    order[n++] = (uint32_t)i;
  }
  /* (ID, row) pairs are all distinct: any sort gives the one order. */
  if (!sorted && !order_by_counting(order, n, a->id, lo, hi))
    qsort_r(order, n, sizeof *order, by_id_then_row, (void *)a->id);
  /* Chains of pending blocks, by position in `order`. */
  int32_t *next = malloc((n ? n : 1) * sizeof *next);
  uint8_t *pending = calloc(n ? n : 1, 1);
  struct live_ptrs live = {0};
  int64_t result = -1;
  if (!next || !pending || !live_init(&live)) goto done;
  int64_t last_malloc = -1;
  for (size_t k = 0; k < n; k++) {
    if (k + PREFETCH_AHEAD < n) live_prefetch(&live, a->ptr[order[k + PREFETCH_AHEAD]]);
    uint32_t i = order[k];
    double p = a->ptr[i];
    struct live_slot *slot = live_find(&live, p);
    if (a->kind[i] == MALLOC) {
      if (last_malloc >= 0 && a->id[order[last_malloc]] == a->id[i]) pending[last_malloc] = 0;
      last_malloc = (int64_t)k;
      if (slot->head >= 0) {
        next[k] = slot->head;
        slot->more = 1;
      } else {
        slot = live_add(&live, slot, p);
        if (!slot) goto done;
        next[k] = -1;
        slot->more = 0;
      }
      pending[k] = 1;
      slot->head = (int32_t)k;
    } else if (slot->head >= 0) {
      pending[slot->head] = 0;
      if (slot->more)
        for (int32_t j = next[slot->head]; j >= 0; j = next[j]) pending[j] = 0;
      live_remove(&live, slot);
    }
  }
  result = 0;
  for (size_t k = 0; k < n; k++)
    if (pending[k]) a->out[result++] = order[k];
done:
  free(order);
  free(live.slots);
  free(next);
  free(pending);
  return result;
}
