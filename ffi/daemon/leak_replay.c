/*
 * leak_replay.c: check_leaks' replay of each device's window (the rule of
 * analysis/leaks/_leak_rows.ts replayWindows, which calls this through
 * stompwatch_leak_replay_windows): the rows of the window in ID order (file
 * order among equal IDs), as msMemScope's analyser walks them:
 * - a MALLOC with A <= ID <= B becomes pending; a later MALLOC with the same
 *   ID (next to it in this order) replaces it;
 * - a FREE with A <= ID <= C clears every pending block at its Ptr.
 * Which blocks stay pending is found per Ptr (mark_pending), in parts that
 * fit a core's cache, on two threads for a large window.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leak_replay.h"
#include "pages.h"
#include "two_threads.h"
#include "sw_common.h"

enum { MALLOC = 1, FREE = 2 };

/* One device's window over the rows. */
struct sw_leak_replay_args {
  const uint8_t *kind;
  const uint32_t *device;
  const double *id, *ptr, *size;
  uint64_t rows;
  double a, b, c;
  uint32_t dev;
  uint32_t *out; /* room for `rows` indices */
  /* NULL: rows 0 .. rows - 1; else the `rows` rows to read, in file order
   * (a caller with many devices lists each one's rows once: reading every
   * row for each device took a 200-device window most of a second). */
  const uint32_t *only;
};

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
 * Counts order[0, n) into (ID, row) order at once, its IDs' distances from
 * the smallest below `range`; false when memory is short. Where the rows
 * come nearly in ID order, each row's count, then its place, lies near
 * the last one's in memory.
 */
static bool count_at_once(uint32_t *order, size_t n, const double *id, double lo, size_t range) {
  uint32_t *at = calloc(range + 1, sizeof *at);
  uint32_t *out = malloc((n ? n : 1) * sizeof *out);
  bool ok = at && out;
  if (ok) {
    for (size_t k = 0; k < n; k++) at[(size_t)(id[order[k]] - lo) + 1]++;
    for (size_t v = 1; v <= range; v++) at[v] += at[v - 1];
    /* order is in row order: equal IDs keep it. */
    for (size_t k = 0; k < n; k++) out[at[(size_t)(id[order[k]] - lo)]++] = order[k];
    memcpy(order, out, n * sizeof *out);
  }
  free(at);
  free(out);
  return ok;
}

/* Bits of an ID's distance from the smallest that count_in_buckets puts
 * in buckets by, at most: 4,096 buckets written at once, each a stream of
 * its own (more missed the TLB at each write). */
#define BUCKET_BITS 12
/* Bits of an ID's distance that are counted within a bucket, at least
 * (where the range is wider than the buckets take: the counts then fit a
 * core's cache). */
#define COUNTED_BITS 14

/*
 * Counts order[0, n) into (ID, row) order, its IDs' distances from the
 * smallest taking `bits` bits, bucket by bucket: rows put in buckets by
 * their distances' high bits, then each bucket's counted into place by the
 * low bits. False when memory is short. Where the rows come far out of ID
 * order (a log written as msMemScope writes one, each MALLOC row at its
 * block's free), counted at once each cost two cache misses: 2.5M rows in
 * 130-170 ms, 60-67 ms so.
 */
