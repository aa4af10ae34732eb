/*
 * leak_scan.c: check_leaks' first pass over an event log, natively. The
 * TypeScript pass (analysis/leaks/_first_pass.ts) hands every row of the log
 * to JavaScript, since any row can name a device; at a million rows that,
 * not the disk, set the pace. This pass frames the rows 64 bytes at a time
 * (quote and newline masks, as analysis/memscope_csv/_scan.wat does), reads
 * the few fields the pass needs and keeps exactly what the TypeScript pass
 * keeps, into arrays the caller owns.
 *
 * It takes the plain case only: whatever it cannot read with certainty of
 * giving the same answer (a Ptr that is neither 0x%016x nor plain decimal,
 * a needed column past the twelfth, text that is not ASCII where it is
 * compared, a row over 1 MiB, more rows than room) makes it answer
 * SW_LEAK_FALLBACK, and the caller runs the TypeScript pass instead, which
 * says what is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csv_frame.h"
#include "digits.h"
#include "ids_seen.h"
#include "leak_freed.h"
#include "leak_replay.h"
#include "leak_stream.h"
#include "pages.h"
#include "row_start.h"
#include "sw_common.h"

enum { SW_LEAK_DONE = SW_SCAN_DONE, SW_LEAK_FALLBACK = SW_SCAN_FALLBACK };

/* Columns the pass reads, as indices into sw_leak_scan_args.col. */
enum { C_ID, C_EVENT, C_TYPE, C_NAME, C_DEVICE, C_PTR, C_ATTR, C_COUNT };

/* PtrKeys' keys of an empty Ptr and of N/A (in no other key's range). */
#define KEY_EMPTY_PTR (-0.125)
#define KEY_NA_PTR (-0.25)

/* sw_leak_scan_args.room_full's bits: what ran out of room. */
enum { ROOM_MARKS = 1, ROOM_ROWS = 2 };

#define MAX_DEVICES SW_LEAK_MAX_DEVICES
/* Device Ids below this, written as plain numbers, are found by value. */
#define SMALL_DEVICE_IDS 1000
#define DEVICE_BYTES 64

/* Shared with ffi/bindings.ts leakScan, field for field. */
struct sw_leak_scan_args {
  int32_t fd;
  int32_t col[C_COUNT];
  uint32_t first_line;  /* line number of the first data row */
  uint64_t offset;      /* where the first data row starts */
  /* Rows kept: room for `cap` rows; once `cap` >= `budget` is reached no
   * more are kept (the TypeScript pass's budget), below it: fallback. */
  uint8_t *kind;
  uint32_t *device;
  double *id, *ptr, *size, *row_offset;
  uint32_t *line;
  uint64_t cap, budget;
  /* Marks named mstx_info, in file order. */
  uint32_t *mark_device;
  double *mark_id;
  uint64_t mark_cap;
  /* What to match, as the log spells it (the event type ASCII, the mark's
   * name ASCII where it holds a quote). */
  const uint8_t *event_type;
  uint32_t event_type_len;
  const uint8_t *mstx;
  uint32_t mstx_len;
  uint32_t mstx_has_quote;
  /* Out: counts, the devices (each DEVICE_BYTES, NUL-padded), errno. */
  uint64_t rows_kept, marks, data_rows, bytes;
  uint32_t overflow, devices;
  /* A pass after the first, once the windows are known: the rows kept are
   * those of the first `window_devices` devices inside their window (A..B
   * for MALLOC, A..C for FREE): WINDOW_VALUES of `windows` for each, its
   * A, B and C (NaN: none), then its disorder (struct span), then 1 where
   * the first pass saw each MALLOC ID once (ids_seen.h).
   * Such a pass is given the first pass's devices in (`devices`, and their
   * names), so that each keeps its index. */
  uint32_t window_devices;
  /* A first pass: startIndex + 3, the marks of a device that make its
   * window, at most MAX_BOUND_MARKS (0: every memory row is kept). See
   * struct bounds. */
  uint32_t bound_marks;
  const double *windows;
  /* Rows starting here or later are not read (0: to the end): a later
   * pass reads the file as far as the first did, however it grew since. */
  uint64_t end;
  /* Out: MALLOC rows kept whose ID is not written as the number's own
   * digits (a leading zero, a sign, blanks, `_`, over 15 digits; the
   * second half's counted before its join drops any). While none is,
   * every kept row's ID and Ptr can be printed from the arrays
   * (_leak_rows.ts PtrKeys.text) without reading the row back. */
  uint64_t odd_ids;
  /* Out: 2 when a second thread read the second half of the rows (its
   * rows joined to the first's), else 1. */
  uint64_t halves;
  uint8_t device_names[MAX_DEVICES * DEVICE_BYTES];
  /* A window pass that replays the windows as it reads (leak_stream.c)
   * instead of keeping their rows: what it keeps is the leaks. It ends
   * with SW_LEAK_FALLBACK where the replay cannot go on. */
  uint32_t stream;
  /* Out: ROOM_MARKS when the marks passed mark_cap, ROOM_ROWS when the
   * rows kept passed `cap` below the budget; either alone made the pass
   * fall back: the caller, having given little room, may give more and
   * run it again (room for every row that could be a mark, or a memory
   * row, is address space several times the log's size, which V8 answers
   * with collections). */
  uint32_t room_full;
  /* Out, with `overflow`: where the rows kept end. Every memory row before
   * `resume_offset` (on line `resume_line`) that a window may hold is among
   * them, and none from there on; 0: the rows kept are no such prefix of
   * the file's. */
  uint64_t resume_offset;
  uint32_t resume_line;
  /* Out, with SW_SCAN_TOO_LONG: the line of the row that runs on. */
  uint32_t too_long_line;
  /* A streaming pass that reads on from a first pass's resume_offset (its
   * `offset` and `first_line`): the first `resume_rows` rows of the arrays
   * are that pass's rows, replayed before it reads (stream_pass). */
  uint64_t resume_rows;
  /* Where a split pass's halves meet in the arrays (0: no split): the
   * first half keeps up to `half_at` rows below it, the last first (turned
   * round at the join), the second up to cap - half_at from it on, so that
   * joined they lie in file order with no copy (copying the second half's
   * rows out of arrays of its own wrote every one of them to fresh pages
   * twice). A pass that does not split, or whose halves are joined, keeps
   * rows as far as the arrays go, within the budget (room_from_base). */
  uint64_t half_at;
  /* Out: where the rows kept begin in the arrays. */
  uint64_t first_row;
  /* A streaming pass that replays the blocks of part `stream_part` of
   * `stream_parts` alone (0 or 1: all; more reads from the start), and at
   * its room splits its part while there are at most `stream_split` parts
   * (sw_leak_stream_split). Out: `stream_parts`, how many parts there are
   * by then (its part is `stream_part` of them); `stream_full`, 1 when it
   * fell back at its room (more parts may fit). */
  uint32_t stream_part, stream_parts, stream_full, stream_split;
  /* The Ptrs freed (leak_freed.h), `freed_bytes` long (less than
   * SW_LEAK_FREED_BYTES: none): a first pass that stops keeping rows
   * fills it, a streaming pass counts the blocks at Ptrs it does not have
   * once their IDs can come no more, listing only the first `max_listed`
   * of them (by device and ID) and counting the others into `unlisted`:
   * for each device, how many, and their bytes' low and high 64 bits. */
  uint64_t freed_bytes, max_listed;
  uint64_t *freed, *unlisted;
};

/* The arrays of the rows kept, a column each: whatever moves, copies or
 * advises whole rows goes over every one of them. */
#define ROW_COLUMNS(X) X(kind) X(device) X(id) X(ptr) X(size) X(row_offset) X(line)

/* ffi/bindings.ts leakScan writes and reads these offsets. */
_Static_assert(offsetof(struct sw_leak_scan_args, offset) == 40, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, kind) == 48, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, cap) == 104, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, mark_device) == 120, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, event_type) == 144, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, mstx) == 160, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, rows_kept) == 176, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, overflow) == 208, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, window_devices) == 216, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, bound_marks) == 220, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, end) == 232, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, odd_ids) == 240, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, halves) == 248, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, device_names) == 256, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, stream) == 256 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, resume_offset) == 264 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, resume_rows) == 280 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, half_at) == 288 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, stream_part) == 304 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, freed_bytes) == 320 + MAX_DEVICES * DEVICE_BYTES, "layout");
_Static_assert(sizeof(struct sw_leak_scan_args) == 352 + MAX_DEVICES * DEVICE_BYTES, "layout");

/* Hex digit values of lowercase hex, 16 (never a digit) for anything else. */
static const uint8_t HEX[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* The value of the lowercase hex digits [p, e) into *v; false when one is
 * not such a digit. Table values are digit + 1, 0 for anything else. */
static inline bool hex_value(const uint8_t *p, const uint8_t *e, uint64_t *v) {
  uint64_t n = 0;
  unsigned bad = 0;
  for (; p < e; p++) {
    unsigned d = HEX[*p];
    bad |= d == 0;
    n = n << 4 | (uint64_t)((d - 1) & 15);
  }
  *v = n;
  return !bad;
}

/* The value of 8 lowercase hex digits at s (the first the highest) into
 * *v; false when one is not such a digit. All 8 at once: the table's digit
 * by digit loop cost about 15 instructions a digit, and every kept row's
 * Ptr has 16. */
static inline bool hex8_value(const uint8_t *s, uint32_t *v) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t x;
  memcpy(&x, s, 8);
  /* Below 0x80 each byte, so no sum below carries into the next byte: the
   * high bit of x + (0x80 - lo) says >= lo, of x + (0x7f - hi) says > hi. */
  const uint64_t digit = (x + (0x80 - '0') * ones) & ~(x + (0x7f - '9') * ones);
  const uint64_t letter = (x + (0x80 - 'a') * ones) & ~(x + (0x7f - 'f') * ones);
  if ((x & high) || ((digit | letter) & high) != high) return false;
  /* '0'-'9' are 0x30-0x39, 'a'-'f' 0x61-0x66: the low four bits, plus 9
   * where bit 6 says a letter. */
  uint64_t t = (x & 0x0f0f0f0f0f0f0f0full) + 9 * (x >> 6 & ones);
  t = (t << 4 | t >> 8) & 0x00ff00ff00ff00ffull;        /* byte pairs */
  t = (t << 8 | t >> 16) & 0x0000ffff0000ffffull;       /* then 16-bit pairs */
  *v = (uint32_t)(t << 16 | t >> 32);
  return true;
}

