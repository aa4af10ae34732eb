/*
 * leak_replay.c: check_leaks' replay of one device's window (the rule of
 * analysis/leaks/_leak_rows.ts replayWindow, which calls this): the rows of
 * the window in ID order (file order among equal IDs), as msMemScope's
 * analyser walks them:
 * - a MALLOC with A <= ID <= B becomes pending; a later MALLOC with the same
 *   ID (next to it in this order) replaces it;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 * Which blocks stay pending is found per Ptr (mark_pending), in parts that
 * fit a core's cache.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pages.h"
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
 * Which MALLOCs stay pending, in the rule's terms per Ptr: a block stays
 * pending unless a FREE at its Ptr comes after it in (ID, row) order, or
 * the next MALLOC in that order takes its ID. The Ptrs never meet, so the
 * rows are first split by a hash of their Ptr into parts of a few thousand
 * (counted into place, keeping their order), and each part is walked from
 * its end with a small set of the Ptrs freed later: a table of every Ptr
 * of a window of a million rows was out of cache at every probe.
 */
struct part_row {
  double ptr;
  uint32_t k; /* position in `order` */
  uint32_t is_free;
};

/* Rows a part holds, about: its set of Ptrs then fits a core's cache. */
#define PART_ROWS 4096u

/* The set of Ptrs freed later in one part; a slot is in it when its
 * `part` is the part being walked, so that no part clears it. */
struct freed_slot {
  double key;
  uint32_t part; /* the part's number + 1; 0: never used */
  uint32_t pad;
};

static uint32_t part_of(double key, unsigned bits) { return bits ? mix(key) >> (32 - bits) : 0; }

/* Sets pending[k] for the MALLOCs at order[k] that stay pending; false
 * when memory is short. */
static bool mark_pending(const struct sw_leak_replay_args *a, const uint32_t *order, size_t n, uint8_t *pending) {
  unsigned bits = 0;
  while (bits < 16 && (n >> bits) > PART_ROWS) bits++;
  const size_t parts = (size_t)1 << bits;
  size_t *at = calloc(parts + 1, sizeof *at), *frees = calloc(parts, sizeof *frees);
  struct part_row *rows = malloc((n ? n : 1) * sizeof *rows);
  if (rows) sw_pages_prefer_huge(rows, n * sizeof *rows);
  struct freed_slot *set = NULL;
  bool ok = false;
  if (!at || !frees || !rows) goto done;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    uint32_t part = part_of(a->ptr[i], bits);
    at[part + 1]++;
    frees[part] += a->kind[i] != MALLOC;
  }
  size_t most_frees = 0;
  for (size_t p = 0; p < parts; p++) {
    at[p + 1] += at[p];
    if (frees[p] > most_frees) most_frees = frees[p];
  }
  size_t cap = 16;
  while (cap < 2 * most_frees) cap *= 2;
  set = calloc(cap, sizeof *set);
  if (!set) goto done;
  /* Into the parts, in order; a MALLOC whose ID the next MALLOC takes is
   * replaced, never pending. */
  int64_t last_malloc = -1;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    /* -0 and 0 are one Ptr key: mix hashes them alike, and == holds. */
    double key = a->ptr[i];
    bool is_free = a->kind[i] != MALLOC;
    if (!is_free) {
      if (last_malloc >= 0 && a->id[order[last_malloc]] == a->id[i]) pending[last_malloc] = 0;
      pending[k] = 1;
      last_malloc = (int64_t)k;
    }
    size_t part = part_of(key, bits);
    /* `at` ends as each part's end: its start is the part before's. */
    rows[at[part]++] = (struct part_row){.ptr = key, .k = (uint32_t)k, .is_free = is_free};
  }
  const size_t mask = cap - 1;
  for (size_t p = 0, from = 0; p < parts; from = at[p++]) {
    const uint32_t mine = (uint32_t)p + 1;
    for (size_t r = at[p]; r-- > from;) {
      const struct part_row *row = &rows[r];
      size_t slot = mix(row->ptr) & mask;
      while (set[slot].part == mine && set[slot].key != row->ptr) slot = (slot + 1) & mask;
      if (row->is_free) {
        set[slot].key = row->ptr;
        set[slot].part = mine;
      } else if (set[slot].part == mine) {
        pending[row->k] = 0;
      }
    }
  }
  ok = true;
done:
  free(at);
  free(frees);
  free(rows);
  free(set);
  return ok;
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
  uint8_t *pending = calloc(n ? n : 1, 1);
  int64_t result = -1;
  if (!pending || !mark_pending(a, order, n, pending)) goto done;
  result = 0;
  for (size_t k = 0; k < n; k++)
    if (pending[k]) a->out[result++] = order[k];
done:
  free(order);
  free(pending);
  return result;
}
