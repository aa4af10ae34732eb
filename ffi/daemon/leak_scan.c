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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sw_common.h"

enum { SW_LEAK_DONE = 0, SW_LEAK_FALLBACK = 1 };

/* Columns the pass reads, as indices into sw_leak_scan_args.col. */
enum { C_ID, C_EVENT, C_TYPE, C_NAME, C_DEVICE, C_PTR, C_ATTR, C_COUNT };

#define MAX_SEPS 12
#define MAX_DEVICES 256
#define DEVICE_BYTES 64

/* Shared with analysis/leaks/_native_first_pass.ts, field for field. */
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
  /* What to match, as the log spells it (ASCII). */
  const uint8_t *event_type;
  uint32_t event_type_len;
  const uint8_t *mstx;
  uint32_t mstx_len;
  uint32_t mstx_has_quote;
  /* Out: counts, the devices (each DEVICE_BYTES, NUL-padded), errno. */
  uint64_t rows_kept, marks, data_rows, bytes;
  uint32_t overflow, devices, unused[2];
  uint8_t device_names[MAX_DEVICES * DEVICE_BYTES];
};

/* ffi/bindings.ts leakScan writes and reads these offsets. */
_Static_assert(offsetof(struct sw_leak_scan_args, offset) == 40, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, kind) == 48, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, cap) == 104, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, mark_device) == 120, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, event_type) == 144, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, mstx) == 160, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, rows_kept) == 176, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, overflow) == 208, "layout");
_Static_assert(offsetof(struct sw_leak_scan_args, device_names) == 224, "layout");
_Static_assert(sizeof(struct sw_leak_scan_args) == 224 + MAX_DEVICES * DEVICE_BYTES, "layout");

/* A field without its quotes; `quoted` when it had them. */
struct field {
  const uint8_t *s, *e;
  bool quoted, present;
};

struct row {
  const uint8_t *s, *e;
  uint32_t nsep;
  const uint8_t *sep[MAX_SEPS];
};

static struct field field_of(const struct row *r, int col) {
  struct field f = {0};
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

static bool has_doubled_quote(const struct field *f) {
  return f->quoted && memchr(f->s, '"', (size_t)(f->e - f->s)) != NULL;
}

static bool ascii(const uint8_t *s, const uint8_t *e) {
  for (; s < e; s++)
    if (*s >= 0x80) return false;
  return true;
}

/* The field's decoded text equals `want` (ASCII, no quote): a quoted field
 * with a doubled quote decodes to text holding a quote, so it never does. */
static bool text_is(const struct field *f, const uint8_t *want, size_t n) {
  if (!f->present) return n == 0;
  if ((size_t)(f->e - f->s) != n || has_doubled_quote(f)) return false;
  return memcmp(f->s, want, n) == 0;
}

static bool blank(uint8_t c) { return c == ' ' || (c >= 9 && c <= 13); }

/* Digits [s, e) as a double, each step n * 10 + d in doubles as JavaScript
 * does them: exact (and done in integers) up to 15 digits, rounding past. */
static double digits_value(const uint8_t *s, const uint8_t *e) {
  uint64_t n = 0;
  const uint8_t *p = s;
  for (; p < e && p - s < 15; p++) n = n * 10 + (uint64_t)(*p - '0');
  double v = (double)n;
  for (; p < e; p++) v = v * 10 + (*p - '0');
  return v;
}

/* _bytes.ts parseDecimal: Python int() of the bytes, NAN otherwise. */
static double parse_decimal(const uint8_t *s, const uint8_t *e) {
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
    n = digits_value(s, e);
  } else {
    n = 0; /* `_` between digits: as the TypeScript loop, digit by digit */
    for (const uint8_t *p = s; p < e; p++)
      if (*p != '_') n = n * 10 + (*p - '0');
  }
  return neg ? -n : n;
}

