/*
 * memory_row.c: one CSV row to a memory row, by rows.ts readMemoryRows'
 * rules and MemscopeRow's getters (memscope_csv/row.ts, _bytes.ts): MALLOC
 * and FREE rows of every pool (HAL, HOST, HOST_PINNED are segments, the
 * rest blocks) and OOM_DETAIL rows; numbers read from the bytes between
 * the quotes, texts decoded as TextDecoder does.
 */
#include "analysis.h"
#include "digits.h"

#include <math.h>
#include <string.h>

#define MAX_SAFE 9007199254740991.0

static inline double parse_decimal(const uint8_t *s, const uint8_t *e) {
    double v;
    return sw_plain_digits(s, e, &v) ? v : sw_parse_decimal(s, e);
}

static bool field(const struct sw_csv_row *r, int col, const uint8_t **s, const uint8_t **e) {
    if (col < 0 || col > r->nsep) return false;
    *s = col == 0 ? r->s : r->seps[col - 1] + 1;
    *e = col < r->nsep ? r->seps[col] : r->e;
    return true;
}

/* The field without its quotes (doubled quotes left as they are). */
static bool inner(const struct sw_csv_row *r, int col, const uint8_t **s, const uint8_t **e) {
    if (!field(r, col, s, e)) return false;
    if (*e - *s >= 2 && (*s)[0] == '"' && (*e)[-1] == '"') {
        (*s)++;
        (*e)--;
    }
    return true;
}

static bool is_word(const uint8_t *s, const uint8_t *e, const char *w) {
    size_t n = strlen(w);
    return (size_t)(e - s) == n && memcmp(s, w, n) == 0;
}

/* The field's text, in scratch from `at` on. */
static void text(const struct sw_csv_row *r, int col, struct sw_bytes *scratch) {
    const uint8_t *s, *e;
    if (field(r, col, &s, &e)) sw_field_text(scratch, s, e);
}

enum { EV_OTHER, EV_MALLOC, EV_FREE, EV_OOM };

static int event_of(const struct sw_csv_row *r, int col, struct sw_bytes *scratch) {
    const uint8_t *s, *e;
    if (!field(r, col, &s, &e) || s == e) return EV_OTHER;
    if (*s == '"') {
        scratch->n = 0;
        sw_field_text(scratch, s, e);
        s = scratch->p;
        e = s + scratch->n;
    }
    if (is_word(s, e, "MALLOC")) return EV_MALLOC;
    if (is_word(s, e, "FREE")) return EV_FREE;
    if (is_word(s, e, "OOM_DETAIL")) return EV_OOM;
    return EV_OTHER;
}

static bool runtime_pool(const struct sw_csv_row *r, int col, struct sw_bytes *scratch) {
    const uint8_t *s, *e;
    if (!field(r, col, &s, &e)) return false;
    if (e > s && *s == '"') {
        scratch->n = 0;
        sw_field_text(scratch, s, e);
        s = scratch->p;
        e = s + scratch->n;
    }
    return is_word(s, e, "HAL") || is_word(s, e, "HOST") || is_word(s, e, "HOST_PINNED");
}

/* The first ',' or '}' in [w, e), else e: 8 bytes a step, as the log's
 * mapping has bytes to read past any field's end (the lowest byte flagged
 * is exact; flags past it may not be). */
static inline const uint8_t *value_end(const uint8_t *w, const uint8_t *e) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    for (; w < e; w += 8) {
        uint64_t x;
        memcpy(&x, w, 8);
        const uint64_t comma = x ^ (ones * ','), brace = x ^ (ones * '}');
        const uint64_t found = ((comma - ones) & ~comma & highs) | ((brace - ones) & ~brace & highs);
        if (found) {
            w += __builtin_ctzll(found) / 8;
            return w < e ? w : e;
        }
    }
    return e;
}

/* _bytes.ts findAttrValue: the value of `key` in an Attr map, after `{`,
 * `,` or a space only. Inlined where it is called, so that the key's
 * length and comparison are worked out when compiled. */
