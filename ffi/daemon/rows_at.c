/*
 * rows_at.c: the bytes of the rows that start at given offsets of an event
 * log, copied in one call off the event loop. check_leaks reads its listed
 * leaks' rows back for what its arrays do not hold; a seek and a read
 * awaited per row from JavaScript cost it about 45 us a row, 45 ms for a
 * thousand leaks, a third of a whole check of a memory-heavy log.
 *
 * Each copy runs from its offset through the end of the first row that is
 * not empty (a newline outside quotes, a trailing \r allowed), or to the end
 * of the file: the TypeScript framer (analysis/memscope_csv/read.ts
 * frameOneRow) then frames the copy exactly as it would the file there. A
 * row the TypeScript reader refuses as running on (ts_row_room.h) is
 * refused: every other is copied however long.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "csv_frame.h"
#include "mapped_log.h"
#include "sw_common.h"
#include "ts_row_room.h"

/* What a call answers, beside SW_SCAN_FALLBACK (the file cannot be mapped:
 * the caller reads it itself), SW_SCAN_CUT and -EIO: numbers of its own
 * (ROWS_FULL is csv_frame.h's SW_SCAN_TOO_LONG, which it never answers). */
enum { ROWS_DONE = 0, ROWS_FULL = 3, ROWS_TOO_LONG = 4 };

/* Shared with ffi/bindings.ts rowsAt, field for field. */
struct sw_rows_at_args {
  int32_t fd;
  int32_t status;
  uint64_t count;   /* offsets, ascending */
  uint64_t done;    /* in and out: rows copied by earlier calls, then this one */
  uint64_t cap;     /* bytes of out */
  uint64_t need;    /* out, with ROWS_FULL and nothing copied: room the next row needs */
  uint64_t ends;    /* room in ends: rows one call copies at most */
  /* The log taken to end here where it is longer (0: where it ends): the
   * bytes the offsets were read from, a row then half written copied as
   * it was. */
  uint64_t end;
};

_Static_assert(offsetof(struct sw_rows_at_args, done) == 16, "layout");
_Static_assert(offsetof(struct sw_rows_at_args, need) == 32, "layout");
_Static_assert(sizeof(struct sw_rows_at_args) == 56, "layout");

struct copy_job {
  struct sw_rows_at_args *a;
  struct sw_mapped_log *m;
  const double *offsets;
  uint8_t *out;
  uint32_t *ends;
};

/* Where the copy of the row at `at` ends (a file offset), or 0 when the
 * TypeScript reader refuses it. */
static uint64_t copy_end(const struct sw_mapped_log *m, uint64_t at) {
  const uint8_t *p = m->bytes + (at - m->from), *end = m->bytes + (m->size - m->from);
  for (const uint8_t *s = p;;) {
    /* A row with no newline within SW_TS_LONGEST_ROW bytes is refused
     * wherever the reads end in it: looked for no further. */
    const uint8_t *limit = end - s > (ptrdiff_t)SW_TS_LONGEST_ROW ? s + SW_TS_LONGEST_ROW + 1 : end;
    const uint8_t *q = sw_csv_row_end(s, limit);
    if (q == limit && limit < end) return 0;
    const uint64_t row = at + (uint64_t)(s - p);
    if (q == end) return sw_ts_refuses_row(row, m->size, true) ? 0 : m->size;
    /* An empty row (nothing, or a lone \r) is skipped, as the framer does:
     * the quote state starts afresh with the next one. */
    if (q > s && !(q == s + 1 && *s == '\r'))
      return sw_ts_refuses_row(row, at + (uint64_t)(q - p), false) ? 0 : at + (uint64_t)(q + 1 - p);
    s = q + 1;
  }
}

static void copy_rows(void *arg) {
  struct copy_job *j = arg;
  struct sw_rows_at_args *a = j->a;
  uint64_t used = 0, first = a->done;
  a->status = ROWS_DONE;
  for (; a->done < a->count; a->done++) {
    uint64_t at = (uint64_t)j->offsets[a->done];
    if (at < j->m->from) { /* not ascending: the mapping starts past it */
      a->status = -EINVAL;
      return;
    }
    uint64_t end = at < j->m->size ? copy_end(j->m, at) : at;
    if (at < j->m->size && end == 0) {
      a->status = ROWS_TOO_LONG;
      return;
    }
    if (end - at > a->cap - used || a->done - first == a->ends) {
      if (a->done == first && a->ends) a->need = end - at;
      a->status = ROWS_FULL;
      return;
    }
    memcpy(j->out + used, j->m->bytes + (at - j->m->from), (size_t)(end - at));
    used += end - at;
    j->ends[a->done - first] = (uint32_t)used;
    /* The pages behind are not read again. */
    sw_mapped_log_release(j->m, at);
  }
}

/*
 * Copies the rows at offsets[done...] into out, one after another, ends[k]
 * the end in out of the k-th copied. Returns ROWS_DONE, ROWS_FULL (call
 * again for the rest), ROWS_TOO_LONG (the row at offsets[done]),
 * SW_SCAN_FALLBACK, SW_SCAN_CUT, -EIO or -EINVAL (offsets not ascending). An offset at or past the end of the
 * file copies nothing.
 */
SW_EXPORT int32_t stompwatch_rows_at(struct sw_rows_at_args *a, const double *offsets, uint8_t *out, uint32_t *ends) {
  if (a->done >= a->count) return ROWS_DONE;
  if (a->cap > UINT32_MAX) a->cap = UINT32_MAX;
  struct sw_mapped_log m;
  if (!sw_mapped_log_open(a->fd, (uint64_t)offsets[a->done], &m)) return SW_SCAN_FALLBACK;
  sw_mapped_log_end_at(&m, a->end);
  struct copy_job job = {a, &m, offsets, out, ends};
  enum sw_mapped_end end = sw_mapped_run(&m, copy_rows, &job);
  sw_mapped_log_close(&m);
  return end == SW_MAPPED_WHOLE ? a->status : end == SW_MAPPED_CUT ? SW_SCAN_CUT : -EIO;
}