/* Hex digit values of lowercase hex, 16 (never a digit) for anything else. */
static const uint8_t HEX[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

/* _leak_rows.ts PtrKeys.of for the two spellings it keys by value; false
 * for any other (the caller falls back). */
static bool ptr_key(const struct field *f, double *key) {
  if (!f->present) return false;
  const uint8_t *s = f->s, *e = f->e;
  if (e - s == 18 && s[0] == '0' && s[1] == 'x') {
    /* Table values are digit + 1, 0 for anything else. */
    uint64_t v = 0;
    unsigned bad = 0;
    for (int i = 2; i < 18; i++) {
      unsigned d = HEX[s[i]];
      bad |= d == 0;
      v = v << 4 | (uint64_t)((d - 1) & 15);
    }
    if (!bad && (v >> 32) <= 0x1fffff) {
      *key = (double)v;
      return true;
    }
  }
  /* ptrDecimal: 1 to 16 digits, no leading zero, at most 2^53 - 1. */
  if (e == s || e - s > 16 || (s[0] == '0' && e - s > 1)) return false;
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

/* MemscopeRow.mallocSize: the digits after the first "size:" that has
 * some, NAN without. */
static double malloc_size(const struct field *f) {
  if (!f->present) return __builtin_nan("");
  const uint8_t *s = f->s, *e = f->e;
  for (const uint8_t *p = s; p + 5 < e; p++) {
    p = memchr(p, 's', (size_t)(e - 5 - p));
    if (p == NULL) break;
    if (p[1] != 'i' || p[2] != 'z' || p[3] != 'e' || p[4] != ':') continue;
    const uint8_t *q = p + 5;
    while (q < e && *q >= '0' && *q <= '9') q++;
    if (q == p + 5) continue;
    double n = digits_value(p + 5, q);
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

struct pass {
  struct sw_leak_scan_args *a;
  /* Rows starting at or past this offset are left for another pass. */
  uint64_t limit;
  bool stopped;
  uint64_t next;      /* where it stopped: the start of the first row left */
  uint32_t next_line; /* and its line */
  uint8_t device_len[MAX_DEVICES];
  /* The last row's Device Id and its index: rows come in runs of one. */
  int last_device;
  size_t last_n;
  uint8_t last_bytes[DEVICE_BYTES];
};

/* The index of a device, made on first sight; -1 for N/A, -2 to fall back. */
static int device_index(struct pass *p, const struct field *f) {
  size_t n = f->present ? (size_t)(f->e - f->s) : 0;
  const uint8_t *s = f->present ? f->s : (const uint8_t *)"";
  /* Before the cache: `a""b` quoted is not the text `a""b` unquoted. */
  if (has_doubled_quote(f)) return -2;
  if (p->last_device != -3 && n == p->last_n && memcmp(s, p->last_bytes, n) == 0) return p->last_device;
  if (!ascii(s, s + n) || n >= DEVICE_BYTES || memchr(s, 0, n)) return -2;
  int k;
  if (n == 3 && memcmp(s, "N/A", 3) == 0) {
    k = -1;
  } else {
    struct sw_leak_scan_args *a = p->a;
    for (k = 0; k < (int)a->devices; k++)
      if (p->device_len[k] == n && memcmp(a->device_names + k * DEVICE_BYTES, s, n) == 0) break;
    if (k == (int)a->devices) {
      if (k == MAX_DEVICES) return -2;
      memcpy(a->device_names + k * DEVICE_BYTES, s, n);
      p->device_len[k] = (uint8_t)n;
      a->devices++;
    }
  }
  p->last_device = k;
  p->last_n = n;
  memcpy(p->last_bytes, s, n);
  return k;
}

/* One data row; false to fall back. */
static bool take_row(struct pass *p, const struct row *r, uint64_t offset, uint32_t line) {
  struct sw_leak_scan_args *a = p->a;
  a->data_rows++;
  struct field dev = field_of(r, a->col[C_DEVICE]);
  int k = device_index(p, &dev);
  if (k == -2) return false;
  if (k < 0) return true;
  struct field ev = field_of(r, a->col[C_EVENT]);
  bool malloc_row = text_is(&ev, (const uint8_t *)"MALLOC", 6);
  bool free_row = !malloc_row && text_is(&ev, (const uint8_t *)"FREE", 4);
  struct field type = field_of(r, a->col[C_TYPE]);
  if (malloc_row || free_row) {
    if (!text_is(&type, a->event_type, a->event_type_len)) return true;
  } else if (!text_is(&ev, (const uint8_t *)"MSTX", 4)) {
    return true;
  }
  struct field idf = field_of(r, a->col[C_ID]);
  double id = idf.present ? parse_decimal(idf.s, idf.e) : __builtin_nan("");
  if (id != id) return true;
  if (malloc_row || free_row) {
    if (a->overflow) return true;
    struct field pf = field_of(r, a->col[C_PTR]);
    double key;
    if (!ptr_key(&pf, &key)) return false;
    uint64_t n = a->rows_kept;
    if (n == a->cap) {
      if (a->cap < a->budget) return false;
      a->overflow = 1;
      return true;
    }
    a->kind[n] = malloc_row ? 1 : 2;
    a->device[n] = (uint32_t)k;
    a->id[n] = id;
    a->ptr[n] = key;
    if (malloc_row) {
      struct field attr = field_of(r, a->col[C_ATTR]);
      a->size[n] = malloc_size(&attr);
      a->row_offset[n] = (double)offset;
      a->line[n] = line;
    } else {
      a->size[n] = 0;
      a->row_offset[n] = 0;
      a->line[n] = 0;
    }
    a->rows_kept = n + 1;
    return true;
  }
  if (!text_is(&type, (const uint8_t *)"Mark", 4)) return true;
  struct field name = field_of(r, a->col[C_NAME]);
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
  if (a->marks == a->mark_cap) return false;
  a->mark_device[a->marks] = (uint32_t)k;
  a->mark_id[a->marks] = id;
  a->marks++;
  return true;
}

/* Bits of the 64 bytes at p that are quotes, newlines and commas (fewer
 * bytes when n < 64). */
struct masks {
  uint64_t quote, newline, comma;
};

static inline struct masks masks_tail(const uint8_t *p, size_t n) {
  struct masks m = {0, 0, 0};
  for (size_t i = 0; i < n && i < 64; i++) {
    m.quote |= (uint64_t)(p[i] == '"') << i;
    m.newline |= (uint64_t)(p[i] == '\n') << i;
    m.comma |= (uint64_t)(p[i] == ',') << i;
  }
  return m;
}

#if defined(__x86_64__)
#include <immintrin.h>
__attribute__((target("avx2"))) static struct masks masks_avx2(const uint8_t *p) {
  const __m256i q = _mm256_set1_epi8('"'), nl = _mm256_set1_epi8('\n'), c = _mm256_set1_epi8(',');
  __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
  struct masks m;
  m.quote = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, q)) |
            (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, q)) << 32;
  m.newline = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl)) |
              (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl)) << 32;
  m.comma = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, c)) |
            (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, c)) << 32;
  return m;
}
#endif