static inline __attribute__((always_inline)) bool attr_value(const uint8_t *s, const uint8_t *e,
                                                             const char *key, const uint8_t **vs,
                                                             const uint8_t **ve) {
    size_t kn = strlen(key);
    for (const uint8_t *i = s; i + kn < e; i++) {
        i = memchr(i, key[0], (size_t)(e - i));
        if (!i || i + kn >= e) return false;
        if (memcmp(i, key, kn) != 0) continue;
        uint8_t before = i == s ? '{' : i[-1];
        if (before != '{' && before != ',' && before != ' ') continue;
        if (i[kn] != ':') continue;
        const uint8_t *v = i + kn + 1;
        while (v < e && *v == ' ') v++;
        *vs = v;
        *ve = value_end(v, e);
        return true;
    }
    return false;
}

/* MemscopeRow.size: NaN when absent or not a number. */
static double attr_size(const struct sw_csv_row *r, int col) {
    const uint8_t *s, *e, *vs, *ve;
    if (!inner(r, col, &s, &e) || !attr_value(s, e, "size", &vs, &ve)) return NAN;
    return parse_decimal(vs, ve);
}

/* Hex digit values; 0xff for other bytes. */
static const uint8_t HEX[256] = {
    ['0'] = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, [':' ... '@'] = 0xff,
    ['A'] = 10, 11, 12, 13, 14, 15, ['G' ... '`'] = 0xff,
    ['a'] = 10, 11, 12, 13, 14, 15, ['g' ... 0xff] = 0xff, [0 ... '/'] = 0xff,
};

/* _bytes.ts parseAddress; false for N/A, junk, or past 2^53 - 1 (a bigint
 * there, which rows.ts leaves out). */
static bool address(const struct sw_csv_row *r, int col, double *out) {
    const uint8_t *s, *e;
    if (!inner(r, col, &s, &e)) return false;
    while (s < e && *s == ' ') s++;
    while (e > s && e[-1] == ' ') e--;
    if (s == e) return false;
    if (e - s > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
        if (e - s <= 18) {
            /* At most 16 digits: exact in 64 bits; a table look-up a digit. */
            uint64_t n = 0;
            for (const uint8_t *i = s + 2; i < e; i++) {
                uint8_t d = HEX[*i];
                if (d > 15) return false;
                n = n << 4 | d;
            }
            if (n > (1ull << 53) - 1) return false;
            *out = (double)(int64_t)n;
            return true;
        }
        uint64_t n = 0;
        for (const uint8_t *i = s + 2; i < e; i++) {
            int c = *i, d;
            if (c <= '9') d = c - '0';
            else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
            else d = -1;
            if (d < 0 || d > 15) return false;
            if (n > (1ull << 53)) continue; /* a bigint whatever follows */
            n = n * 16 + (uint64_t)d;
        }
        if (n > (1ull << 53) - 1) return false;
        *out = (double)n;
        return true;
    }
    double n = parse_decimal(s, e); /* msMemScope's own logs: plain digits */
    if (isnan(n) || n < 0 || n > MAX_SAFE) return false;
    *out = n;
    return true;
}

/* rows.ts MAX_DEVICES: a Device Id past it is read as N/A. */
#define MAX_DEVICES (1 << 16)

/* rows.ts deviceCode on the Device Id text. */
static int32_t device_code(const struct sw_csv_row *r, int col, struct sw_bytes *scratch) {
    const uint8_t *s, *e;
    if (!field(r, col, &s, &e)) return SW_NO_DEVICE;
    /* The common case: plain digits. */
    if (e > s && e - s <= 7) {
        int32_t n = 0;
        const uint8_t *p = s;
        while (p < e && *p >= '0' && *p <= '9') n = n * 10 + (*p++ - '0');
        if (p == e) return n < MAX_DEVICES ? n : SW_NO_DEVICE;
    }
    scratch->n = 0;
    sw_field_text(scratch, s, e);
    s = scratch->p;
    e = s + scratch->n;
    if (is_word(s, e, "cpu") || is_word(s, e, "host")) return SW_CPU_DEVICE;
    if (s == e) return SW_NO_DEVICE;
    double n = sw_js_number(s, e);
    if (n == trunc(n) && n >= 0 && n < MAX_DEVICES) return (int32_t)n;
    return SW_NO_DEVICE;
}

