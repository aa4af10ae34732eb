/*
 * csv_header.c: an event log's first line, read as
 * analysis/memscope_csv/header.ts reads it (columns found by name, in any
 * order and case, the first of a name winning; any Timestamp column will
 * do) and refused with its messages, which never quote the line.
 */
#include "analysis.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const char *const HEADER[12] = {
    "ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id",
    "Thread Id", "Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)",
};

/* header.ts normalise (trim, lower case) of one name, as far as a match
 * with an ASCII name can tell: only the Kelvin sign lowers into ASCII. */
static void normalise(struct sw_bytes *out, const uint8_t *s, const uint8_t *e) {
    sw_js_trim(&s, &e);
    out->n = 0;
    sw_bytes_reserve(out, (size_t)(e - s) + 1);
    for (const uint8_t *p = s; p < e; p++) {
        uint8_t c = *p;
        if (c >= 'A' && c <= 'Z') c += 32;
        if (c == 0xe2 && e - p >= 3 && p[1] == 0x84 && p[2] == 0xaa) {
            c = 'k';
            p += 2;
        }
        out->p[out->n++] = c;
    }
}

static bool equals_lower(const struct sw_bytes *n, const char *name) {
    size_t len = strlen(name);
    if (n->n != len) return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c >= 'A' && c <= 'Z') c += 32;
        if (n->p[i] != (uint8_t)c) return false;
    }
    return true;
}

/* header.ts splitHeader: a field that opens with a quote runs to its
 * closing quote (doubled quotes are one), the rest of it up to the next
 * comma is dropped. Calls `name` for each field. */
static int split_header(const uint8_t *s, const uint8_t *e, struct sw_bytes *names,
                        size_t **ends) {
    int n = 0;
    size_t cap = 16;
    *ends = malloc(cap * sizeof **ends);
    const uint8_t *i = s;
    for (;;) {
        if (i < e && *i == '"') {
            const uint8_t *j = i + 1;
            for (;;) {
                const uint8_t *q = memchr(j, '"', (size_t)(e - j));
                if (!q) {
                    sw_bytes_put(names, j, (size_t)(e - j));
                    j = e;
                    break;
                }
                sw_bytes_put(names, j, (size_t)(q - j));
                if (q + 1 < e && q[1] == '"') {
                    sw_bytes_put(names, "\"", 1);
                    j = q + 2;
                } else {
                    j = q + 1;
                    break;
                }
            }
            i = j;
        } else {
            const uint8_t *c = memchr(i, ',', (size_t)(e - i));
            sw_bytes_put(names, i, (size_t)((c ? c : e) - i));
        }
        if ((size_t)n == cap) *ends = realloc(*ends, (cap *= 2) * sizeof **ends);
        (*ends)[n++] = names->n;
        const uint8_t *c = i < e ? memchr(i, ',', (size_t)(e - i)) : NULL;
        if (!c) break;
        i = c + 1;
    }
    return n;
}

bool sw_csv_header(const uint8_t *s, const uint8_t *e, const char *label,
                   struct sw_csv_cols *cols, struct sw_error *err) {
    struct sw_bytes line = {0}, names = {0}, norm = {0};
    sw_utf8_sanitize(&line, s, e);
    if (line.n && memchr(line.p, 0, line.n)) {
        sw_fail(err, SW_ERR_CSV,
                "Not a CSV file: %s holds binary data; pass an msMemScope event log (memscope_dump_*.csv)",
                label);
        sw_bytes_free(&line);
        return false;
    }
    size_t *ends;
    const uint8_t *ls = line.p ? line.p : (const uint8_t *)"";
    int n = split_header(ls, ls + line.n, &names, &ends);
    int at[12];
    for (int k = 0; k < 12; k++) at[k] = -1;
    int stamp = -1;
    for (int i = 0; i < n; i++) {
        size_t from = i ? ends[i - 1] : 0;
        normalise(&norm, names.p + from, names.p + ends[i]);
        for (int k = 0; k < 12; k++)
            if (at[k] < 0 && equals_lower(&norm, HEADER[k])) at[k] = i;
        if (stamp < 0 && norm.n >= 9 && memcmp(norm.p, "timestamp", 9) == 0) stamp = i;
    }
    free(ends);
    sw_bytes_free(&line);
    sw_bytes_free(&names);
    sw_bytes_free(&norm);
    /* Older builds wrote other units; any Timestamp column will do. */
    if (at[4] < 0) at[4] = stamp;
    if (at[0] < 0 || at[1] < 0) {
        sw_fail(err, SW_ERR_CSV,
                "Not an msMemScope event log: %s has no ID and Event columns in its first line; pass a memscope_dump_*.csv file (its header is ID,Event,Event Type,...)",
                label);
        return false;
    }
    char missing[512] = "";
    int nmissing = 0;
    for (int k = 0; k < 10; k++) {
        if (at[k] >= 0) continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s\"%s\"", nmissing ? ", " : "", HEADER[k]);
        nmissing++;
    }
    if (nmissing) {
        sw_fail(err, SW_ERR_CSV,
                "Wrong header in %s: missing column%s %s; msMemScope writes ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)",
                label, nmissing > 1 ? "s" : "", missing);
        return false;
    }
    cols->id = at[0];
    cols->event = at[1];
    cols->type = at[2];
    cols->ts = at[4];
    cols->pid = at[5];
    cols->device = at[7];
    cols->ptr = at[8];
    cols->attr = at[9];
    cols->py = at[10];
    cols->c = at[11];
    int used[] = {cols->id, cols->event, cols->type, cols->ts, cols->pid,
                  cols->device, cols->ptr, cols->attr, cols->py, cols->c};
    cols->maxcol = 0;
    for (size_t k = 0; k < sizeof used / sizeof *used; k++)
        if (used[k] > cols->maxcol) cols->maxcol = used[k];
    return true;
}