#if defined(__SSE2__)
static inline struct masks masks_sse2(const uint8_t *p) {
  const __m128i q = _mm_set1_epi8('"'), nl = _mm_set1_epi8('\n'), c = _mm_set1_epi8(',');
  struct masks m = {0, 0, 0};
  for (int i = 0; i < 4; i++) {
    __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * i));
    m.quote |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, q)) << (16 * i);
    m.newline |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl)) << (16 * i);
    m.comma |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, c)) << (16 * i);
  }
  return m;
}
#endif

/* Bit i: an odd number of quotes at or before byte i. */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

/*
 * Frames the rows of buf[0, len) (file bytes from `base`) as the WebAssembly
 * scanner does: every quote flips the state, a newline outside quotes ends a
 * row, a trailing \r is left out, empty rows are skipped. Returns how many
 * bytes were consumed (whole rows); *state carries quote parity and lines.
 */
struct frame_state {
  uint64_t inq; /* all ones inside quotes */
  uint32_t line;
};

static int64_t frame(struct pass *p, const uint8_t *buf, size_t len, uint64_t base, bool last,
                     struct frame_state *st) {
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2");
#endif
  struct row r = {.s = buf, .nsep = 0};
  uint32_t line = st->line, rowline = st->line;
  uint64_t inq = st->inq;
  const uint8_t *start = buf;
  for (size_t at = 0; at < len; at += 64) {
    size_t n = len - at < 64 ? len - at : 64;
    const uint8_t *b = buf + at;
    struct masks k;
    if (n < 64) k = masks_tail(b, n);
#if defined(__x86_64__)
    else if (avx2) k = masks_avx2(b);
#endif
#if defined(__SSE2__)
    else k = masks_sse2(b);
#else
    else k = masks_tail(b, n);
#endif
    uint64_t mq = k.quote, mn = k.newline, mc = k.comma;
    uint64_t inside = prefix_xor(mq) ^ inq;
    inq ^= 0 - (uint64_t)(__builtin_popcountll(mq) & 1);
    uint64_t m = (mc & ~inside) | mn;
    while (m) {
      unsigned bit = (unsigned)__builtin_ctzll(m);
      m &= m - 1;
      const uint8_t *pos = b + bit;
      if (mc >> bit & 1) {
        if (r.nsep < MAX_SEPS) r.sep[r.nsep++] = pos;
        continue;
      }
      line++;
      if (inside >> bit & 1) continue;
      r.s = start;
      r.e = pos;
      if (r.e > r.s && r.e[-1] == '\r') r.e--;
      if (r.e > r.s && !take_row(p, &r, base + (uint64_t)(start - buf), rowline)) return -1;
      start = pos + 1;
      rowline = line;
      r.nsep = 0;
      if (base + (uint64_t)(start - buf) >= p->limit) {
        p->stopped = true;
        st->inq = 0;
        st->line = rowline;
        return start - buf;
      }
    }
  }
  if (last && start < buf + len) {
    r.s = start;
    r.e = buf + len;
    if (r.e > r.s && r.e[-1] == '\r') r.e--;
    if (r.e > r.s && !take_row(p, &r, base + (uint64_t)(start - buf), rowline)) return -1;
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

/* Bytes read at a time, and the room in front of them for the row the last
 * read cut: a longer row (a huge call stack) is left to the TypeScript pass. */
#define CHUNK (4u << 20)
#define CARRY (1u << 20)

/* One read on a thread of its own, so the next chunk is read while this
 * one is framed (the kernel's copy took a fifth of the pass). The file is
 * read, not mapped: a log being written may be cut back meanwhile, which a
 * mapping would answer with SIGBUS. */
struct read_job {
  int fd;
  uint8_t *dst;
  size_t want;
  uint64_t offset;
  size_t got;
  int err;
};

static void *read_job_run(void *arg) {
  struct read_job *j = arg;
  j->got = 0;
  j->err = 0;
  while (j->got < j->want) {
    ssize_t n = pread(j->fd, j->dst + j->got, j->want - j->got, (off_t)(j->offset + j->got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      j->err = errno;
      break;
    }
    if (n == 0) break;
    j->got += (size_t)n;
  }
  return NULL;
}

/*
 * Frames the rows from `from` (a row start, on line `line`) to the end of
 * the file, or to the first row starting at p->limit or later. Returns
 * SW_LEAK_DONE, SW_LEAK_FALLBACK, or -errno of a read that failed.
 */
static int32_t scan_range(struct pass *p, uint64_t from, uint32_t line) {
  struct sw_leak_scan_args *a = p->a;
  uint8_t *room = malloc(2 * (size_t)(CARRY + CHUNK));
  if (!room) return -ENOMEM;
  uint8_t *buf[2] = {room, room + CARRY + CHUNK};
  struct frame_state st = {.inq = 0, .line = line};
  struct read_job job = {.fd = a->fd, .dst = buf[0] + CARRY, .want = CHUNK, .offset = from};
  read_job_run(&job);
  int cur = 0;
  size_t carry = 0;
  uint64_t base = from; /* file offset of the carried row's start */
  int32_t result = SW_LEAK_DONE;
  for (;;) {
    if (job.err) {
      result = -job.err;
      break;
    }
    size_t got = job.got;
    bool last = got < CHUNK;
    uint8_t *data = buf[cur] + CARRY - carry;
    pthread_t reader;
    bool reading = false;
    if (!last) {
      job = (struct read_job){.fd = a->fd, .dst = buf[1 - cur] + CARRY, .want = CHUNK,
                              .offset = base + carry + got};
      reading = pthread_create(&reader, NULL, read_job_run, &job) == 0;
      if (!reading) read_job_run(&job);
    }
    int64_t used = frame(p, data, carry + got, base, last, &st);
    if (base + carry + got > a->bytes) a->bytes = base + carry + got;
    if (reading) pthread_join(reader, NULL);
    if (used < 0) {
      result = SW_LEAK_FALLBACK;
      break;
    }
    if (p->stopped) {
      p->next = base + (uint64_t)used;
      p->next_line = st.line;
      break;
    }
    if (last) break;
    size_t left = carry + got - (size_t)used;
    if (left > CARRY) {
      result = SW_LEAK_FALLBACK;
      break;
    }
    memcpy(buf[1 - cur] + CARRY - left, data + used, left);
    base += (uint64_t)used;
    carry = left;
    cur = 1 - cur;
  }
  free(room);
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

/* The start of the first row after the first newline past `mid`, or 0. */
static uint64_t split_point(int fd, uint64_t mid) {
  uint8_t probe[64 << 10];
  ssize_t got = pread(fd, probe, sizeof probe, (off_t)mid);
  if (got <= 0) return 0;
  const uint8_t *nl = memchr(probe, '\n', (size_t)got);
  return nl ? mid + (uint64_t)(nl - probe) + 1 : 0;
}

static void half_free(struct half *h) {
  struct sw_leak_scan_args *b = &h->args;
  free(b->kind);
  free(b->device);
  free(b->id);
  free(b->ptr);
  free(b->size);
  free(b->row_offset);
  free(b->line);
  free(b->mark_device);
  free(b->mark_id);
  free(h);
}

/* A second pass over [split, end) with arrays of its own; NULL when it
 * cannot be had (then one thread reads the whole file). */
static struct half *half_new(const struct sw_leak_scan_args *a, uint64_t split) {
  struct half *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  struct sw_leak_scan_args *b = &h->args;
  *b = *a;
  b->rows_kept = b->marks = b->data_rows = b->bytes = 0;
  b->overflow = b->devices = 0;
  uint64_t rows = a->cap < a->budget / 2 + 1 ? a->cap : a->budget / 2 + 1;
  size_t n = rows ? rows : 1, m = a->mark_cap ? a->mark_cap : 1;
  b->kind = malloc(n);
  b->device = malloc(n * sizeof *b->device);
  b->id = malloc(n * sizeof *b->id);
  b->ptr = malloc(n * sizeof *b->ptr);
  b->size = malloc(n * sizeof *b->size);
  b->row_offset = malloc(n * sizeof *b->row_offset);
  b->line = malloc(n * sizeof *b->line);
  b->mark_device = malloc(m * sizeof *b->mark_device);
  b->mark_id = malloc(m * sizeof *b->mark_id);
  if (!b->kind || !b->device || !b->id || !b->ptr || !b->size || !b->row_offset || !b->line ||
      !b->mark_device || !b->mark_id) {
    half_free(h);
    return NULL;
  }
  /* Half the budget at most (the caller's arrays hold the rest): a half
   * with more rows than that is read on by the first thread instead. */
  b->cap = a->cap < a->budget / 2 + 1 ? a->cap : a->budget / 2 + 1;
  b->budget = UINT64_MAX;
  h->pass = (struct pass){.a = b, .limit = UINT64_MAX, .last_device = -3};
  h->from = split;
  return h;
}

/*
 * Appends the second half's findings to the first's, as one pass over the
 * whole file would have made them: its devices after the first's (those
 * new to the first half), its lines counted on from `line` (the line of
 * the row where it began). False to fall back.
 */
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
  if (devices > MAX_DEVICES || a->marks + b->marks > a->mark_cap) return false;
  if (!a->overflow && total > a->cap && a->cap < a->budget) return false;
  for (uint32_t k = 0; k < b->devices; k++) {
    if ((uint32_t)map[k] < a->devices) continue;
    memcpy(a->device_names + map[k] * DEVICE_BYTES, b->device_names + k * DEVICE_BYTES, DEVICE_BYTES);
    p->device_len[map[k]] = h->pass.device_len[k];
  }
  a->devices = devices;
  if (a->marks + b->marks > a->mark_cap) return false;
  for (uint64_t i = 0; i < b->marks; i++) {
    a->mark_device[a->marks] = (uint32_t)map[b->mark_device[i]];
    a->mark_id[a->marks++] = b->mark_id[i];
  }
  a->data_rows += b->data_rows;
  if (b->bytes > a->bytes) a->bytes = b->bytes;
  if (a->overflow) return true;
  if (total > a->cap) {
    a->overflow = 1;
    return true;
  }
  for (uint64_t i = 0, n = a->rows_kept; i < b->rows_kept; i++, n++) {
    a->kind[n] = b->kind[i];
    a->device[n] = (uint32_t)map[b->device[i]];
    a->id[n] = b->id[i];
    a->ptr[n] = b->ptr[i];
    a->size[n] = b->size[i];
    a->row_offset[n] = b->row_offset[i];
    /* FREE rows keep no line. */
    a->line[n] = b->kind[i] == 1 ? b->line[i] + line : 0;
  }
  a->rows_kept = total;
  return true;
}

/*
 * Runs the pass from a->offset to the end of a->fd, keeping rows and marks
 * in the arrays given. Returns SW_LEAK_DONE,
 * SW_LEAK_FALLBACK, or -errno of a read that failed.
 */
SW_EXPORT int32_t stompwatch_leak_scan(struct sw_leak_scan_args *a, uint8_t *kind, uint32_t *device, double *id,
                                       double *ptr, double *size, double *row_offset, uint32_t *line,
                                       uint32_t *mark_device, double *mark_id, const uint8_t *event_type,
                                       const uint8_t *mstx) {
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
  for (int c = 0; c < C_COUNT; c++)
    if (a->col[c] >= MAX_SEPS) return SW_LEAK_FALLBACK;
  if (!ascii(a->event_type, a->event_type + a->event_type_len) || !ascii(a->mstx, a->mstx + a->mstx_len))
    return SW_LEAK_FALLBACK;
  struct pass p = {.a = a, .limit = UINT64_MAX, .last_device = -3};
  struct stat info;
  uint64_t file_size = fstat(a->fd, &info) == 0 ? (uint64_t)info.st_size : 0;
  /* The second thread starts after the first newline past the middle,
   * taken as a row start; when the first thread's rows do not end there (a
   * quoted field holding a newline across the middle), its work is dropped
   * and the first thread reads on alone. */
  struct half *h = NULL;
  pthread_t thread;
  if (file_size > a->offset && file_size - a->offset >= SPLIT_MIN) {
    uint64_t split = split_point(a->fd, a->offset + (file_size - a->offset) / 2);
    if (split) h = half_new(a, split);
    if (h && pthread_create(&thread, NULL, half_main, h) != 0) {
      half_free(h);
      h = NULL;
    }
    if (h) p.limit = split;
  }
  int32_t result = scan_range(&p, a->offset, a->first_line);
  if (h) {
    pthread_join(thread, NULL);
    bool joined = result == SW_LEAK_DONE && p.stopped && p.next == h->from &&
                  h->result == SW_LEAK_DONE && join_halves(&p, h, p.next_line);
    if (!joined && result == SW_LEAK_DONE && p.stopped) {
      p.limit = UINT64_MAX;
      p.stopped = false;
      result = scan_range(&p, p.next, p.next_line);
    }
    half_free(h);
  }
  return result;
}
