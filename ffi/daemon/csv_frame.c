/*
 * csv_frame.c: the row framer of csv_frame.h, shared by the daemon
 * library's native passes over an event log.
 */
#define _GNU_SOURCE
#include "csv_frame.h"
#include "csv_masks.h"
#include "mapped_log.h"
#include "ts_row_room.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static bool blank(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

double sw_csv_digits_value(const uint8_t *s, const uint8_t *e) {
  uint64_t n = 0;
  const uint8_t *p = s;
  for (; p < e && p - s < 15; p++) n = n * 10 + (uint64_t)(*p - '0');
  double v = (double)n;
  for (; p < e; p++) v = v * 10 + (*p - '0');
  return v;
}

double sw_csv_parse_decimal(const uint8_t *s, const uint8_t *e) {
  /* Nearly every field is 1 to 15 plain digits: one loop reads and checks
   * them, and gives what the general way below gives. */
  if (e > s && e - s <= 15) {
    uint64_t n = 0;
    const uint8_t *p = s;
    for (; p < e && (unsigned)(*p - '0') <= 9; p++) n = n * 10 + (uint64_t)(*p - '0');
    if (p == e) return (double)n;
  }
  while (s < e && blank(*s)) s++;
  while (e > s && blank(e[-1])) e--;
  bool neg = false;
  if (s < e && (*s == '-' || *s == '+')) {
    neg = *s == '-';
    s++;
  }
  if (s == e) return __builtin_nan("");
  bool plain = true;
  for (const uint8_t *p = s; p < e; p++) {
    if ((unsigned)(*p - '0') <= 9) continue;
    if (*p != '_' || p == s || p == e - 1 || p[-1] == '_') return __builtin_nan("");
    plain = false;
  }
  double n;
  if (plain) {
    n = sw_csv_digits_value(s, e);
  } else {
    n = 0; /* `_` between digits: as the TypeScript loop, digit by digit */
    for (const uint8_t *p = s; p < e; p++)
      if (*p != '_') n = n * 10 + (*p - '0');
  }
  return neg ? -n : n;
}

/*
 * Frames the rows of buf[0, len) (file bytes from `base`, 64 bytes past
 * them readable) as the WebAssembly
 * scanner does: every quote flips the state, a newline outside quotes ends a
 * row, a trailing \r is left out, empty rows are skipped. Returns how many
 * bytes were consumed (whole rows); *state carries quote parity and lines.
 */
struct frame_state {
  uint64_t inq; /* all ones inside quotes */
  uint32_t line;
};

/* Appends the separators b + each bit of m to sep from *n, while there is
 * room (SW_CSV_MAX_SEPS): a row's, at its end, or the block's rest, which
 * the next row begins with. */
static inline __attribute__((always_inline)) void take_seps(const uint8_t **sep, uint32_t *n, const uint8_t *b,
                                                            uint64_t m) {
  for (; m && *n < SW_CSV_MAX_SEPS; m &= m - 1) sep[(*n)++] = b + __builtin_ctzll(m);
}

/* frame's answer for a row the TypeScript reader refuses (ts_row_room.h),
 * beside -1 for a row `take` refused: the scan ends with SW_SCAN_TOO_LONG,
 * the row's line in next_line. */
#define REFUSED (-2)
static int64_t refuse(struct sw_csv_scan *sc, uint32_t line) {
  sc->next_line = line;
  return REFUSED;
}

static inline __attribute__((always_inline)) int64_t frame_with(struct sw_csv_scan *sc, const uint8_t *buf,
                                                                size_t len, uint64_t base, bool last,
                                                                struct frame_state *st, const bool avx2) {
  struct sw_csv_row r = {.s = buf, .nsep = 0};
  uint32_t line = st->line, rowline = st->line;
  uint64_t inq = st->inq;
  const uint8_t *start = buf;
  /* Kept in a register, not in r, until a row is handed over: stored
   * through r each comma made a chain of loads and stores. */
  uint32_t nsep = 0, block_line = line;
  for (size_t at = 0; at < len; at += 64) {
    const uint8_t *b = buf + at;
    const struct sw_csv_masks k = sw_csv_masks(b, len - at < 64 ? len - at : 64, avx2);
    struct sw_csv_block blk = sw_csv_block_of(k, &inq);
    /* Row by row (sw_csv_next_end). Every newline counts a line, quoted
     * ones too. */
    while (blk.ends) {
      const struct sw_csv_end end = sw_csv_next_end(&blk);
      take_seps(r.sep, &nsep, b, end.seps);
      const uint8_t *pos = b + end.bit;
      line = block_line + (uint32_t)__builtin_popcountll(k.newline & end.through);
      r.s = start;
      r.e = pos;
      r.nsep = nsep;
      if (r.e > r.s && r.e[-1] == '\r') r.e--;
      if (r.e > r.s && !sc->take(sc->ctx, &r, base + (uint64_t)(start - buf), rowline)) return -1;
      start = pos + 1;
      rowline = line;
      nsep = 0;
      if (base + (uint64_t)(start - buf) >= sc->limit) {
        sc->stopped = true;
        st->inq = 0;
        st->line = rowline;
        return start - buf;
      }
    }
    take_seps(r.sep, &nsep, b, blk.seps);
    block_line += (uint32_t)__builtin_popcountll(k.newline);
    line = block_line;
  }
  r.nsep = nsep;
  if (last && start < buf + len) {
    if (sw_ts_refuses_row(base + (uint64_t)(start - buf), base + len, true)) return refuse(sc, rowline);
    r.s = start;
    r.e = buf + len;
    if (r.e > r.s && r.e[-1] == '\r') r.e--;
    if (r.e > r.s && !sc->take(sc->ctx, &r, base + (uint64_t)(start - buf), rowline)) return -1;
    start = buf + len;
  }
  /* The unfinished row is framed again with the next bytes: its lines and
   * quotes are counted then. A row starts outside quotes (the newline that
   * ended the one before was outside them). */
  if (start < buf + len) {
    if (start > buf) st->inq = 0;
    st->line = rowline;
  } else {
    st->inq = inq;
    st->line = line;
  }
  return start - buf;
}