/* MemscopeRow.timestampUs through rows.ts timeUs: 0 when unreadable. */
static double time_us(const struct sw_csv_row *r, int col) {
    const uint8_t *s, *e;
    if (!inner(r, col, &s, &e)) return 0;
    const uint8_t *us_end = e - s >= 18 ? e - 3 : e;
    double us;
    /* Plain digits are a whole number below 2^53: nothing more to check. */
    if (sw_plain_digits(s, us_end, &us)) return us;
    us = sw_parse_decimal(s, us_end);
    return us == trunc(us) && fabs(us) <= MAX_SAFE && us >= 0 ? us : 0;
}

static double decimal(const struct sw_csv_row *r, int col) {
    const uint8_t *s, *e;
    return inner(r, col, &s, &e) ? parse_decimal(s, e) : NAN;
}

/* Whether the row is stamped after the caller's limit (Number(timestamp)). */
static bool too_late(const struct sw_csv_row *r, const struct sw_csv_cols *cols,
                     const struct sw_read_options *opt, struct sw_bytes *scratch) {
    if (!opt->has_until) return false;
    scratch->n = 0;
    text(r, cols->ts, scratch);
    return sw_js_number(scratch->p, scratch->p + scratch->n) > opt->until_ns;
}

static int32_t stack_of(struct sw_rows *rows, const struct sw_csv_cols *cols,
                        const struct sw_csv_row *r, struct sw_bytes *scratch) {
    const uint8_t *s, *e;
    bool py = field(r, cols->py, &s, &e) && e > s;
    bool c = field(r, cols->c, &s, &e) && e > s;
    if (!py && !c) return 0;
    scratch->n = 0;
    text(r, cols->py, scratch);
    size_t npy = scratch->n;
    sw_bytes_put(scratch, "", 1);
    text(r, cols->c, scratch);
    return sw_rows_stack(rows, scratch->p, scratch->n, npy);
}

void sw_memory_row(struct sw_rows *rows, const struct sw_csv_cols *cols,
                   const struct sw_read_options *opt, const struct sw_csv_row *r,
                   struct sw_bytes *scratch) {
    int ev = event_of(r, cols->event, scratch);
    if (ev == EV_OTHER) return;
    double pid = decimal(r, cols->pid);
    if (opt->has_pid && pid != opt->pid) return;
    if (too_late(r, cols, opt, scratch)) return;
    double size = attr_size(r, cols->attr);
    size = isnan(size) ? 0 : fabs(size);
    if (ev == EV_OOM) {
        const uint8_t *s, *e, *vs, *ve;
        double free_bytes = 0;
        if (inner(r, cols->attr, &s, &e) &&
            (attr_value(s, e, "device_free", &vs, &ve) || attr_value(s, e, "free", &vs, &ve))) {
            scratch->n = 0;
            sw_utf8_sanitize(scratch, vs, ve);
            free_bytes = sw_js_number(scratch->p, scratch->p + scratch->n);
            if (!isfinite(free_bytes)) free_bytes = 0;
        }
        int32_t device = device_code(r, cols->device, scratch);
        if (opt->skip_host && device == SW_CPU_DEVICE) return;
        int32_t stack = stack_of(rows, cols, r, scratch);
        sw_rows_append(rows, K_OOM, device, decimal(r, cols->id), time_us(r, cols->ts), pid,
                       free_bytes, size, stack);
        return;
    }
    int32_t device = device_code(r, cols->device, scratch);
    if (opt->skip_host && device == SW_CPU_DEVICE) return;
    double addr;
    /* Past 2^53 two addresses could be one number: no device maps so high. */
    if (!address(r, cols->ptr, &addr) || (ev == EV_MALLOC && size == 0)) {
        rows->skipped++;
        return;
    }
    bool block = !runtime_pool(r, cols->type, scratch);
    int kind = ev == EV_MALLOC ? (block ? K_BLK_ALLOC : K_SEG_ALLOC) : (block ? K_BLK_FREE : K_SEG_FREE);
    int32_t stack = stack_of(rows, cols, r, scratch);
    sw_rows_append(rows, kind, device, decimal(r, cols->id), time_us(r, cols->ts), pid, addr,
                   size, stack);
}
