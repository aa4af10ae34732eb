/*
 * compare_log.c: compare's pass over one event log in native code. The
 * TypeScript collector (analysis/compare/_step.ts) handed every row to
 * JavaScript; this keeps the same rows with the same numbers, framed by
 * csv_frame.c, its texts decoded as TextDecoder decodes them. Whatever
 * it cannot read with certainty of the same answer (an ID that is not a
 * number; a device number of 16 digits or more; a needed column past the
 * twelfth) makes it answer
 * SW_SCAN_FALLBACK, and the TypeScript reader runs instead.
 */
#include "compare_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "csv_frame.h"

static uint64_t hash_bytes(const uint8_t *s, size_t n) { return XXH3_64bits(s, n); }

static bool texts_rehash(struct cmp_texts *t, uint32_t size) {
  uint32_t *slot = calloc(size, sizeof *slot);
  if (!slot) return false;
  for (uint32_t i = 0; i < t->count; i++) {
    uint32_t s = i ? t->end[i - 1] : 0;
    uint32_t at = (uint32_t)hash_bytes(t->bytes + s, t->end[i] - s) & (size - 1);
    while (slot[at]) at = (at + 1) & (size - 1);
    slot[at] = i + 1;
  }
  free(t->slot);
  t->slot = slot;
  t->mask = size - 1;
  return true;
}

int32_t cmp_text_id(struct cmp_texts *t, const uint8_t *s, size_t n) {
  if (!t->slot && !texts_rehash(t, 64)) return -1;
  uint32_t at = (uint32_t)hash_bytes(s, n) & t->mask;
  for (uint32_t id; (id = t->slot[at]); at = (at + 1) & t->mask) {
    uint32_t from = id > 1 ? t->end[id - 2] : 0;
    if (t->end[id - 1] - from == n && memcmp(t->bytes + from, s, n) == 0) return (int32_t)(id - 1);
  }
  if (t->len + n > UINT32_MAX || t->count >= INT32_MAX / 2) return -1;
  if (t->len + n > t->cap) {
    size_t cap = t->cap ? t->cap : 4096;
    while (cap < t->len + n) cap *= 2;
    uint8_t *bytes = realloc(t->bytes, cap);
    if (!bytes) return -1;
    t->bytes = bytes;
    t->cap = cap;
  }
  if (t->count == t->room) {
    uint32_t room = t->room ? 2 * t->room : 64;
    uint32_t *end = realloc(t->end, room * sizeof *end);
    if (!end) return -1;
    t->end = end;
    t->room = room;
  }
  memcpy(t->bytes + t->len, s, n);
  t->len += n;
  t->end[t->count] = (uint32_t)t->len;
  uint32_t id = t->count++;
  t->slot[at] = id + 1;
  if (2 * t->count > t->mask && !texts_rehash(t, 2 * (t->mask + 1))) return -1;
  return (int32_t)id;
}

/* The bytes of [s, e) as TextDecoder decodes them and the CSV writer
 * encodes them again, into `out` (room for 3 bytes a byte): each maximal
 * part of an ill-formed sequence becomes U+FFFD, and a U+FEFF it starts
 * with goes (each field is decoded alone). Its length. */
static size_t utf8_decoded(const uint8_t *s, const uint8_t *e, uint8_t *out) {
  static const uint8_t replacement[3] = {0xef, 0xbf, 0xbd};
  uint8_t *o = out;
  while (s < e) {
    uint8_t c = *s;
    if (c < 0x80) {
      *o++ = c;
      s++;
      continue;
    }
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    /* Only the second byte has bounds of its own. */
    uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    uint8_t hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    size_t k = 1;
    while (k < n && s + k < e && s[k] >= lo && s[k] <= hi) {
      lo = 0x80;
      hi = 0xbf;
      k++;
    }
    /* Cut short, the byte that cut it is read again as a start. */
    memcpy(o, k == n ? s : replacement, k == n ? n : 3);
    o += k == n ? n : 3;
    s += k;
  }
  size_t len = (size_t)(o - out);
  if (len >= 3 && out[0] == 0xef && out[1] == 0xbb && out[2] == 0xbf) {
    memmove(out, out + 3, len - 3);
    len -= 3;
  }
  return len;
}

/* At least `n` bytes of scratch room; false out of memory. */
static bool scratch_room(struct cmp_log *L, size_t n) {
  if (n <= L->scratch_room) return true;
  uint8_t *room = realloc(L->scratch, n);
  if (!room) return false;
  L->scratch = room;
  L->scratch_room = n;
  return true;
}

