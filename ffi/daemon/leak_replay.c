/*
 * leak_replay.c: check_leaks' replay of one device's window (the rule of
 * analysis/leaks/_leak_rows.ts replayWindow, which calls this): the rows of
 * the window in ID order (file order among equal IDs), as msMemScope's
 * analyser walks them:
 * - a MALLOC with A <= ID <= B becomes pending; a later MALLOC with the same
 *   ID (next to it in this order) replaces it;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 * Pending blocks are chained per Ptr in an open-addressing table, so a FREE
 * walks only its own Ptr's chain; nothing is allocated per row.
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
  size_t n = 0, mallocs = 0;
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
    mallocs += is_malloc;
    if (x < prev) sorted = false;
    prev = x;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    order[n++] = (uint32_t)i;
  }
  /* (ID, row) pairs are all distinct: any sort gives the one order. */
  if (!sorted && !order_by_counting(order, n, a->id, lo, hi))
    qsort_r(order, n, sizeof *order, by_id_then_row, (void *)a->id);
  /* Only MALLOC rows add a Ptr: the table is sized for them. */
  size_t cap = 16;
  while (cap < mallocs * 2) cap *= 2;
  double *keys = malloc(cap * sizeof *keys);
  int32_t *head = malloc(cap * sizeof *head);
  uint8_t *used = calloc(cap, 1);
  int32_t *next = malloc((n ? n : 1) * sizeof *next);
  uint8_t *pending = calloc(n ? n : 1, 1);
  int64_t result = -1;
  if (!keys || !head || !used || !next || !pending) goto done;
  memset(head, 0xff, cap * sizeof *head);
  const size_t mask = cap - 1;
  int64_t last_malloc = -1;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k];
    double p = a->ptr[i];
    size_t s = mix(p) & mask;
    while (used[s] && keys[s] != p) s = (s + 1) & mask;
    if (a->kind[i] == MALLOC) {
      if (last_malloc >= 0 && a->id[order[last_malloc]] == a->id[i]) pending[last_malloc] = 0;
      last_malloc = (int64_t)k;
      if (!used[s]) {
        used[s] = 1;
        keys[s] = p;
      }
      pending[k] = 1;
      next[k] = head[s];
      head[s] = (int32_t)k;
    } else if (used[s]) {
      for (int32_t j = head[s]; j >= 0; j = next[j]) pending[j] = 0;
      head[s] = -1;
    }
  }
  result = 0;
  for (size_t k = 0; k < n; k++)
    if (pending[k]) a->out[result++] = order[k];
done:
  free(order);
  free(keys);
  free(head);
  free(used);
  free(next);
  free(pending);
  return result;
}