static bool count_in_buckets(uint32_t *order, size_t n, const double *id, double lo, int bits) {
  const int high = bits > COUNTED_BITS + BUCKET_BITS ? BUCKET_BITS : bits > COUNTED_BITS ? bits - COUNTED_BITS : 0;
  const int low = bits - high;
  const size_t buckets = (size_t)1 << high, counted = (size_t)1 << low;
  /* A row's distance's low bits beside its index, by bucket. */
  uint64_t *in_bucket = malloc((n ? n : 1) * sizeof *in_bucket);
  size_t *start = calloc(buckets + 1, sizeof *start);
  uint32_t *at = malloc((counted + 1) * sizeof *at);
  const bool ok = in_bucket && start && at;
  if (ok) {
    for (size_t k = 0; k < n; k++) start[((uint64_t)(id[order[k]] - lo) >> low) + 1]++;
    for (size_t b = 1; b <= buckets; b++) start[b] += start[b - 1];
    /* order is in row order: equal IDs keep it, here and in each bucket. */
    for (size_t k = 0; k < n; k++) {
      const uint64_t d = (uint64_t)(id[order[k]] - lo);
      in_bucket[start[d >> low]++] = (d & (counted - 1)) << 32 | order[k];
    }
    for (size_t b = 0, from = 0; b < buckets; from = start[b++]) {
      memset(at, 0, (counted + 1) * sizeof *at);
      for (size_t k = from; k < start[b]; k++) at[(in_bucket[k] >> 32) + 1]++;
      for (size_t v = 1; v <= counted; v++) at[v] += at[v - 1];
      for (size_t k = from; k < start[b]; k++) order[from + at[in_bucket[k] >> 32]++] = (uint32_t)in_bucket[k];
    }
  }
  free(in_bucket);
  free(start);
  free(at);
  return ok;
}

/*
 * Puts order[0, n) in (ID, row) order when the IDs are whole numbers
 * within a range at most 16 times the rows (work goes as the range), as a
 * log's IDs are (a counter, rows written out of turn): counted into place,
 * in row order among equal IDs. At once where the range is at most about
 * twice the rows and the IDs moved, row to row, `travel` in all, not much
 * further than from the smallest to the largest (a few rows written out of
 * turn); in buckets else. False when the IDs are not so, or memory is
 * short (the caller sorts).
 */