/*
 * PtrKeys.of's other hex spellings, [s, e) being `0x` or `0X` and more:
 * 16 digits, or 1 to 13 without a leading zero, their letters all of one
 * case, written by another prefix or case than msMemScope's (a C writer's
 * `%#lX`, a Python one's `0x{:X}`). Below 2^50 each spelling has its own
 * eighth: value + 1/2 short, + 1/8 after `0X`, + 1/4 in capitals; the two
 * spellings ptr_key takes first are the eighths 0 and 4. Else false: the
 * text is its own key, which only the TypeScript pass gives.
 */
static bool ptr_key_spelled(const uint8_t *s, const uint8_t *e, double *key) {
  const uint8_t *d = s + 2;
  const size_t n = (size_t)(e - d);
  const bool is_short = n != 16;
  if (is_short && (n > 13 || (d[0] == '0' && n > 1))) return false;
  uint64_t v = 0;
  bool lower = false, upper = false;
  for (const uint8_t *p = d; p < e; p++) {
    const unsigned c = *p;
    unsigned digit;
    if (c - '0' <= 9) {
      digit = c - '0';
    } else if (c - 'a' <= 5) {
      digit = c - 'a' + 10;
      lower = true;
    } else if (c - 'A' <= 5) {
      digit = c - 'A' + 10;
      upper = true;
    } else {
      return false;
    }
    v = v << 4 | digit;
  }
  const bool capital_x = s[1] == 'X';
  /* msMemScope's spellings past ptr_key's ranges keep their own rule. */
  if ((lower && upper) || (!capital_x && !upper) || v >> 50) return false;
  *key = (double)v + (is_short ? 0.5 : 0) + (capital_x ? 0.125 : 0) + (upper ? 0.25 : 0);
  return true;
}

/* _leak_rows.ts PtrKeys.of for the spellings it keys by value; false for
 * any other (the caller falls back). */