/* The text id of a field as MemscopeRow decodes it (decodeQuoted: UTF-8
 * decoded, a quoted field's doubled quotes undone); -1 out of memory. */
static int32_t field_text(struct cmp_log *L, const struct sw_csv_field *f) {
  if (!f->present) return cmp_text_id(&L->texts, (const uint8_t *)"", 0);
  const uint8_t *s = f->s;
  size_t n = (size_t)(f->e - f->s);
  if (!sw_csv_ascii(s, f->e)) {
    if (!scratch_room(L, 3 * n)) return -1;
    n = utf8_decoded(s, f->e, L->scratch);
    s = L->scratch;
  }
  if (sw_csv_has_doubled_quote(f)) {
    /* In place when decoded: a byte is never written ahead of one read. */
    if (s != L->scratch && !scratch_room(L, n)) return -1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      L->scratch[k++] = s[i];
      if (s[i] == '"' && i + 1 < n && s[i + 1] == '"') i++;
    }
    s = L->scratch;
    n = k;
  }
  return cmp_text_id(&L->texts, s, n);
}

/* The device of a Device Id field: its index, -1 when the text is not all
 * digits (N/A, cpu, host), -2 to fall back or out of memory. */
static int device_of(struct cmp_log *L, const struct sw_csv_field *f) {
  size_t n = f->present ? (size_t)(f->e - f->s) : 0;
  const uint8_t *s = f->present ? f->s : (const uint8_t *)"";
  if (L->last_device != -3 && n == L->last_len && f->quoted == L->last_quoted && n <= sizeof L->last_bytes &&
      memcmp(s, L->last_bytes, n) == 0)
    return L->last_device;
  bool digits = n > 0;
  for (size_t i = 0; i < n && digits; i++) digits = s[i] >= '0' && s[i] <= '9';
  int k = -1;
  if (digits) {
    size_t z = 0;
    while (z + 1 < n && s[z] == '0') z++;
    if (n - z > 15) return -2;
    double number = sw_csv_digits_value(s + z, s + n);
    for (k = 0; k < (int)L->ndev && L->devices[k].number != number; k++) {
    }
    if (k == (int)L->ndev) {
      if (L->ndev == L->devroom) {
        size_t room = L->devroom ? 2 * L->devroom : 8;
        struct cmp_device *d = realloc(L->devices, room * sizeof *d);
        if (!d) return -2;
        L->devices = d;
        L->devroom = room;
      }
      L->devices[L->ndev++] = (struct cmp_device){.number = number};
    }
  }
  if (n <= sizeof L->last_bytes) {
    L->last_device = k;
    L->last_len = n;
    L->last_quoted = f->quoted;
    memcpy(L->last_bytes, s, n);
  }
  return k;
}

static bool is_aligned_type(const struct cmp_log *L, const struct sw_csv_field *type) {
  if (L->levels & CMP_LEVEL_OP) {
    if (sw_csv_text_is(type, (const uint8_t *)"ATEN_END", 8) || sw_csv_text_is(type, (const uint8_t *)"ATB_END", 7))
      return true;
  }
  return (L->levels & CMP_LEVEL_KERNEL) && sw_csv_text_is(type, (const uint8_t *)"KERNEL_LAUNCH", 13);
}

