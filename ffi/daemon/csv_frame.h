/*
 * csv_frame.h: the event-log row framer the daemon library's native passes
 * share (check_leaks' first pass in leak_scan.c, compare's in
 * compare_scan.c): rows framed 64 bytes at a time with quote, newline and
 * comma masks as analysis/memscope_csv/_scan.wat frames them, read on a
 * thread of their own, and the field helpers that read them the way the
 * TypeScript reader's MemscopeRow does.
 */
#ifndef STOMPWATCH_CSV_FRAME_H
#define STOMPWATCH_CSV_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What a pass answers: done, "let the TypeScript pass do it", "the file
 * got shorter while it was read", or "a row runs on further than the
 * TypeScript reader takes" (ts_row_room.h; its line in `next_line`):
 * ffi/bindings.ts words them. */
enum { SW_SCAN_DONE = 0, SW_SCAN_FALLBACK = 1, SW_SCAN_CUT = 2, SW_SCAN_TOO_LONG = 3 };

/* Separators kept per row: twice the twelve columns msMemScope writes, so
 * that a log with columns added before those the passes read (a later
 * version's, a tool's own) is still theirs: with Attr as the 13th column,
 * check-leaks and compare fell back to TypeScript, 3-5x slower. */
#define SW_CSV_MAX_SEPS 24

/* A field without its quotes; `quoted` when it had them. */
struct sw_csv_field {
  const uint8_t *s, *e;
  bool quoted, present;
};

struct sw_csv_row {
  const uint8_t *s, *e;
  uint32_t nsep;
  const uint8_t *sep[SW_CSV_MAX_SEPS];
};

/* The first newline outside quotes in [s, e), s a row start (outside
 * quotes), or e: where the framer ends that row, found byte by byte for a
 * row looked at alone (one carried over steps, one read back). */
static inline const uint8_t *sw_csv_row_end(const uint8_t *s, const uint8_t *e) {
  bool quoted = false;
  for (; s < e; s++) {
    if (*s == '"') quoted = !quoted;
    else if (!quoted && *s == '\n') return s;
  }
  return e;
}

/* Field `col` of a row, as MemscopeRow locates it (absent: !present). */
static inline struct sw_csv_field sw_csv_field_of(const struct sw_csv_row *r, int col) {
  struct sw_csv_field f = {0};
  if (col < 0 || (uint32_t)col > r->nsep) return f;
  const uint8_t *s = col == 0 ? r->s : r->sep[col - 1] + 1;
  const uint8_t *e = (uint32_t)col < r->nsep ? r->sep[col] : r->e;
  f.present = true;
  if (e - s >= 2 && s[0] == '"' && e[-1] == '"') {
    f.s = s + 1;
    f.e = e - 1;
    f.quoted = true;
  } else {
    f.s = s;
    f.e = e;
  }
  return f;
}

static inline bool sw_csv_has_doubled_quote(const struct sw_csv_field *f) {
  return f->quoted && memchr(f->s, '"', (size_t)(f->e - f->s)) != NULL;
}

static inline bool sw_csv_ascii(const uint8_t *s, const uint8_t *e) {
  for (; s < e; s++)
    if (*s >= 0x80) return false;
  return true;
}

/* Whether the field's decoded text can be n bytes of ASCII without a
 * quote, before its bytes are compared: a quoted field with a doubled quote
 * decodes to text holding a quote, so it never is; an absent field reads
 * as "". */
static inline bool sw_csv_text_fits(const struct sw_csv_field *f, size_t n) {
  if (!f->present) return n == 0;
  return (size_t)(f->e - f->s) == n && !sw_csv_has_doubled_quote(f);
}

/* The field's decoded text equals `want` (ASCII, no quote). */
static inline bool sw_csv_text_is(const struct sw_csv_field *f, const uint8_t *want, size_t n) {
  return sw_csv_text_fits(f, n) && (!f->present || memcmp(f->s, want, n) == 0);
}

/* Whether the n bytes at s and t are the same, where 8 bytes can be read
 * at each: a field of a mapped log (64 readable bytes follow its last),
 * or a copy padded so. Short texts (a Device Id, an Event Type) are
 * compared in one load each: a call to memcmp for a length known only at
 * run time cost more than the comparison. */
static inline bool sw_csv_short_equal(const uint8_t *s, const uint8_t *t, size_t n) {
  if (n > 8) return memcmp(s, t, n) == 0;
  uint64_t x, y;
  memcpy(&x, s, 8);
  memcpy(&y, t, 8);
  const uint64_t keep = n == 8 ? ~0ull : (1ull << (8 * n)) - 1;
  return ((x ^ y) & keep) == 0;
}

/* sw_csv_text_is for a `want` that 8 bytes can be read at (a padded copy). */
static inline bool sw_csv_padded_text_is(const struct sw_csv_field *f, const uint8_t *want, size_t n) {
  return sw_csv_text_fits(f, n) && (!f->present || sw_csv_short_equal(f->s, want, n));
}

/* Digits [s, e) as a double, each step n * 10 + d in doubles as JavaScript
 * does them: exact (and done in integers) up to 15 digits, rounding past. */
double sw_csv_digits_value(const uint8_t *s, const uint8_t *e);

/* _bytes.ts parseDecimal: Python int() of the bytes, NAN otherwise. */
double sw_csv_parse_decimal(const uint8_t *s, const uint8_t *e);

/* A row of the file: false stops the scan with SW_SCAN_FALLBACK. */
typedef bool (*sw_csv_take_fn)(void *ctx, const struct sw_csv_row *r, uint64_t offset, uint32_t line);

/* One scan of a file's rows, from a row start to the end or to `limit`. */
struct sw_csv_scan {
  int fd;
  sw_csv_take_fn take;
  void *ctx;
  /* Rows starting at or past this offset are left for another scan. */
  uint64_t limit;
  /* The file taken to end here where it is longer (0: where it ends): a
   * pass after a first one reads the bytes that one read, its last row
   * cut where that one found it cut, however the file grew since; a file
   * now shorter is SW_SCAN_CUT. */
  uint64_t end;
  /* Out: whether it stopped at `limit`, and where (a row start, its line);
   * with SW_SCAN_TOO_LONG, next_line is the refused row's line. */
  bool stopped;
  uint64_t next;
  uint32_t next_line;
  /* Out: the end of the furthest byte read. */
  uint64_t bytes;
};

/*
 * Frames the rows from `from` (a row start, on line `line`) to the end of
 * the file, or to the first row starting at s->limit or later, handing each
 * to s->take, through a mapping of the file (reading/mapped_log.h).
 * Returns SW_SCAN_DONE, SW_SCAN_FALLBACK (take said so, or the file cannot
 * be mapped), SW_SCAN_CUT, SW_SCAN_TOO_LONG, or -EIO (a page of the file
 * could not be read).
 */
int32_t sw_csv_scan_range(struct sw_csv_scan *s, uint64_t from, uint32_t line);

#endif