static bool order_by_counting(uint32_t *order, size_t n, const double *id, double lo, double hi, double travel) {
  const double span = hi - lo;
  if (!(lo >= 0 && span < 0x1p32 && span <= 16.0 * (double)n + 0x1p20)) return false;
  for (size_t k = 0; k < n; k++)
    if (id[order[k]] != __builtin_floor(id[order[k]])) return false;
  if (span <= 2.0 * (double)n + 1024 && travel <= 4 * span + (double)n)
    return count_at_once(order, n, id, lo, (size_t)span + 1);
  return count_in_buckets(order, n, id, lo, 64 - __builtin_clzll((uint64_t)span | 1));
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

/* Rows from which the work of mark_pending is split between two threads:
 * below, the second thread costs more than it saves. */
#define TWO_THREADS_ROWS 65536u

/* One thread's share of mark_pending: rows order[from, to) into the parts,
 * and the parts [part_from, part_to) walked. */
struct share {
  const struct sw_leak_replay_args *a;
  const uint32_t *order;
  size_t from, to;
  unsigned bits;
  size_t *count;     /* per part: its rows, then where the next goes */
  size_t most_frees; /* in any one part, of this share's rows */
  struct part_row *rows;
  uint8_t *pending;
  size_t part_from, part_to;
  size_t *at; /* part p's rows are rows[at[p], at[p + 1]) */
  bool ok;
};

/* Runs fn on the first share, and on the second when `two`
 * (sw_on_both). */
static void on_shares(void *(*fn)(void *), struct share *s, bool two) {
  if (two) sw_on_both(fn, &s[0], &s[1]);
  else fn(&s[0]);
}

/* Rows ahead whose Ptr, kind and ID are fetched: in ID order, a log whose
 * IDs come out of order has its rows all over the arrays. */
#define ROWS_AHEAD 16u

static inline void fetch_row(const struct share *s, size_t k) {
  if (k + ROWS_AHEAD >= s->to) return;
  const uint32_t i = s->order[k + ROWS_AHEAD];
  __builtin_prefetch(&s->a->ptr[i]);
  __builtin_prefetch(&s->a->kind[i]);
  __builtin_prefetch(&s->a->id[i]);
}

static void *count_rows(void *arg) {
  struct share *s = arg;
  size_t *frees = calloc(((size_t)1 << s->bits), sizeof *frees);
  if (!frees) return NULL;
  for (size_t k = s->from; k < s->to; k++) {
    fetch_row(s, k);
    uint32_t i = s->order[k];
    uint32_t part = part_of(s->a->ptr[i], s->bits);
    s->count[part]++;
    frees[part] += s->a->kind[i] != MALLOC;
  }
  for (size_t p = 0; p < ((size_t)1 << s->bits); p++)
    if (frees[p] > s->most_frees) s->most_frees = frees[p];
  free(frees);
  s->ok = true;
  return NULL;
}

/* Into the parts, in order; a MALLOC whose ID the next MALLOC takes is
 * replaced, never pending (across the shares' seam: mark_pending). */
static void *place_rows(void *arg) {
  struct share *s = arg;
  const struct sw_leak_replay_args *a = s->a;
  int64_t last_malloc = -1;
  for (size_t k = s->from; k < s->to; k++) {
    fetch_row(s, k);
    uint32_t i = s->order[k];
    /* -0 and 0 are one Ptr key: mix hashes them alike, and == holds. */
    double key = a->ptr[i];
    bool is_free = a->kind[i] != MALLOC;
    if (!is_free) {
      if (last_malloc >= 0 && a->id[s->order[last_malloc]] == a->id[i]) s->pending[last_malloc] = 0;
      s->pending[k] = 1;
      last_malloc = (int64_t)k;
    }
    s->rows[s->count[part_of(key, s->bits)]++] = (struct part_row){.ptr = key, .k = (uint32_t)k, .is_free = is_free};
  }
  return NULL;
}

/* Walks each part of the share from its end with the set of Ptrs freed
 * later in it. */
static void *walk_parts(void *arg) {
  struct share *s = arg;
  size_t cap = 16;
  while (cap < 2 * s->most_frees) cap *= 2;
  struct freed_slot *set = calloc(cap, sizeof *set);
  s->ok = set != NULL;
  if (!set) return NULL;
  const size_t mask = cap - 1;
  for (size_t p = s->part_from; p < s->part_to; p++) {
    const uint32_t mine = (uint32_t)p + 1;
    for (size_t r = s->at[p + 1]; r-- > s->at[p];) {
      const struct part_row *row = &s->rows[r];
      size_t slot = mix(row->ptr) & mask;
      while (set[slot].part == mine && set[slot].key != row->ptr) slot = (slot + 1) & mask;
      if (row->is_free) {
        set[slot].key = row->ptr;
        set[slot].part = mine;
      } else if (set[slot].part == mine) {
        s->pending[row->k] = 0;
      }
    }
  }
  free(set);
  return NULL;
}

/* Sets pending[k] for the MALLOCs at order[k] that stay pending; false
 * when memory is short. Rows are counted, placed and walked by two
 * threads on a large window, each placing its half of the rows behind the
 * other's in each part, so the parts keep their order. */
static bool mark_pending(const struct sw_leak_replay_args *a, const uint32_t *order, size_t n, uint8_t *pending) {
  unsigned bits = 0;
  while (bits < 16 && (n >> bits) > PART_ROWS) bits++;
  const size_t parts = (size_t)1 << bits;
  const size_t split = n >= TWO_THREADS_ROWS ? n / 2 : n;
  const bool two = split < n;
  size_t *at = calloc(parts + 1, sizeof *at);
  size_t *count[2] = {calloc(parts, sizeof(size_t)), calloc(parts, sizeof(size_t))};
  struct part_row *rows = malloc((n ? n : 1) * sizeof *rows);
  if (rows) sw_pages_prefer_huge(rows, n * sizeof *rows);
  bool ok = false;
  if (!at || !count[0] || !count[1] || !rows) goto done;
  struct share s[2];
  for (int t = 0; t < 2; t++)
    s[t] = (struct share){.a = a, .order = order, .from = t ? split : 0, .to = t ? n : split, .bits = bits,
                          .count = count[t], .rows = rows, .pending = pending, .at = at};
  on_shares(count_rows, s, two);
  if (!s[0].ok || (two && !s[1].ok)) goto done;
  /* Each part: the first share's rows, then the second's. */
  for (size_t p = 0; p < parts; p++) {
    at[p + 1] = at[p] + count[0][p] + count[1][p];
    count[0][p] = at[p];
    count[1][p] = at[p + 1] - count[1][p];
  }
  on_shares(place_rows, s, two);
  /* The seam: the first share's last MALLOC is replaced when the second's
   * first MALLOC takes its ID. */
  size_t last = split, next = split;
  while (last > 0 && a->kind[order[last - 1]] != MALLOC) last--;
  while (next < n && a->kind[order[next]] != MALLOC) next++;
  if (last > 0 && next < n && a->id[order[last - 1]] == a->id[order[next]]) pending[last - 1] = 0;
  /* A part's FREEs are at most the two shares' most each. */
  const size_t most_frees = s[0].most_frees + (two ? s[1].most_frees : 0);
  for (int t = 0; t < 2; t++) {
    s[t].most_frees = most_frees;
    s[t].ok = false;
    /* Half the parts each (the rows spread evenly over them by hash), or
     * all of them for one thread. */
    s[t].part_from = t ? parts / 2 : 0;
    s[t].part_to = t || !two ? parts : parts / 2;
  }
  on_shares(walk_parts, s, two);
  ok = s[0].ok && (!two || s[1].ok);
done:
  free(at);
  free(count[0]);
  free(count[1]);
  free(rows);
  return ok;
}

/*
 * Writes the indices of device a->dev's blocks still pending after its
 * window A, B, C into a->out, ordered by ID; returns how many, -1 when out
 * of memory, or -(2 + i) for row i, the first (in file order) MALLOC of the
 * window with no size, which msMemScope's analyser stops on.
 */
static int64_t replay_window(const struct sw_leak_replay_args *a) {
  const uint32_t *only = a->only;
  /* Room for every row: only the pages the window's rows fill are touched. */
  uint32_t *order = malloc((a->rows ? a->rows : 1) * sizeof *order);
  if (!order) return -1;
  size_t n = 0;
  bool sorted = true;
  double prev = -__builtin_inf(), lo = __builtin_inf(), hi = -__builtin_inf(), travel = 0;
  for (uint64_t j = 0; j < a->rows; j++) {
    const uint64_t i = only ? only[j] : j;
    if (a->device[i] != a->dev) continue;
    double x = a->id[i];
    bool is_malloc = a->kind[i] == MALLOC;
    if (x < a->a || x > (is_malloc ? a->b : a->c)) continue;
    if (is_malloc && a->size[i] != a->size[i]) {
      free(order);
      return -(int64_t)(2 + i);
    }
    if (x < prev) sorted = false;
    if (n) travel += __builtin_fabs(x - prev);
    prev = x;
    if (x < lo) lo = x;
    if (x > hi) hi = x;
    order[n++] = (uint32_t)i;
  }
  /* (ID, row) pairs are all distinct: any sort gives the one order. */
  if (!sorted && !order_by_counting(order, n, a->id, lo, hi, travel))
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

/* The devices' windows, taken in turn by two threads
 * (sw_leak_replay_devices). */
struct devices_job {
  const uint8_t *kind;
  const uint32_t *device;
  const double *id, *ptr, *size;
  uint64_t rows;
  const double *windows;
  uint32_t stride, devices;
  const uint32_t *listed; /* NULL: every row; else device k's are listed[start[k] .. start[k + 1]) */
  const uint64_t *start;
  uint32_t *out;
  int64_t *left;
  _Atomic uint32_t next;
};

static void *replay_devices(void *arg) {
  struct devices_job *j = arg;
  for (uint32_t k; (k = atomic_fetch_add(&j->next, 1)) < j->devices;) {
    const double *w = j->windows + (size_t)j->stride * k;
    j->left[k] = 0;
    if (w[0] != w[0]) continue; /* no window */
    const struct sw_leak_replay_args a = {
        .kind = j->kind, .device = j->device, .id = j->id, .ptr = j->ptr, .size = j->size,
        .rows = j->listed ? j->start[k + 1] - j->start[k] : j->rows, .a = w[0], .b = w[1], .c = w[2], .dev = k,
        .out = j->out + j->start[k], .only = j->listed ? j->listed + j->start[k] : NULL};
    j->left[k] = replay_window(&a);
  }
  return NULL;
}

bool sw_leak_replay_devices(const uint8_t *kind, const uint32_t *device, const double *id, const double *ptr,
                            const double *size, uint64_t rows, const double *windows, uint32_t stride,
                            uint32_t devices, uint32_t *out, uint64_t *start, int64_t *left) {
  uint32_t windowed = 0;
  for (uint32_t k = 0; k < devices; k++) windowed += windows[(size_t)stride * k] == windows[(size_t)stride * k];
  memset(start, 0, ((size_t)devices + 1) * sizeof *start);
  struct devices_job job = {.kind = kind, .device = device, .id = id, .ptr = ptr, .size = size, .rows = rows,
                            .windows = windows, .stride = stride, .devices = devices, .start = start, .out = out,
                            .left = left};
  if (windowed <= 1) {
    /* One window reads every row (its replay splits over two threads). */
    replay_devices(&job);
    return true;
  }
  /* Each device's rows listed once (a counting sort, stable), for its
   * window's replay alone: reading every row for each device's window
   * took a log of 64 devices seconds. */
  uint32_t *listed = malloc((rows ? rows : 1) * sizeof *listed);
  uint64_t *at = malloc(((size_t)devices + 1) * sizeof *at);
  if (!listed || !at) {
    free(listed);
    free(at);
    return false;
  }
  for (uint64_t i = 0; i < rows; i++)
    if (device[i] < devices) start[device[i] + 1]++;
  for (uint32_t k = 0; k < devices; k++) start[k + 1] += start[k];
  memcpy(at, start, ((size_t)devices + 1) * sizeof *at);
  for (uint64_t i = 0; i < rows; i++)
    if (device[i] < devices) listed[at[device[i]]++] = (uint32_t)i;
  free(at);
  job.listed = listed;
  sw_on_both(replay_devices, &job, &job);
  free(listed);
  return true;
}

/*
 * sw_leak_replay_devices for ffi/bindings.ts leakReplayWindows: device k's
 * window A, B, C at windows[3k] (A NaN: none), its leaks into `out` (room
 * for `rows`) from found[2k], their count (or replay_window's
 * error) in found[2k + 1]. A call a device from JavaScript, each on a
 * thread of Deno's, with the rows listed there, took 20-60 ms of a
 * 200-device log's check. Returns 0, or -1 when memory was short.
 */
SW_EXPORT int32_t stompwatch_leak_replay_windows(const uint8_t *kind, const uint32_t *device, const double *id,
                                                 const double *ptr, const double *size, double rows,
                                                 const double *windows, double devices, uint32_t *out, double *found) {
  const uint32_t n = (uint32_t)devices;
  uint64_t *start = malloc(((size_t)n + 1) * sizeof *start);
  int64_t *left = malloc(((size_t)n + 1) * sizeof *left);
  bool ok = start && left &&
            sw_leak_replay_devices(kind, device, id, ptr, size, (uint64_t)rows, windows, 3, n, out, start, left);
  for (uint32_t k = 0; ok && k < n; k++) {
    found[2 * k] = (double)start[k];
    found[2 * k + 1] = (double)left[k];
  }
  free(start);
  free(left);
  return ok ? 0 : -1;
}