/* Eight ASCII digits at p as a number; false when one is not a digit. */
static inline bool eight_digits(const uint8_t *p, uint64_t *out) {
  uint64_t x;
  memcpy(&x, p, 8);
  if (((x & 0xf0f0f0f0f0f0f0f0ull) | (((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) >> 4)) !=
      0x3333333333333333ull)
    return false;
  x -= 0x3030303030303030ull;
  x = x * 10 + (x >> 8);
  *out = (((x & 0x000000ff000000ffull) * (100 + (1000000ull << 32))) +
          (((x >> 16) & 0x000000ff000000ffull) * (1 + (10000ull << 32)))) >> 32;
  return true;
}

/* _step.ts #time: ns since the log's first second, Infinity when the
 * stamp is not all digits; the same double arithmetic (its digit by digit
 * sums are exact below 2^53, so whole numbers stand in for them there). */
static double time_of(struct cmp_log *L, const struct sw_csv_field *f) {
  if (!f->present || f->s == f->e) return INFINITY;
  const uint8_t *cut = f->e - 9 > f->s ? f->e - 9 : f->s;
  uint64_t whole = 0, nsec = 0, hi, lo;
  double sec;
  /* msMemScope's own stamps: 10 digits of seconds, 9 of nanoseconds. */
  if (f->e - f->s == 19 && eight_digits(f->s, &hi) && eight_digits(f->s + 10, &lo) &&
      (unsigned)(f->s[8] - '0') <= 9 && (unsigned)(f->s[9] - '0') <= 9 && (unsigned)(f->s[18] - '0') <= 9) {
    sec = (double)(hi * 100 + (uint64_t)(f->s[8] - '0') * 10 + (uint64_t)(f->s[9] - '0'));
    nsec = lo * 10 + (uint64_t)(f->s[18] - '0');
  } else {
    for (const uint8_t *p = cut; p < f->e; p++) {
      unsigned d = (unsigned)(*p - '0');
      if (d > 9) return INFINITY;
      nsec = nsec * 10 + d;
    }
    if (cut - f->s <= 15) {
      for (const uint8_t *p = f->s; p < cut; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return INFINITY;
        whole = whole * 10 + d;
      }
      sec = (double)whole;
    } else {
      sec = 0;
      for (const uint8_t *p = f->s; p < cut; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return INFINITY;
        sec = sec * 10 + d;
      }
    }
  }
  if (isnan(L->first_second)) L->first_second = sec;
  return (sec - L->first_second) * 1e9 + (double)nsec;
}

/* MemscopeRow.size ?? 0: findAttrValue(attr, "size"), then parseDecimal. */
static double attr_size(const struct sw_csv_field *f) {
  if (!f->present) return 0;
  const uint8_t *s = f->s, *e = f->e;
  for (const uint8_t *i = s; i + 4 < e; i++) {
    i = memchr(i, 's', (size_t)(e - 4 - i));
    if (!i) break;
    if (i[1] != 'i' || i[2] != 'z' || i[3] != 'e' || i[4] != ':') continue;
    uint8_t before = i == s ? '{' : i[-1];
    if (before != '{' && before != ',' && before != ' ') continue;
    const uint8_t *v = i + 5;
    while (v < e && *v == ' ') v++;
    const uint8_t *w = v;
    while (w < e && *w != ',' && *w != '}') w++;
    double n = sw_csv_parse_decimal(v, w);
    return isnan(n) ? 0 : n;
  }
  return 0;
}

static bool push_row(struct cmp_device *d, const struct cmp_row *r) {
  if (d->n == d->cap) {
    size_t cap = d->cap ? 2 * d->cap : 1024;
    struct cmp_row *rows = realloc(d->rows, cap * sizeof *rows);
    if (!rows) return false;
    d->rows = rows;
    d->cap = cap;
  }
  d->rows[d->n++] = *r;
  return true;
}

/* _step.ts Collector.add, row for row. */
static bool take_row(void *ctx, const struct sw_csv_row *r, uint64_t offset, uint32_t line) {
  (void)offset, (void)line;
  struct cmp_log *L = ctx;
  struct sw_csv_field type = sw_csv_field_of(r, L->col[CMP_TYPE]);
  uint8_t pool = sw_csv_text_is(&type, (const uint8_t *)"PTA", 3)         ? CMP_PTA
                 : sw_csv_text_is(&type, (const uint8_t *)"MINDSPORE", 9) ? CMP_MINDSPORE
                                                                           : 0;
  L->frameworks |= pool;
  struct sw_csv_field dev = sw_csv_field_of(r, L->col[CMP_DEVICE]);
  int k = device_of(L, &dev);
  if (k == -2) return false;
  if (k < 0) return true;
  L->device_rows++;
  if (!pool && !is_aligned_type(L, &type)) return true;
  struct sw_csv_field ts = sw_csv_field_of(r, L->col[CMP_TS]);
  struct sw_csv_field idf = sw_csv_field_of(r, L->col[CMP_ID]);
  struct cmp_row row = {.time = time_of(L, &ts), .kind = pool};
  row.id = idf.present ? sw_csv_parse_decimal(idf.s, idf.e) : NAN;
  /* NaN would make the sort's order the sort's own business. */
  if (isnan(row.id) || isnan(row.time)) return false;
  if (pool) {
    struct sw_csv_field attr = sw_csv_field_of(r, L->col[CMP_ATTR]);
    row.size = attr_size(&attr);
  } else {
    L->aligned++;
    struct sw_csv_field name = sw_csv_field_of(r, L->col[CMP_NAME]);
    struct sw_csv_field event = sw_csv_field_of(r, L->col[CMP_EVENT]);
    row.name = field_text(L, &name);
    size_t n = event.present ? (size_t)(event.e - event.s) : 0;
    if (L->last_event >= 0 && !event.quoted && n == L->last_event_len && memcmp(event.s, L->last_event_bytes, n) == 0) {
      row.event = L->last_event;
    } else {
      row.event = row.name < 0 ? -1 : field_text(L, &event);
      bool plain = event.present && !event.quoted && n <= sizeof L->last_event_bytes;
      L->last_event = plain ? row.event : -1;
      L->last_event_len = n;
      if (plain) memcpy(L->last_event_bytes, event.s, n);
    }
    if (row.name < 0 || row.event < 0) return false;
  }
  return push_row(&L->devices[k], &row);
}

int32_t cmp_log_read(struct cmp_log *L) {
  for (int c = 0; c < CMP_COLS; c++)
    if (L->col[c] < 0 || L->col[c] >= SW_CSV_MAX_SEPS) return SW_SCAN_FALLBACK;
  L->first_second = NAN;
  L->last_device = -3;
  L->last_event = -1;
  struct sw_csv_scan scan = {.fd = L->fd, .take = take_row, .ctx = L, .limit = UINT64_MAX};
  int32_t result = sw_csv_scan_range(&scan, L->offset, L->line);
  if (result == SW_SCAN_TOO_LONG) L->line = scan.next_line;
  return result;
}

static bool before(const struct cmp_row *x, const struct cmp_row *y) {
  return x->time < y->time || (x->time == y->time && x->id < y->id);
}

/* The first of rows[lo, hi) (sorted) that `r` comes before, or hi; with
 * `or_equal`, the first that does not come before r. */
static size_t search(const struct cmp_row *rows, size_t lo, size_t hi, const struct cmp_row *r, bool or_equal) {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    bool right = or_equal ? before(&rows[mid], r) : !before(r, &rows[mid]);
    if (right) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/*
 * A stable merge sort (Array.prototype.sort's order for ties), in place.
 * Rows come nearly in order (a log written at free time is out of order by
 * a few dozen rows): each merge moves only where its two runs overlap, so
 * a pass costs little more than finding the overlap.
 */
static void merge_sort(struct cmp_row *rows, struct cmp_row *tmp, size_t n) {
  for (size_t s = 0; s < n; s += 32) {
    size_t e = s + 32 < n ? s + 32 : n;
    for (size_t i = s + 1; i < e; i++) {
      struct cmp_row r = rows[i];
      size_t j = i;
      for (; j > s && before(&r, &rows[j - 1]); j--) rows[j] = rows[j - 1];
      rows[j] = r;
    }
  }
  for (size_t w = 32; w < n; w *= 2) {
    for (size_t s = 0; s + w < n; s += 2 * w) {
      size_t mid = s + w, e = s + 2 * w < n ? s + 2 * w : n;
      if (!before(&rows[mid], &rows[mid - 1])) continue;
      /* Left rows up to rows[mid] stay, as do right rows from the last
       * left row on (equal rows: the left one first). */
      size_t i = search(rows, s, mid, &rows[mid], false);
      size_t j = search(rows, mid, e, &rows[mid - 1], true);
      memcpy(tmp, rows + i, (mid - i) * sizeof *rows);
      size_t a = 0, an = mid - i, b = mid, k = i;
      while (a < an && b < j) rows[k++] = before(&rows[b], &tmp[a]) ? rows[b++] : tmp[a++];
      while (a < an) rows[k++] = tmp[a++];
    }
  }
}

bool cmp_log_sort(struct cmp_log *L) {
  for (size_t k = 0; k < L->ndev; k++) {
    struct cmp_device *d = &L->devices[k];
    size_t i = 1;
    while (i < d->n && !before(&d->rows[i], &d->rows[i - 1])) i++;
    if (i >= d->n) continue;
    struct cmp_row *tmp = malloc(d->n * sizeof *tmp);
    if (!tmp) return false;
    merge_sort(d->rows, tmp, d->n);
    free(tmp);
  }
  return true;
}

void cmp_log_free(struct cmp_log *L) {
  for (size_t k = 0; k < L->ndev; k++) free(L->devices[k].rows);
  free(L->devices);
  free(L->texts.bytes);
  free(L->texts.end);
  free(L->texts.slot);
  free(L->scratch);
  L->devices = NULL;
  L->ndev = L->devroom = 0;
  L->texts = (struct cmp_texts){0};
  L->scratch = NULL;
}