/* The step inlined in each: a call per 64 bytes to the AVX2 masks cost a
 * tenth of a pass. */
#if defined(__x86_64__)
__attribute__((target("avx2,popcnt,bmi"), flatten)) static int64_t frame_avx2(struct sw_csv_scan *sc, const uint8_t *buf,
                                                                   size_t len, uint64_t base, bool last,
                                                                   struct frame_state *st) {
  return frame_with(sc, buf, len, base, last, st, true);
}
#endif

static int64_t frame(struct sw_csv_scan *sc, const uint8_t *buf, size_t len, uint64_t base, bool last,
                     struct frame_state *st) {
#if defined(__x86_64__)
  if (sw_csv_avx2()) return frame_avx2(sc, buf, len, base, last, st);
#endif
  return frame_with(sc, buf, len, base, last, st, false);
}

/* The steps a log is framed in. A row over several steps is framed again
 * from its start at each, a few times for the longest the TypeScript
 * reader takes (SW_TS_LONGEST_ROW); the rows it refuses are refused here
 * with its message, not left to it (3-6 s to read a 1 GB log). */
#define CHUNK (4u << 20)

/* Whether the TypeScript reader refuses the row at `from` (a row start,
 * outside quotes, unfinished CHUNK bytes before `to`) that ends before
 * `to`. Only such a row, carried from one step to the next, can be over
 * 16 MiB in a step: asked here, once a step, rather than of every row. */
static bool refuses_carried(const struct sw_mapped_log *m, uint64_t from, uint64_t to) {
  const uint8_t *p = m->bytes + (from - m->from), *e = p + (to - from);
  const uint8_t *newline = sw_csv_row_end(p, e);
  /* Unfinished: asked at the step's end. */
  return newline < e && sw_ts_refuses_row(from, from + (uint64_t)(newline - p), false);
}

/* A scan over a mapped log, in CHUNK steps. */
struct mapped_scan {
  struct sw_csv_scan *sc;
  struct sw_mapped_log *m;
  uint32_t line;
  int32_t result;
};

static void scan_mapped(void *arg) {
  struct mapped_scan *j = arg;
  struct sw_csv_scan *sc = j->sc;
  struct sw_mapped_log *m = j->m;
  struct frame_state st = {.inq = 0, .line = j->line};
  uint64_t base = m->from, end = m->from;
  j->result = SW_SCAN_DONE;
  for (;;) {
    end = m->size - end < CHUNK ? m->size : end + CHUNK;
    bool last = end == m->size;
    int64_t used = end - base > SW_TS_ROOM && refuses_carried(m, base, end)
                       ? refuse(sc, st.line)
                       : frame(sc, m->bytes + (base - m->from), (size_t)(end - base), base, last, &st);
    if (end > sc->bytes) sc->bytes = end;
    if (used < 0) {
      j->result = used == REFUSED ? SW_SCAN_TOO_LONG : SW_SCAN_FALLBACK;
      return;
    }
    base += (uint64_t)used;
    sw_mapped_log_release(m, base);
    if (sc->stopped) {
      sc->next = base;
      sc->next_line = st.line;
      return;
    }
    if (last) return;
    if (sw_ts_refuses_row(base, end, false)) {
      refuse(sc, st.line);
      j->result = SW_SCAN_TOO_LONG;
      return;
    }
  }
}

int32_t sw_csv_scan_range(struct sw_csv_scan *sc, uint64_t from, uint32_t line) {
  struct sw_mapped_log m;
  /* A file that cannot be mapped (a filesystem without mmap): the
   * TypeScript pass reads it. */
  if (!sw_mapped_log_open(sc->fd, from, &m)) return SW_SCAN_FALLBACK;
  sw_mapped_log_end_at(&m, sc->end);
  /* Shorter than the first pass read: its last rows are gone, and the one
   * it now ends in is cut (read as it stands, its device was ""). */
  if (sc->end && m.size < sc->end) {
    sw_mapped_log_close(&m);
    return SW_SCAN_CUT;
  }
  struct mapped_scan job = {.sc = sc, .m = &m, .line = line};
  enum sw_mapped_end end = sw_mapped_run(&m, scan_mapped, &job);
  sw_mapped_log_close(&m);
  return end == SW_MAPPED_WHOLE ? job.result : end == SW_MAPPED_CUT ? SW_SCAN_CUT : -EIO;
}