static bool ptr_key(const struct sw_csv_field *f, double *key) {
  if (!f->present) return false;
  const uint8_t *s = f->s, *e = f->e;
  /* The two texts that are no address, each a key of its own. */
  if (e == s || (e - s == 3 && memcmp(s, "N/A", 3) == 0)) {
    *key = e == s ? KEY_EMPTY_PTR : KEY_NA_PTR;
    return true;
  }
  uint64_t v;
  /* Python's hex(): 1 to 13 digits, no leading zero but in 0x0; value + 0.5. */
  if (e - s >= 3 && e - s <= 15 && s[0] == '0' && s[1] == 'x' && !(s[2] == '0' && e - s > 3)) {
    if (hex_value(s + 2, e, &v)) {
      *key = (double)v + 0.5;
      return true;
    }
  }
  /* msMemScope's own: 16 digits (a constant count, for the loop to unroll). */
  uint32_t hi, lo;
  if (e - s == 18 && s[0] == '0' && s[1] == 'x' && hex8_value(s + 2, &hi) && hex8_value(s + 10, &lo) && hi <= 0x1fffff) {
    *key = (double)((uint64_t)hi << 32 | lo);
    return true;
  }
  if (e - s >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return ptr_key_spelled(s, e, key);
  /* ptrDecimal: 1 to 16 digits (an empty Ptr is keyed above), no leading
   * zero, at most 2^53 - 1. */
  if (e - s > 16 || (s[0] == '0' && e - s > 1)) return false;
  double n = 0;
  for (const uint8_t *p = s; p < e; p++) {
    unsigned d = (unsigned)(*p - '0');
    if (d > 9) return false;
    n = n * 10 + d;
  }
  if (n > 9007199254740991.0) return false;
  *key = -(n + 1);
  return true;
}

/* Whether an ID field is the digits String(id) gives back: 1 to 15 digits,
 * no leading zero (sw_csv_parse_decimal reads them exactly). */
static bool plain_id(const struct sw_csv_field *f) {
  size_t n = (size_t)(f->e - f->s);
  if (n == 0 || n > 15 || (f->s[0] == '0' && n > 1)) return false;
  for (const uint8_t *p = f->s; p < f->e; p++)
    if ((unsigned)(*p - '0') > 9) return false;
  return true;
}

/* MemscopeRow.mallocSize: the digits after the first "size:" that has
 * some, NAN without. */
static double malloc_size(const struct sw_csv_field *f) {
  if (!f->present) return __builtin_nan("");
  const uint8_t *s = f->s, *e = f->e;
  for (const uint8_t *p = s; p + 5 < e; p++) {
    p = memchr(p, 's', (size_t)(e - 5 - p));
    if (p == NULL) break;
    if (p[1] != 'i' || p[2] != 'z' || p[3] != 'e' || p[4] != ':') continue;
    const uint8_t *q = p + 5;
    while (q < e && *q >= '0' && *q <= '9') q++;
    if (q == p + 5) continue;
    double n;
    if (sw_plain_digits(p + 5, q, &n)) return n;
    n = sw_csv_digits_value(p + 5, q);
    if (n <= 9007199254740991.0) return n;
    /* Past 2^53 each step above rounds: read the digits whole, as Number()
     * does. Past leading zeros, 400 digits are beyond any double. */
    const uint8_t *d = p + 5;
    while (d < q - 1 && *d == '0') d++;
    char digits[400];
    size_t len = (size_t)(q - d);
    if (len >= sizeof digits) return __builtin_inf();
    memcpy(digits, d, len);
    digits[len] = '\0';
    return strtod(digits, NULL);
  }
  return __builtin_nan("");
}

/*
 * Rows no window can hold, dropped as they are read. A device's window is
 * A, B, C: its marks number startIndex to startIndex + 2 in ID order, and
 * the replay takes MALLOC rows up to B and FREE rows up to C alone. The
 * k-th smallest ID of the marks a pass has seen so far (any part of the
 * file: a split pass's half too) is never below the k-th smallest of all
 * the log's marks, so a MALLOC row past that bound for B, or a FREE past
 * the bound for C, is outside the window whatever marks come later. Only
 * a device's own marks bound it: host memory (Device cpu or host) that
 * borrows another device's marks (check_leaks.ts deviceWindows) has none
 * of its own, so its rows are all kept.
 */
#define MAX_BOUND_MARKS 64
struct bounds {
  /* The smallest mark IDs seen, ascending, `bound_marks` at most. */
  double smallest[MAX_BOUND_MARKS];
  uint32_t n;
  /* MALLOC rows past the first, FREE rows past the second, are dropped. */
  double past[2];
};

/* A device's memory rows of the event type asked, kept or not, and their
 * smallest and largest ID: a later pass guesses from them how many rows
 * its windows hold (check_leaks.ts). And how far its MALLOCs come behind
 * the largest MALLOC ID before them in the file (`disorder`): a replay as
 * the rows are read need remember FREEs no further back than that
 * (sw_leak_stream_horizon; on a log of 64 devices, each numbering its own
 * IDs, most of them within 65,536 of its largest). With the smallest and
 * largest MALLOC ID, what a join of two halves needs (join_spans). */
struct span {
  double rows, min, max;
  double malloc_min, malloc_max, disorder;
};
/* Values a first pass gives of each device: rows, min, max, disorder, and
 * 1 where the file's MALLOC IDs each came once (ids_seen.h), else 0. */
#define SPAN_VALUES 5
/* Values a window pass is given of each device: A, B, C, its disorder, its
 * IDs once (1) or not. */
#define WINDOW_VALUES 5

/*
 * What the first half of a split pass tells the second as it reads: its
 * devices, by name, and their bounds (struct bounds) as its marks lower
 * them. A bound made from the marks of any part of the file bounds the
 * windows, so the second half drops the rows past the lower of its own and
 * the first half's: on a log whose devices interleave, the marks that
 * close the windows are mostly in the first half, and the second half kept
 * most rows it read, only to drop them at the join.
 */
struct shared_bounds {
  const uint8_t *names;       /* the first half's device_names */
  uint8_t len[MAX_DEVICES];   /* their lengths, written before published */
  _Atomic uint32_t devices;   /* names published */
  _Atomic uint64_t past[MAX_DEVICES][2]; /* struct bounds past, a double's bits */
  /* Rows the first half keeps, told every KEPT_STEP rows. */
  _Atomic uint64_t first_kept;
  uint64_t budget;
};
/* Rows between two tellings of the first half's rows kept. */
#define KEPT_STEP 4096
/* Rows between two looks of the second half at the first half's bounds. */
#define SHARED_STEP 4096

/* FREEs whose Ptrs are added to the Ptrs freed at once: each sets a bit in
 * 8 MiB, a cache miss, and one at a time between rows the misses did not
 * overlap (a quarter of a first pass's time on a log of 40% FREEs). */
#define FREED_BATCH 256u

struct pass {
  struct sw_csv_scan scan; /* first: the framer hands take_row this */
  struct sw_leak_scan_args *a;
  struct sw_leak_stream *stream; /* a streaming pass's replay */
  /* A first pass's Ptrs freed (leak_freed.h), filled past where it stops
   * keeping rows, this thread's own; NULL: none given, or a pass after
   * the first. `freed_any`: it wrote to them (a bit, or that they say
   * nothing), so that the first thread merges them. */
  uint64_t *freed;
  bool freed_any;
  /* Keys and IDs of FREEs read, added FREED_BATCH at a time (freed_flush). */
  uint32_t freed_n;
  uint64_t freed_keys[FREED_BATCH];
  double freed_ids[FREED_BATCH];
  /* The MALLOCs to come (leak_freed.h) of MALLOCs read past the rows kept,
   * added as the FREEs are; `mallocs_any`: it counted some, so that the
   * first thread merges them where it joins this thread's rows. */
  uint32_t mallocs_n;
  uint32_t malloc_slots[FREED_BATCH];
  bool mallocs_any;
  int side;
  struct shared_bounds *shared; /* a split pass's */
  int16_t shared_of[MAX_DEVICES]; /* the second half's devices, in the first's; -1: not yet */
  uint32_t shared_seen[MAX_DEVICES]; /* how many published names each was compared with */
  /* Where its rows go: row n at base + n, or top - n while `down` (the
   * first half of a split pass); at most `room` of them. */
  uint64_t base, top, room;
  bool down;
  /* Where this pass stopped keeping rows (`a->overflow`): the row that
   * did not fit, its line counted as this pass counts them. */
  uint64_t stop_offset;
  uint32_t stop_line;
  uint8_t device_len[MAX_DEVICES];
  struct bounds bounds[MAX_DEVICES];
  struct span spans[MAX_DEVICES];
  /* A first pass's MALLOC IDs, of any device (`track_ids`), added
   * FREED_BATCH at a time (ids_flush). */
  struct ids_seen ids;
  bool track_ids;
  uint32_t ids_n;
  double id_batch[FREED_BATCH];
  /* The last row's Device Id and its index: rows come in runs of one. */
  int last_device;
  size_t last_n;
  uint8_t last_bytes[DEVICE_BYTES];
  /* The devices' names by hash (index + 1 in a slot; 0: none), those of
   * the first `named` devices: where devices interleave, each row looked
   * through every name before (a log of 200 devices, 8M rows: 2.5 s). */
  uint16_t named_at[2 * MAX_DEVICES];
  uint32_t named;
  /* The index of a Device Id written as a number below SMALL_DEVICE_IDS
   * with no leading zero, as msMemScope writes them, by its value (-1:
   * not seen): where devices interleave, hashing and comparing each row's
   * name took a fifth of take_row (200 devices). */
  int16_t by_number[SMALL_DEVICE_IDS];
  /* The event type asked, padded for sw_csv_short_equal (a longer one is
   * compared where it is). */
  uint8_t event_type[16];
};

/* The value of a Device Id of 1 to 3 digits with no leading zero ("0"
 * itself is one) into *v; false for any other text. */
static inline bool small_device_id(const uint8_t *s, size_t n, uint32_t *v) {
  if (n == 0 || n > 3 || (s[0] == '0' && n > 1)) return false;
  uint32_t x = 0;
  for (size_t i = 0; i < n; i++) {
    const uint32_t d = (uint32_t)s[i] - '0';
    if (d > 9) return false;
    x = 10 * x + d;
  }
  *v = x;
  return true;
}

/* An absent field's text, readable as sw_csv_short_equal reads. */
static const uint8_t EMPTY[8];

/* FNV-1a of a device name. */
static uint32_t name_hash(const uint8_t *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  return h;
}

/* The slot of device name s (n bytes) in named_at: its own, or the empty
 * one its probes reached first (the table is at most half full). */
static uint16_t *name_slot(struct pass *p, const uint8_t *s, size_t n) {
  const uint8_t *names = p->a->device_names;
  const uint32_t mask = 2 * MAX_DEVICES - 1;
  for (uint32_t at = name_hash(s, n) & mask;; at = (at + 1) & mask) {
    uint16_t *slot = &p->named_at[at];
    const int k = *slot - 1;
    if (k < 0 || (p->device_len[k] == n && memcmp(names + k * DEVICE_BYTES, s, n) == 0)) return slot;
  }
}

/* The index of device name s (n bytes) among the pass's devices; the
 * count of them when none. Names are only ever added at the end (here,
 * and by join_halves): those added since are hashed first. */
static int named_index(struct pass *p, const uint8_t *s, size_t n) {
  const struct sw_leak_scan_args *a = p->a;
  for (; p->named < a->devices && p->named < MAX_DEVICES; p->named++) {
    const uint32_t k = p->named;
    uint16_t *slot = name_slot(p, a->device_names + k * DEVICE_BYTES, p->device_len[k]);
    if (!*slot) *slot = (uint16_t)(k + 1);
  }
  const uint16_t slot = *name_slot(p, s, n);
  return slot ? slot - 1 : (int)a->devices;
}

/* The index of a device, made on first sight; -1 for N/A, -2 to fall back. */
static int device_index(struct pass *p, const struct sw_csv_field *f) {
  size_t n = f->present ? (size_t)(f->e - f->s) : 0;
  const uint8_t *s = f->present ? f->s : EMPTY;
  /* Before the cache: `a""b` quoted is not the text `a""b` unquoted. */
  if (sw_csv_has_doubled_quote(f)) return -2;
  if (p->last_device != -3 && n == p->last_n && sw_csv_short_equal(s, p->last_bytes, n)) return p->last_device;
  uint32_t number;
  const bool small = small_device_id(s, n, &number);
  int k = small ? p->by_number[number] : -1;
  if (k >= 0) goto found;
  if (!sw_csv_ascii(s, s + n) || n >= DEVICE_BYTES || memchr(s, 0, n)) return -2;
  if (n == 3 && memcmp(s, "N/A", 3) == 0) {
    k = -1;
  } else {
    struct sw_leak_scan_args *a = p->a;
    k = named_index(p, s, n);
    if (k == (int)a->devices) {
      if (k == MAX_DEVICES) return -2;
      memcpy(a->device_names + k * DEVICE_BYTES, s, n);
      p->device_len[k] = (uint8_t)n;
      a->devices++;
    }
    if (small) p->by_number[number] = (int16_t)k;
  }
found:
  p->last_device = k;
  p->last_n = n;
  memcpy(p->last_bytes, s, n);
  return k;
}

static uint64_t bits_of(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static double double_of(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* The first half's device k's bounds, for the second half: its name first
 * (every device up to it), then the bounds. */
static void publish_bounds(struct pass *p, int k) {
  struct shared_bounds *s = p->shared;
  const uint32_t published = atomic_load_explicit(&s->devices, memory_order_relaxed);
  if ((uint32_t)k >= published) {
    for (uint32_t j = published; j < p->a->devices; j++) s->len[j] = p->device_len[j];
    atomic_store_explicit(&s->devices, p->a->devices, memory_order_release);
  }
  for (int x = 0; x < 2; x++)
    atomic_store_explicit(&s->past[k][x], bits_of(p->bounds[k].past[x]), memory_order_relaxed);
}

/* The second half's bounds, lowered to the first half's where those are
 * lower: its devices matched to the first half's by name. */
static void take_shared_bounds(struct pass *p) {
  struct shared_bounds *s = p->shared;
  const uint32_t published = atomic_load_explicit(&s->devices, memory_order_acquire);
  const struct sw_leak_scan_args *a = p->a;
  for (uint32_t k = 0; k < a->devices; k++) {
    if (p->shared_of[k] < 0) {
      const uint8_t *name = a->device_names + k * DEVICE_BYTES;
      const size_t n = p->device_len[k];
      /* Each published name once: a device the first half never names
       * costs nothing more at each look. */
      for (uint32_t j = p->shared_seen[k]; j < published && p->shared_of[k] < 0; j++)
        if (s->len[j] == n && memcmp(s->names + j * DEVICE_BYTES, name, n) == 0) p->shared_of[k] = (int16_t)j;
      p->shared_seen[k] = published;
      if (p->shared_of[k] < 0) continue;
    }
    for (int x = 0; x < 2; x++) {
      double theirs = double_of(atomic_load_explicit(&s->past[p->shared_of[k]][x], memory_order_relaxed));
      if (theirs < p->bounds[k].past[x]) p->bounds[k].past[x] = theirs;
    }
  }
}

/* Device k's mark `id`, seen: its bounds (struct bounds) can only fall. */
static void bound_by(struct pass *p, int k, double id) {
  const uint32_t want = p->a->bound_marks;
  struct bounds *b = &p->bounds[k];
  if (!want || (b->n == want && id >= b->smallest[want - 1])) return;
  uint32_t at = b->n < want ? b->n++ : want - 1;
  while (at > 0 && b->smallest[at - 1] > id) {
    b->smallest[at] = b->smallest[at - 1];
    at--;
  }
  b->smallest[at] = id;
  /* Never above a bound the other half gave (take_shared_bounds). */
  if (b->n >= want - 1 && b->smallest[want - 2] < b->past[0]) b->past[0] = b->smallest[want - 2];
  if (b->n == want && b->smallest[want - 1] < b->past[1]) b->past[1] = b->smallest[want - 1];
  if (p->shared && p->side == 0) publish_bounds(p, k);
}

/* Whether a row's Event Type is the one asked. */
static inline bool event_type_is(const struct pass *p, const struct sw_csv_field *f) {
  const uint32_t n = p->a->event_type_len;
  return n <= 8 ? sw_csv_padded_text_is(f, p->event_type, n) : sw_csv_text_is(f, p->a->event_type, n);
}

/* An ID field's value (sw_csv_parse_decimal), NAN when absent. */
static inline double id_value(const struct sw_csv_field *f) {
  double v;
  if (!f->present) return __builtin_nan("");
  return sw_plain_digits(f->s, f->e, &v) ? v : sw_csv_parse_decimal(f->s, f->e);
}

/* Keeps no row from this one on (at `offset`, on `line`): the budget is
 * reached. The rows kept are then every row before it a window may hold. */
static bool stop_keeping(struct pass *p, uint64_t offset, uint32_t line) {
  p->a->overflow = 1;
  p->stop_offset = offset;
  p->stop_line = line;
  return true;
}

/* The keys of the FREEs read so far into the Ptrs freed, their words
 * fetched first, all of them. */
static void freed_flush(struct pass *p) {
  for (uint32_t i = 0; i < p->freed_n; i++) __builtin_prefetch(sw_leak_freed_at(p->freed, p->freed_keys[i]));
  for (uint32_t i = 0; i < p->freed_n; i++) sw_leak_freed_add(p->freed, p->freed_keys[i], p->freed_ids[i]);
  p->freed_n = 0;
}

/* The MALLOCs read so far past the rows kept into the MALLOCs to come,
 * their bytes fetched first, all of them. */
static void mallocs_flush(struct pass *p) {
  uint8_t *mallocs = sw_leak_mallocs(p->freed);
  for (uint32_t i = 0; i < p->mallocs_n; i++) __builtin_prefetch(&mallocs[p->malloc_slots[i]]);
  for (uint32_t i = 0; i < p->mallocs_n; i++) sw_leak_mallocs_add(mallocs, p->malloc_slots[i]);
  p->mallocs_n = 0;
}

/* The MALLOC IDs read so far into the IDs seen, their words fetched
 * first, all of them: where MALLOC rows come far out of ID order (a log
 * written as msMemScope writes one), each ID's bit was a cache miss, a
 * fifth of a first pass's time. */
static void ids_flush(struct pass *p) {
  for (uint32_t i = 0; i < p->ids_n; i++) {
    const uint64_t *word = sw_ids_seen_word(&p->ids, p->id_batch[i]);
    if (word) __builtin_prefetch(word);
  }
  for (uint32_t i = 0; i < p->ids_n; i++) sw_ids_seen_add(&p->ids, p->id_batch[i]);
  p->ids_n = 0;
}

/* A MALLOC with `id` read, into the IDs seen in batches. */
static void id_add(struct pass *p, double id) {
  p->id_batch[p->ids_n++] = id;
  if (p->ids_n == FREED_BATCH) ids_flush(p);
}

/* A MALLOC at Ptr `key` past the rows kept into the MALLOCs to come, in
 * batches: a replay reading on from the rows kept reads it. */
static void malloc_add(struct pass *p, double key) {
  if (!p->freed) return;
  p->malloc_slots[p->mallocs_n++] = sw_leak_mallocs_slot(sw_leak_freed_key(key));
  if (p->mallocs_n == FREED_BATCH) mallocs_flush(p);
  p->mallocs_any = true;
}

/* A FREE at Ptr `key` that the pass does not keep into the Ptrs freed
 * (those it kept go in once it has passed the budget: freed_rows), in
 * batches. A pass that keeps every row adds none: adding each FREE as it
 * was read made a 367 MB log that fits the budget 30% slower. */
static void freed_add(struct pass *p, double key, double id) {
  if (!p->freed) return;
  p->freed_ids[p->freed_n] = id;
  p->freed_keys[p->freed_n++] = sw_leak_freed_key(key);
  if (p->freed_n == FREED_BATCH) freed_flush(p);
  p->freed_any = true;
}

/* Memory row `key`, `id` (a FREE's, else a MALLOC's) past the rows kept:
 * into the Ptrs freed, or the MALLOCs to come. */
static void add_past_kept(struct pass *p, bool free_row, double key, double id) {
  if (free_row) freed_add(p, key, id);
  else malloc_add(p, key);
}

/* A memory row past where the pass stopped keeping rows, its Ptr read:
 * add_past_kept, which says nothing once a Ptr cannot be read (a
 * streaming pass that meets it falls back, as before). */
static void past_kept(struct pass *p, const struct sw_csv_row *r, bool free_row, double id) {
  if (!p->freed) return;
  struct sw_csv_field pf = sw_csv_field_of(r, p->a->col[C_PTR]);
  double key;
  if (ptr_key(&pf, &key)) {
    add_past_kept(p, free_row, key, id);
    return;
  }
  sw_leak_freed_state(p->freed, SW_FREED_UNREADABLE);
  p->freed_any = true;
}

/* One data row; false to fall back. */
static bool take_row(void *ctx, const struct sw_csv_row *r, uint64_t offset, uint32_t line) {
  struct pass *p = ctx;
  struct sw_leak_scan_args *a = p->a;
  if (p->shared && p->side == 1 && a->data_rows % SHARED_STEP == 0) take_shared_bounds(p);
  a->data_rows++;
  struct sw_csv_field dev = sw_csv_field_of(r, a->col[C_DEVICE]);
  int k = device_index(p, &dev);
  if (k == -2) return false;
  if (k < 0) return true;
  struct sw_csv_field ev = sw_csv_field_of(r, a->col[C_EVENT]);
  bool malloc_row = sw_csv_text_is(&ev, (const uint8_t *)"MALLOC", 6);
  bool free_row = !malloc_row && sw_csv_text_is(&ev, (const uint8_t *)"FREE", 4);
  struct sw_csv_field type = sw_csv_field_of(r, a->col[C_TYPE]);
  if (malloc_row || free_row) {
    if (!event_type_is(p, &type)) return true;
  } else if (!sw_csv_text_is(&ev, (const uint8_t *)"MSTX", 4)) {
    return true;
  }
  struct sw_csv_field idf = sw_csv_field_of(r, a->col[C_ID]);
  double id = id_value(&idf);
  if (id != id) return true;
  if (malloc_row || free_row) {
    struct span *span = &p->spans[k];
    span->rows++;
    if (id < span->min) span->min = id;
    if (id > span->max) span->max = id;
    if (malloc_row) {
      if (id < span->malloc_min) span->malloc_min = id;
      if (id > span->malloc_max) span->malloc_max = id;
      else if (span->malloc_max - id > span->disorder) span->disorder = span->malloc_max - id;
      if (p->track_ids) id_add(p, id);
    }
    if (id > p->bounds[k].past[free_row]) return true;
    if (a->overflow) {
      past_kept(p, r, free_row, id);
      return true;
    }
    if (a->window_devices) {
      /* A device first seen after the first pass (the log grew) has none. */
      if ((uint32_t)k >= a->window_devices) return true;
      const double *w = a->windows + WINDOW_VALUES * k;
      if (!(id >= w[0] && id <= (malloc_row ? w[1] : w[2]))) return true;
    }
    struct sw_csv_field pf = sw_csv_field_of(r, a->col[C_PTR]);
    double key;
    if (!ptr_key(&pf, &key)) return false;
    if (p->stream) {
      struct sw_leak_stream_row row = {.id = id, .ptr = key, .dev = (uint16_t)k, .malloc_row = malloc_row};
      if (malloc_row) {
        struct sw_csv_field attr = sw_csv_field_of(r, a->col[C_ATTR]);
        row.size = malloc_size(&attr);
        row.offset = (double)offset;
        row.line = line;
        row.odd_id = !plain_id(&idf);
      }
      return sw_leak_stream_push(p->stream, &row);
    }
    const uint64_t n = a->rows_kept;
    if (n == p->room) {
      if (p->room < a->budget) {
        a->room_full |= ROOM_ROWS;
        return false;
      }
      add_past_kept(p, free_row, key, id);
      return stop_keeping(p, offset, line);
    }
    /* The second half keeps no more once the halves together pass the
     * budget: the join would drop its rows past it, and memory stays that
     * of the budget's rows. The rows kept end no later than without it
     * (where the join drops none of its rows, at the same row). */
    if (p->shared && n % KEPT_STEP == 0) {
      if (p->side == 0) {
        atomic_store_explicit(&p->shared->first_kept, n, memory_order_relaxed);
      } else if (n + atomic_load_explicit(&p->shared->first_kept, memory_order_relaxed) > p->shared->budget) {
        add_past_kept(p, free_row, key, id);
        return stop_keeping(p, offset, line);
      }
    }
    const uint64_t at = p->down ? p->top - n : p->base + n;
    a->kind[at] = malloc_row ? 1 : 2;
    a->device[at] = (uint32_t)k;
    a->id[at] = id;
    a->ptr[at] = key;
    /* A FREE's place too: a join may stop at any row (join_halves). */
    a->row_offset[at] = (double)offset;
    a->line[at] = line;
    if (malloc_row) {
      struct sw_csv_field attr = sw_csv_field_of(r, a->col[C_ATTR]);
      a->size[at] = malloc_size(&attr);
      a->odd_ids += !plain_id(&idf);
    } else {
      a->size[at] = 0;
    }
    a->rows_kept = n + 1;
    return true;
  }
  if (!sw_csv_text_is(&type, (const uint8_t *)"Mark", 4)) return true;
  /* A pass over the windows has them: its marks would only fill their
   * room, and a pass that read on from rows kept cannot run again. */
  if (a->window_devices) return true;
  struct sw_csv_field name = sw_csv_field_of(r, a->col[C_NAME]);
  if (!name.present) return true;
  /* nameEquals: raw bytes, or the decoded text when both hold quotes. */
  bool same;
  if (name.quoted && a->mstx_has_quote) {
    const uint8_t *q = name.s, *w = a->mstx, *we = a->mstx + a->mstx_len;
    same = true;
    while (same && q < name.e && w < we) {
      same = *q == *w;
      q += (*q == '"' && q + 1 < name.e && q[1] == '"') ? 2 : 1;
      w++;
    }
    same = same && q == name.e && w == we;
  } else {
    same = (size_t)(name.e - name.s) == a->mstx_len && memcmp(name.s, a->mstx, a->mstx_len) == 0;
  }
  if (!same) return true;
  if (a->marks == a->mark_cap) {
    a->room_full |= ROOM_MARKS;
    return false;
  }
  a->mark_device[a->marks] = (uint32_t)k;
  a->mark_id[a->marks] = id;
  a->marks++;
  bound_by(p, k, id);
  return true;
}

/* Where a scan of `a` stops: no row starting there or later is read. */
static uint64_t rows_end(const struct sw_leak_scan_args *a) { return a->end ? a->end : UINT64_MAX; }

/* A pass over `a`'s file, its rows framed by csv_frame.c. */
static void pass_init(struct pass *p, struct sw_leak_scan_args *a) {
  *p = (struct pass){.a = a, .last_device = -3, .room = a->half_at ? a->half_at : a->cap};
  memset(p->shared_of, 0xff, sizeof p->shared_of);
  memset(p->by_number, 0xff, sizeof p->by_number);
  for (int k = 0; k < MAX_DEVICES; k++) {
    p->bounds[k].past[0] = p->bounds[k].past[1] = __builtin_inf();
    p->spans[k] = (struct span){
        .min = __builtin_inf(), .max = -__builtin_inf(), .malloc_min = __builtin_inf(), .malloc_max = -__builtin_inf()};
  }
  /* Devices given in (a later pass's, the first pass's devices in order)
   * keep their indices, in both halves. */
  for (uint32_t k = 0; k < a->devices && k < MAX_DEVICES; k++)
    p->device_len[k] = (uint8_t)strnlen((const char *)a->device_names + k * DEVICE_BYTES, DEVICE_BYTES - 1);
  /* A later pass reads the bytes the first read: a row the first saw half
   * written (a log still being written) is read as it saw it, not as its
   * writer finished it. */
  p->scan = (struct sw_csv_scan){.fd = a->fd, .take = take_row, .ctx = p, .limit = rows_end(a), .end = a->end};
  const bool first = !a->window_devices && !a->stream;
  if (first && a->freed && a->freed_bytes >= SW_LEAK_FREED_BYTES) p->freed = a->freed;
  p->track_ids = first;
  if (a->event_type_len <= 8) memcpy(p->event_type, a->event_type, a->event_type_len);
}

/* Frames the rows from `from` (a row start, on line `line`) on; see
 * sw_csv_scan_range. */
static int32_t scan_range(struct pass *p, uint64_t from, uint32_t line) {
  int32_t result = sw_csv_scan_range(&p->scan, from, line);
  if (result == SW_SCAN_TOO_LONG) p->a->too_long_line = p->scan.next_line;
  if (p->freed_n) freed_flush(p);
  if (p->mallocs_n) mallocs_flush(p);
  if (p->ids_n) ids_flush(p);
  if (p->scan.bytes > p->a->bytes) p->a->bytes = p->scan.bytes;
  return result;
}

/* Files this large are framed by two threads, one from each half. */
#define SPLIT_MIN (32u << 20)

/* The second half's pass: its own rows, marks and devices. */
struct half {
  struct sw_leak_scan_args args;
  struct pass pass;
  uint64_t from;
  int32_t result;
};

static void *half_main(void *arg) {
  struct half *h = arg;
  h->result = scan_range(&h->pass, h->from, 0);
  return NULL;
}

static void half_free(struct half *h) {
  sw_pages_free(h->pass.freed, SW_LEAK_FREED_BYTES);
  free(h->args.mark_device);
  free(h->args.mark_id);
  free(h);
}

/* `advise` (pages.h) over the pages of the rows' arrays, room for n rows. */
static void advise_rows(const struct sw_leak_scan_args *b, uint64_t from, uint64_t to,
                        void (*advise)(void *, size_t)) {
  const uint64_t n = to - from;
#define ADVISE(col) advise(b->col + from, n * sizeof *b->col);
  ROW_COLUMNS(ADVISE)
#undef ADVISE
}

/* A second pass over [split, end), its rows from a->half_at on in the
 * arrays; NULL when it cannot be had (then one thread reads the whole
 * file). */
static struct half *half_new(const struct sw_leak_scan_args *a, uint64_t split) {
  if (!a->half_at || a->half_at >= a->cap) return NULL;
  struct half *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  struct sw_leak_scan_args *b = &h->args;
  *b = *a;
  b->rows_kept = b->marks = b->data_rows = b->bytes = b->odd_ids = 0;
  b->overflow = 0; /* b->devices: those given in, as a's */
  size_t m = a->mark_cap ? a->mark_cap : 1;
  b->mark_device = malloc(m * sizeof *b->mark_device);
  b->mark_id = malloc(m * sizeof *b->mark_id);
  if (!b->mark_device || !b->mark_id) {
    half_free(h);
    return NULL;
  }
  const uint64_t at = a->half_at;
#define FROM_HALF(col) b->col = a->col + at;
  ROW_COLUMNS(FROM_HALF)
#undef FROM_HALF
  b->half_at = 0;
  /* Its room is what the caller left past half_at: half the budget at
   * most (check_leaks' LeakRows), the first half keeping to the budget
   * (its rows are the prefix a streaming pass reads on from). In a first
   * pass the second half keeps no more past it, and the join stops keeping
   * where its rows stop (on a 1 GB log each half would otherwise fill its
   * room for nothing). A pass over the windows keeps every row inside
   * them or fails, and the first half's room may be short of the budget
   * (then a pass past it falls back): there a half with more rows than its
   * room hands over, and the first thread reads on from its start. */
  b->cap = a->cap - at;
  b->budget = a->half_at >= a->budget && !a->window_devices ? b->cap : UINT64_MAX;
  pass_init(&h->pass, b);
  h->pass.freed = NULL; /* its own, or none: the caller's to give */
  h->from = split;
  return h;
}

/* Whether row i of the second half is past its device's bound (MALLOC rows
 * the first, FREE rows the second; struct bounds). */
static inline bool past_bounds(const struct pass *p, const struct sw_leak_scan_args *b, const int *map, uint64_t i) {
  return b->id[i] > p->bounds[map[b->device[i]]].past[b->kind[i] != 1];
}

/* Row `from` of the arrays copied to row `to`. */
static void copy_row(struct sw_leak_scan_args *a, uint64_t to, uint64_t from) {
#define COPY(col) a->col[to] = a->col[from];
  ROW_COLUMNS(COPY)
#undef COPY
}

/* Rows i and j of the arrays swapped. */
static void swap_rows(struct sw_leak_scan_args *a, uint64_t i, uint64_t j) {
#define SWAP(col)                  \
  {                                \
    __typeof__(*a->col) t = a->col[i]; \
    a->col[i] = a->col[j];         \
    a->col[j] = t;                 \
  }
  ROW_COLUMNS(SWAP)
#undef SWAP
}

/* The first half's rows, kept last first below a->half_at, turned round:
 * from here on they lie in file order from p->base, and the pass keeps
 * rows after them as one that does not split keeps them from 0. */
static void turn_first_half(struct pass *p) {
  struct sw_leak_scan_args *a = p->a;
  p->base = a->half_at - a->rows_kept;
  p->down = false;
  for (uint64_t i = p->base, j = a->half_at; i + 1 < j; i++, j--) swap_rows(a, i, j - 1);
}

/* The rows kept, from p->base, moved to the start of the arrays. */
static void rows_to_start(struct pass *p) {
  struct sw_leak_scan_args *a = p->a;
  const uint64_t n = a->rows_kept, from = p->base;
  p->base = 0;
  if (from == 0) return;
#define MOVE(col) memmove(a->col, a->col + from, n * sizeof *a->col);
  ROW_COLUMNS(MOVE)
#undef MOVE
}

/*
 * Appends the second half's findings to the first's, as one pass over the
 * whole file would have made them: its devices after the first's (those
 * new to the first half), its lines counted on from `line` (the line of
 * the row where it began). False to fall back. Rows are appended while
 * the first half kept all of its own and there is room: where they stop,
 * the pass stopped keeping (stop_keeping), as one thread would have.
 */
/* A device's span of the first half, `to`, and of the second, `from`, as
 * one: the second half's MALLOCs come behind the first's largest ID too. */
static void join_spans(struct span *to, const struct span *from) {
  to->rows += from->rows;
  if (from->min < to->min) to->min = from->min;
  if (from->max > to->max) to->max = from->max;
  if (from->disorder > to->disorder) to->disorder = from->disorder;
  if (to->malloc_max - from->malloc_min > to->disorder) to->disorder = to->malloc_max - from->malloc_min;
  if (from->malloc_min < to->malloc_min) to->malloc_min = from->malloc_min;
  if (from->malloc_max > to->malloc_max) to->malloc_max = from->malloc_max;
}

/* The FREE rows [from, to) of `b`'s arrays into the Ptrs freed, as rows the
 * pass does not keep (freed_add: in batches, their words fetched first). */
static void freed_rows(struct pass *p, const struct sw_leak_scan_args *b, uint64_t from, uint64_t to) {
  for (uint64_t i = from; p->freed && i < to; i++)
    if (b->kind[i] == 2) freed_add(p, b->ptr[i], b->id[i]);
}

/* The MALLOC rows [from, to) of `b`'s arrays into the MALLOCs to come, as
 * rows past those the pass keeps. */
static void malloc_rows(struct pass *p, const struct sw_leak_scan_args *b, uint64_t from, uint64_t to) {
  for (uint64_t i = from; p->freed && i < to; i++)
    if (b->kind[i] == 1) malloc_add(p, b->ptr[i]);
}

/* Room for the rows kept from p->base to the arrays' end, within the
 * budget. */
static uint64_t room_from_base(const struct pass *p) {
  const uint64_t room = p->a->cap - p->base;
  return room < p->a->budget ? room : p->a->budget;
}

static bool join_halves(struct pass *p, struct half *h, uint32_t line) {
  struct sw_leak_scan_args *a = p->a, *b = &h->args;
  /* Every refusal first: a refused join leaves the first half as it was. */
  int map[MAX_DEVICES];
  uint32_t devices = a->devices;
  for (uint32_t k = 0; k < b->devices; k++) {
    const uint8_t *name = b->device_names + k * DEVICE_BYTES;
    uint32_t j = 0;
    while (j < a->devices && !(p->device_len[j] == h->pass.device_len[k] &&
                               memcmp(a->device_names + j * DEVICE_BYTES, name, p->device_len[j]) == 0))
      j++;
    map[k] = j < a->devices ? (int)j : (int)devices++;
  }
  uint64_t total = a->rows_kept + b->rows_kept;
  /* The rows joined lie from p->base on, as far as the arrays go: the
   * first half's room was its part of them. */
  const uint64_t room = room_from_base(p);
  if (devices > MAX_DEVICES || a->marks + b->marks > a->mark_cap) return false;
  if (!a->overflow && total > room && room < a->budget) return false;
  p->room = room;
  for (uint32_t k = 0; k < b->devices; k++) {
    if ((uint32_t)map[k] < a->devices) continue;
    memcpy(a->device_names + map[k] * DEVICE_BYTES, b->device_names + k * DEVICE_BYTES, DEVICE_BYTES);
    p->device_len[map[k]] = h->pass.device_len[k];
  }
  a->devices = devices;
  for (uint64_t i = 0; i < b->marks; i++) {
    a->mark_device[a->marks] = (uint32_t)map[b->mark_device[i]];
    a->mark_id[a->marks++] = b->mark_id[i];
    /* Every mark of the file is now read: the bounds are the windows'. */
    bound_by(p, map[b->mark_device[i]], b->mark_id[i]);
  }
  for (uint32_t k = 0; k < b->devices; k++) join_spans(&p->spans[map[k]], &h->pass.spans[k]);
  a->data_rows += b->data_rows;
  a->odd_ids += b->odd_ids;
  if (b->bytes > a->bytes) a->bytes = b->bytes;
  /* The second half's FREEs that may not all be kept are freed Ptrs. */
  if (a->overflow || total > p->room) freed_rows(p, b, 0, b->rows_kept);
  /* The first half stopped keeping before the second began: every row of
   * the second half is past those kept. */
  if (a->overflow) {
    malloc_rows(p, b, 0, b->rows_kept);
    return true;
  }
  /* The second half's rows follow the first's in the arrays. It read them
   * without the first half's marks: those past the windows, as the bounds
   * of every mark now give them, are dropped, the others moved down over
   * them (on a log of two devices interleaved, most of its rows), with the
   * first half's device indices and lines counted on, while there is room. */
  uint64_t kept = a->rows_kept;
  for (uint64_t i = 0; i < b->rows_kept; i++) {
    if (past_bounds(p, b, map, i)) continue;
    if (kept == p->room) {
      stop_keeping(p, (uint64_t)b->row_offset[i], b->line[i] + line);
      malloc_rows(p, b, i, b->rows_kept);
      break;
    }
    const uint64_t to = p->base + kept++, from = a->half_at + i;
    const uint32_t device = (uint32_t)map[b->device[i]], row_line = b->line[i] + line;
    if (to != from) copy_row(a, to, from);
    a->device[to] = device;
    a->line[to] = row_line;
  }
  a->rows_kept = kept;
  if (b->overflow && !a->overflow) stop_keeping(p, h->pass.stop_offset, h->pass.stop_line + line);
  return true;
}

/* The size of `fd`'s file now (0 when it cannot be had). */
static uint64_t file_size_now(int fd) {
  struct stat info;
  return fstat(fd, &info) == 0 ? (uint64_t)info.st_size : 0;
}

/* SW_SCAN_CUT for a pass that was DONE over a file now shorter than the
 * `size` it had when the pass began; `result` else. Each scan's mapping
 * took the size of its own moment: a file cut between two of them (the
 * halves' and a rescan) is seen here. */
static int32_t cut_since(int fd, uint64_t size, int32_t result) {
  struct stat info;
  if (result == SW_LEAK_DONE && fstat(fd, &info) == 0 && (uint64_t)info.st_size < size) return SW_SCAN_CUT;
  return result;
}

/* The reading side of a streaming pass, on a thread of its own. */
struct stream_reader {
  struct pass *p;
  int32_t result;
};

static void *stream_reader_main(void *arg) {
  struct stream_reader *r = arg;
  struct pass *p = r->p;
  r->result = scan_range(p, p->a->offset, p->a->first_line);
  sw_leak_stream_close(p->stream, r->result == SW_LEAK_DONE);
  return NULL;
}

/* The most blocks a streaming pass holds (six fifths of the most FREEs, or
 * IDs, it keeps), that of the default budget of 2.5M rows: 1.25M blocks of 48
 * bytes (60 MB) and their Ptrs' 16-byte slots (32 MB, a table that need not
 * grow past three quarters of 2^21), beside tables of FREEs and IDs of up to
 * 1,041,666 16-byte slots (32 MB each, 64 while rebuilt beside one as large:
 * about 220 MB in all if everything peaked at once, which takes more than
 * 500,000 Ptrs freed within the last 65,536 IDs of several devices, each
 * numbering its own IDs). A 1.10 GB log holding 1,100,000 blocks peaked at 190
 * MiB with it, as it had at 1,000,000; so did logs that hold 1,240,000 blocks
 * and free them all at the end. The budget sizes the rows kept in memory,
 * which the replay in memory also needs; this replay needs more for each block
 * it holds, so a smaller budget makes its room smaller too. The leaks it lists
 * at unfreed Ptrs (48 bytes each, as a block) share that room, and the Ptrs
 * freed it reads (leak_freed.h) are 8 MiB more. */
#define STREAM_ROOM 1250001u

/* A FREE among the rows kept that a row still to come may need. */
struct kept_free {
  double ptr, id;
  uint32_t dev;
};

/* What a stream reading on needs of the rows kept, copied out of them. */
struct handover {
  struct sw_leak_stream_row *blocks; /* still pending */
  struct kept_free *frees;
  uint64_t n_blocks, cap_blocks, n_frees, cap_frees;
};

/* `v`, room for `n` items of `size` bytes, grown to room for one more
 * (*cap, its room); NULL when memory is short (`v` stays). */
static void *one_more(void *v, uint64_t n, uint64_t *cap, size_t size) {
  if (n < *cap) return v;
  const uint64_t more = *cap ? 2 * *cap : 1024;
  void *grown = realloc(v, more * size);
  if (grown) *cap = more;
  return grown;
}

/* The blocks copied out that went to the other half of a split, dropped. */
static void kept_mine(struct sw_leak_stream *s, struct handover *h) {
  uint64_t n = 0;
  for (uint64_t j = 0; j < h->n_blocks; j++)
    if (sw_leak_stream_mine(s, h->blocks[j].dev, h->blocks[j].ptr)) h->blocks[n++] = h->blocks[j];
  h->n_blocks = n;
}

/* The stream's part split in two, and the blocks copied out that went to
 * the other half dropped; false, `full` set, where it may not split. */
static bool split_kept(struct sw_leak_stream *s, struct handover *h, bool *full) {
  if (!sw_leak_stream_split(s)) {
    *full = true;
    return false;
  }
  kept_mine(s, h);
  return true;
}

/* Pending blocks ahead whose rows' values are fetched (FREED_AHEAD
 * further ahead), then their word of the Ptrs freed (hand_left). */
#define FREED_AHEAD 16

/* Device k's `left` blocks still pending at the end of its kept rows
 * (left_k, indices of the rows) handed to the stream: one at a Ptr never
 * freed at once, the others copied into `h` for hand_over. */
static bool hand_left(struct pass *p, uint64_t room, struct handover *h, bool *full, uint32_t k, const uint32_t *left_k,
                      int64_t left) {
  const struct sw_leak_scan_args *a = p->a;
  bool ok = true;
  for (int64_t j = 0; ok && j < left; j++) {
    /* Their rows lie all over the arrays (by ID), each value a miss:
     * fetched first, then, once the Ptr is there, where the Ptr is looked
     * up among the Ptrs freed (a miss a block, where millions are
     * pending). */
    if (j + 2 * FREED_AHEAD < left) {
      const uint32_t ahead = left_k[j + 2 * FREED_AHEAD];
      __builtin_prefetch(&a->ptr[ahead]);
      __builtin_prefetch(&a->id[ahead]);
      __builtin_prefetch(&a->size[ahead]);
      __builtin_prefetch(&a->row_offset[ahead]);
      __builtin_prefetch(&a->line[ahead]);
    }
    if (a->freed && j + FREED_AHEAD < left)
      __builtin_prefetch(sw_leak_freed_at(a->freed, sw_leak_freed_key(a->ptr[left_k[j + FREED_AHEAD]])));
    const uint32_t i = left_k[j];
    const struct sw_leak_stream_row row = {.id = a->id[i], .ptr = a->ptr[i], .size = a->size[i],
                                           .offset = a->row_offset[i], .line = a->line[i], .dev = (uint16_t)k,
                                           .malloc_row = true, .odd_id = false};
    /* One at a Ptr never freed is counted at once (or held briefly, its
     * ID still to come): it takes none of the room, nor a copy. */
    if (sw_leak_stream_at_unfreed_ptr(p->stream, &row)) {
      /* It may split the part at its room: the copies follow. */
      const uint32_t parts = sw_leak_stream_parts(p->stream);
      ok = sw_leak_stream_pending(p->stream, &row);
      if (sw_leak_stream_parts(p->stream) != parts) kept_mine(p->stream, h);
      continue;
    }
    if (!sw_leak_stream_mine(p->stream, k, a->ptr[i])) continue;
    /* More pending than the stream has room for: its part split, as
     * the stream splits it at its room, or the end of it. The block may
     * be the other half's then. */
    while (ok && h->n_blocks >= room) ok = split_kept(p->stream, h, full);
    if (!ok) break;
    if (!sw_leak_stream_mine(p->stream, k, a->ptr[i])) continue;
    struct sw_leak_stream_row *more = one_more(h->blocks, h->n_blocks, &h->cap_blocks, sizeof *h->blocks);
    ok = more != NULL;
    if (ok) (h->blocks = more)[h->n_blocks++] = row;
  }
  return ok;
}

/*
 * The rows a first pass kept (a->resume_rows of them, every row a window
 * may hold up to where this pass reads on) replayed in memory, each
 * device's window on its own (leak_replay.c, two threads for a large one;
 * two threads taking the devices in turn where there are several),
 * and handed to the stream as the rows still to come need them: the blocks
 * still pending, the largest MALLOC ID, the FREEs of the last IDs. So the
 * stream reads on from where that pass stopped keeping rows, and the rows
 * it kept are neither read again nor replayed one at a time (on a log a
 * third past the budget, the replay of each row in the stream's tables,
 * not the read, had set the pace). What the stream needs is copied out
 * into `h` (the largest MALLOC IDs go to it at once), so that the rows'
 * pages can be given back before it takes the rest (hand_over): a stream
 * holding 700,000 blocks beside the rows kept passed 256 MB. Past `room`,
 * the stream's part splits (split_kept). False to fall back; `full` then
 * says whether more were pending than `room` in as many parts as it may
 * split into.
 */
static bool replay_kept(struct pass *p, uint64_t room, struct handover *h, bool *full) {
  const struct sw_leak_scan_args *a = p->a;
  const uint64_t n = a->resume_rows;
  if (n > a->cap || n > UINT32_MAX) return false;
  const uint32_t devices = a->window_devices < MAX_DEVICES ? a->window_devices : MAX_DEVICES;
  uint32_t *left_at = malloc((n ? n : 1) * sizeof *left_at);
  uint64_t from[MAX_DEVICES + 1];
  int64_t lefts[MAX_DEVICES];
  bool ok = left_at != NULL && sw_leak_replay_devices(a->kind, a->device, a->id, a->ptr, a->size, n, a->windows,
                                                      WINDOW_VALUES, devices, left_at, from, lefts);
  /* Each device's largest MALLOC ID in its window in one read of the rows
   * in file order (and the FREEs the stream needs in another, below): each
   * device's rows read on their own strode through every array, 64
   * devices most of 300 ms. A window of NaN (none) holds no row. */
  double last[MAX_DEVICES];
  for (uint32_t k = 0; k < devices; k++) last[k] = -__builtin_inf();
  for (uint64_t i = 0; ok && i < n; i++) {
    const uint32_t k = a->device[i];
    const double id = a->id[i];
    if (k >= devices || a->kind[i] != 1 || !(id >= a->windows[WINDOW_VALUES * k] && id > last[k])) continue;
    if (id <= a->windows[WINDOW_VALUES * k + 1]) last[k] = id;
  }
  /* The copies' room made once (it had grown by doubling, each time a copy). */
  uint64_t pending = 0;
  for (uint32_t k = 0; ok && k < devices; k++)
    if (lefts[k] > 0) pending += (uint64_t)lefts[k];
  const uint64_t copies = pending < room ? pending : room;
  if (ok && copies > h->cap_blocks) {
    struct sw_leak_stream_row *grown = realloc(h->blocks, copies * sizeof *grown);
    if (grown) h->blocks = grown, h->cap_blocks = copies;
  }
  /* Device by device, as when each was replayed in turn: a replay that
   * failed stops where it did then, after the devices before it (one that
   * filled the room says so in `full`). A device without a window left
   * none and saw no MALLOC: nothing to hand over. */
  for (uint32_t k = 0; ok && k < devices; k++) {
    ok = lefts[k] >= 0;
    if (ok) sw_leak_stream_seen(p->stream, k, last[k]);
    if (ok) ok = hand_left(p, room, h, full, k, left_at + from[k], lefts[k]);
  }
  /* The FREEs a MALLOC still to come may need, in any order: each a look
   * at its Ptr's MALLOCs to come, fetched ahead (a miss a FREE, 1.25M of
   * them). */
  for (uint64_t i = 0; ok && i < n; i++) {
    if (i + FREED_AHEAD < n && a->kind[i + FREED_AHEAD] == 2) {
      const uint8_t *ahead = sw_leak_stream_mallocs_at(p->stream, a->ptr[i + FREED_AHEAD]);
      if (ahead) __builtin_prefetch(ahead);
    }
    const uint32_t k = a->device[i];
    const double id = a->id[i];
    if (k >= devices || a->kind[i] != 2) continue;
    const double *w = a->windows + WINDOW_VALUES * k;
    if (!(id >= w[0] && id <= w[2]) || !sw_leak_stream_remembers(p->stream, k, a->ptr[i], id)) continue;
    struct kept_free *more = one_more(h->frees, h->n_frees, &h->cap_frees, sizeof *h->frees);
    ok = more != NULL;
    if (ok) (h->frees = more)[h->n_frees++] = (struct kept_free){.ptr = a->ptr[i], .id = id, .dev = k};
  }
  free(left_at);
  return ok;
}

/* The rest of what replay_kept copied out, handed to the stream (when
 * `ok`), and the copies freed; false to fall back. */
static bool hand_over(struct sw_leak_stream *s, struct handover *h, bool ok) {
  ok = ok && sw_leak_stream_pending_all(s, h->blocks, h->n_blocks);
  for (uint64_t j = 0; ok && j < h->n_frees; j++) ok = sw_leak_stream_freed(s, h->frees[j].dev, h->frees[j].ptr, h->frees[j].id);
  free(h->blocks);
  free(h->frees);
  /* What malloc kept of the replay's and these copies' memory (tens of
   * MB, held for reuse) goes back before the stream grows. */
  malloc_trim(0);
  return ok;
}

/* A streaming pass (struct sw_leak_scan_args stream): one thread reads the
 * rows, this one replays them in file order (leak_stream.c); the leaks are
 * the rows kept. Room for half the budget, STREAM_ROOM at most, in the
 * memory the rows' arrays held. */
static int32_t stream_pass(struct pass *p) {
  struct sw_leak_scan_args *a = p->a;
  if (!a->window_devices) return SW_LEAK_FALLBACK;
  /* A part reads every row: none are kept for it. */
  if (a->stream_parts > 1 && a->resume_rows) return SW_LEAK_FALLBACK;
  const uint64_t room = a->budget / 2 + 1 < STREAM_ROOM ? a->budget / 2 + 1 : STREAM_ROOM;
  p->stream = sw_leak_stream_new(room);
  if (p->stream) sw_leak_stream_part(p->stream, a->stream_part, a->stream_parts, a->stream_split);
  for (uint32_t k = 0; p->stream && k < a->window_devices && k < MAX_DEVICES; k++) {
    sw_leak_stream_horizon(p->stream, k, a->windows[WINDOW_VALUES * k + 3]);
    sw_leak_stream_window_end(p->stream, k, a->windows[WINDOW_VALUES * k + 2]);
    if (a->windows[WINDOW_VALUES * k + 4] == 1) sw_leak_stream_ids_once(p->stream, k);
  }
  /* What the first pass filled past the rows it kept, where it saw every
   * row: the Ptrs freed, and the MALLOCs to come, for a pass that reads on
   * from those rows. */
  const bool freed_complete = p->stream && a->freed && a->freed_bytes >= SW_LEAK_FREED_BYTES &&
                              sw_leak_freed_state_of(a->freed) == SW_FREED_COMPLETE;
  if (freed_complete && a->unlisted) sw_leak_stream_ptrs_freed(p->stream, a->freed, a->max_listed);
  const bool resumed = p->stream && a->resume_rows;
  if (freed_complete && resumed) sw_leak_stream_mallocs_to_come(p->stream, sw_leak_mallocs(a->freed));
  struct handover kept = {0};
  bool kept_full = false;
  bool ok = p->stream && (!resumed || replay_kept(p, room, &kept, &kept_full));
  /* The rows' arrays, which the first pass filled (103 MB at the default
   * budget), hold only the leaks from here: their pages are given back
   * while the replay needs memory, and a pass after it starts afresh. */
  advise_rows(a, 0, a->cap, sw_pages_forget);
  if (resumed) ok = hand_over(p->stream, &kept, ok);
  if (!ok) {
    a->stream_full = kept_full || (p->stream && sw_leak_stream_full(p->stream));
    sw_leak_stream_free(p->stream);
    p->stream = NULL;
    return SW_LEAK_FALLBACK;
  }
  const uint64_t file_size = file_size_now(a->fd);
  struct stream_reader reader = {.p = p};
  pthread_t thread;
  if (pthread_create(&thread, NULL, stream_reader_main, &reader) != 0) {
    sw_leak_stream_free(p->stream);
    p->stream = NULL;
    return SW_LEAK_FALLBACK;
  }
  bool replayed = sw_leak_stream_run(p->stream);
  pthread_join(thread, NULL);
  a->stream_full = sw_leak_stream_full(p->stream);
  a->stream_parts = sw_leak_stream_parts(p->stream);
  /* A read that failed says so; else a replay that gave up hands over. */
  int32_t result = reader.result;
  if (result == SW_LEAK_DONE && !replayed) result = SW_LEAK_FALLBACK;
  if (result == SW_LEAK_DONE) {
    uint64_t leaks = sw_leak_stream_leaks(p->stream, a->cap, a->kind, a->device, a->id, a->ptr, a->size, a->row_offset,
                                      a->line, &a->odd_ids, a->unlisted);
    if (leaks == UINT64_MAX) result = SW_LEAK_FALLBACK;
    else a->rows_kept = leaks;
  }
  sw_leak_stream_free(p->stream);
  p->stream = NULL;
  return cut_since(a->fd, file_size, result);
}

/*
 * Runs the pass from a->offset to the end of a->fd, keeping rows and marks
 * in the arrays given, and each device's span (struct span: rows, smallest
 * and largest ID, disorder; then 1 where each MALLOC ID of the file came
 * once, else 0: SPAN_VALUES) in `spans`, room for MAX_DEVICES of them. Returns
 * SW_LEAK_DONE, SW_LEAK_FALLBACK, SW_SCAN_CUT, SW_SCAN_TOO_LONG (its line in
 * too_long_line) or -EIO.
 */
SW_EXPORT int32_t stompwatch_leak_scan(struct sw_leak_scan_args *a, uint8_t *kind, uint32_t *device, double *id,
                                       double *ptr, double *size, double *row_offset, uint32_t *line,
                                       uint32_t *mark_device, double *mark_id, const uint8_t *event_type,
                                       const uint8_t *mstx, const double *windows, double *spans, uint64_t *freed,
                                       uint64_t *unlisted) {
  /* Arrays come as arguments: a grant of this library alone may pass them
   * so, not as pointers written into the struct. */
  a->kind = kind;
  a->device = device;
  a->id = id;
  a->ptr = ptr;
  a->size = size;
  a->row_offset = row_offset;
  a->line = line;
  a->mark_device = mark_device;
  a->mark_id = mark_id;
  a->event_type = event_type;
  a->mstx = mstx;
  a->windows = windows;
  a->freed = freed;
  a->unlisted = unlisted;
  for (int c = 0; c < C_COUNT; c++)
    if (a->col[c] >= SW_CSV_MAX_SEPS) return SW_LEAK_FALLBACK;
  if (a->bound_marks < 3 || a->bound_marks > MAX_BOUND_MARKS) a->bound_marks = 0;
  /* A mark's name is compared as its bytes (nameEquals), but as decoded
   * text where both hold a quote: the bytes tell that apart from a field
   * that does not decode (U+FFFD) only in ASCII. */
  if (!sw_csv_ascii(a->event_type, a->event_type + a->event_type_len) ||
      (a->mstx_has_quote && !sw_csv_ascii(a->mstx, a->mstx + a->mstx_len)))
    return SW_LEAK_FALLBACK;
  struct pass p;
  pass_init(&p, a);
  a->halves = 1;
  if (p.freed) sw_leak_freed_state(p.freed, SW_FREED_UNKNOWN);
  /* Set a bit at a time all over: 4 KiB pages missed the TLB each time. */
  if (p.freed) sw_pages_prefer_huge(p.freed, SW_LEAK_FREED_BYTES);
  if (a->stream) return stream_pass(&p);
  /* Filled once, front to back, from fresh pages. */
  advise_rows(a, 0, a->cap, sw_pages_prefer_huge);
  const uint64_t file_size = file_size_now(a->fd);
  /* The second thread starts at what looks like a row start past the
   * middle (row_start.h); when the first thread's rows do not end there (a
   * quoted field holding a newline there), its work is dropped and the
   * first thread reads on alone. */
  struct half *h = NULL;
  pthread_t thread;
  struct shared_bounds shared = {.names = a->device_names, .budget = a->budget};
  for (int k = 0; k < MAX_DEVICES; k++) shared.past[k][0] = shared.past[k][1] = bits_of(__builtin_inf());
  /* A later pass reads only as far as the first did (rows_end): its
   * halves are halves of that, however the file grew since. */
  const uint64_t read_end = rows_end(a) < file_size ? rows_end(a) : file_size;
  if (read_end > a->offset && read_end - a->offset >= SPLIT_MIN) {
    uint64_t split = sw_log_split_point(a->fd, a->offset + (read_end - a->offset) / 2, read_end);
    if (split) h = half_new(a, split);
    if (h) {
      p.shared = h->pass.shared = &shared;
      h->pass.side = 1;
      /* Its own Ptrs freed, merged once it is done: none (all say nothing)
       * where memory is short. */
      h->pass.freed = p.freed ? sw_pages_new(SW_LEAK_FREED_BYTES) : NULL;
      if (h->pass.freed) sw_pages_prefer_huge(h->pass.freed, SW_LEAK_FREED_BYTES);
      if (p.freed && !h->pass.freed) sw_leak_freed_state(p.freed, SW_FREED_UNREADABLE);
    }
    if (h && pthread_create(&thread, NULL, half_main, h) != 0) {
      half_free(h);
      h = NULL;
      p.shared = NULL;
    }
    if (h) {
      p.scan.limit = split;
      p.down = true;
      p.top = a->half_at - 1;
    }
  }
  /* One thread keeps its rows from the start, as far as the arrays go. */
  if (!h) p.room = room_from_base(&p);
  int32_t result = scan_range(&p, a->offset, a->first_line);
  if (h) {
    pthread_join(thread, NULL);
    turn_first_half(&p);
    struct sw_csv_scan *s = &p.scan;
    /* A file cut, or unreadable, under the second half is so for both. */
    if (result == SW_LEAK_DONE && (h->result == SW_SCAN_CUT || h->result < 0)) result = h->result;
    bool joined = result == SW_LEAK_DONE && s->stopped && s->next == h->from &&
                  h->result == SW_LEAK_DONE && join_halves(&p, h, s->next_line);
    a->halves = joined ? 2 : 1;
    if (!joined && result == SW_LEAK_DONE && s->stopped) {
      /* Alone from here: the second half's rows are counted again, after
       * the first's, which move to the start to leave them the room. */
      rows_to_start(&p);
      p.room = room_from_base(&p);
      s->limit = rows_end(a);
      s->stopped = false;
      result = scan_range(&p, s->next, s->next_line);
    }
    /* Its Ptrs freed join the first half's, whether its rows did or not
     * (those read again are the same Ptrs); its IDs where its rows did
     * (else the first thread read them again). */
    if (h->pass.freed_any) sw_leak_freed_merge(p.freed, h->pass.freed);
    /* Its MALLOCs past the rows kept where its rows were joined (its rows
     * read again were counted again). */
    if (joined && h->pass.mallocs_any) sw_leak_mallocs_merge(p.freed, h->pass.freed);
    if (joined) sw_ids_seen_join(&p.ids, &h->pass.ids);
    sw_ids_seen_free(&h->pass.ids);
    half_free(h);
    /* What the second half kept past the rows kept now (past the room, or
     * all of it where the first half stopped keeping) is given back: a
     * streaming pass's replay of the rows kept needs the memory. */
    advise_rows(a, p.base + a->rows_kept, a->cap, sw_pages_forget);
  }
  result = cut_since(a->fd, file_size, result);
  a->first_row = p.base;
  if (a->overflow) {
    a->resume_offset = p.stop_offset;
    a->resume_line = p.stop_line;
    /* The FREEs kept too: the Ptrs freed are then every one of the file's. */
    freed_rows(&p, a, p.base, p.base + a->rows_kept);
    if (p.freed_n) freed_flush(&p);
    if (p.mallocs_n) mallocs_flush(&p);
    if (p.freed && sw_leak_freed_state_of(p.freed) != SW_FREED_UNREADABLE)
      sw_leak_freed_state(p.freed, result == SW_LEAK_DONE ? SW_FREED_COMPLETE : SW_FREED_UNKNOWN);
  }
  /* Room for MAX_DEVICES spans, SPAN_VALUES each. */
  for (uint32_t k = 0; k < a->devices && k < MAX_DEVICES; k++) {
    double *to = spans + SPAN_VALUES * k;
    to[0] = p.spans[k].rows;
    to[1] = p.spans[k].min;
    to[2] = p.spans[k].max;
    to[3] = p.spans[k].disorder;
    to[4] = p.track_ids && result == SW_LEAK_DONE && sw_ids_seen_once(&p.ids);
  }
  sw_ids_seen_free(&p.ids);
  return result;
}
