/*
 * frames.c: the frames of one stack column, as rows.ts parseFrames reads
 * them: one frame a line (or `;`-separated), as `file(line): name`,
 * `file:line name` or `name at file:line`; a frame in no such shape keeps
 * its text as the name. Its three regular expressions are matched here by
 * hand, with JavaScript's meaning of `.` (no line terminator) and `\s`.
 */
#include "analysis.h"

#include <stdlib.h>
#include <string.h>

static bool digit(uint8_t c) { return c >= '0' && c <= '9'; }

static bool has_terminator(const uint8_t *s, const uint8_t *e) {
    for (const uint8_t *p = s; p < e; p++)
        if (sw_js_terminator(p, e)) return true;
    return false;
}

static const uint8_t *skip_space(const uint8_t *p, const uint8_t *e) {
    int k;
    while ((k = sw_js_space(p, e)) > 0) p += k;
    return p;
}

static double number_of(const uint8_t *s, const uint8_t *e) {
    char buf[64];
    size_t n = (size_t)(e - s);
    if (n < sizeof buf) {
        memcpy(buf, s, n);
        buf[n] = 0;
        return strtod(buf, NULL);
    }
    char *big = malloc(n + 1);
    if (!big) abort();
    memcpy(big, s, n);
    big[n] = 0;
    double v = strtod(big, NULL);
    free(big);
    return v;
}

static void push(struct sw_rows *r, const uint8_t *fs, const uint8_t *fe, double line,
                 const uint8_t *ns, const uint8_t *ne) {
    sw_rows_add_frame(r, fs, (size_t)(fe - fs), line, ns, (size_t)(ne - ns));
}

/* /^(.*?)\((\d+)\):?\s*(.*)$/ and /^(.*?):(\d+)\s+(.*)$/ */
static bool paren_or_colon(struct sw_rows *r, const uint8_t *s, const uint8_t *e, bool paren) {
    for (const uint8_t *i = s; i < e; i++) {
        if (sw_js_terminator(i, e)) return false; /* `.*?` stops here */
        if (*i != (paren ? '(' : ':')) continue;
        const uint8_t *j = i + 1, *k = j;
        while (k < e && digit(*k)) k++;
        if (k == j) continue;
        const uint8_t *m = k;
        if (paren) {
            if (m >= e || *m != ')') continue;
            m++;
            if (m < e && *m == ':') m++;
        } else if (sw_js_space(m, e) == 0) {
            continue;
        }
        m = skip_space(m, e);
        if (has_terminator(m, e)) continue;
        push(r, s, i, number_of(j, k), m, e);
        return true;
    }
    return false;
}

/* /^(.*) at (.*?):(\d+)$/ */
static bool at_form(struct sw_rows *r, const uint8_t *s, const uint8_t *e) {
    if (has_terminator(s, e)) return false;
    const uint8_t *colon = NULL;
    for (const uint8_t *p = e; p > s; p--)
        if (p[-1] == ':') {
            colon = p - 1;
            break;
        }
    if (!colon || colon + 1 == e) return false;
    for (const uint8_t *p = colon + 1; p < e; p++)
        if (!digit(*p)) return false;
    for (const uint8_t *p = colon - 4; p >= s && colon - s >= 4; p--) {
        if (memcmp(p, " at ", 4) == 0) {
            push(r, p + 4, colon, number_of(colon + 1, e), s, p);
            return true;
        }
        if (p == s) break;
    }
    return false;
}

static void one_frame(struct sw_rows *r, const uint8_t *s, const uint8_t *e) {
    sw_js_trim(&s, &e);
    if (s == e) return;
    if (paren_or_colon(r, s, e, true) || paren_or_colon(r, s, e, false) || at_form(r, s, e))
        return;
    push(r, s, s, 0, s, e);
}

void sw_parse_frames(struct sw_rows *r, const uint8_t *s, size_t n) {
    const uint8_t *e = s + n, *from = s;
    for (const uint8_t *p = s; p < e; p++) {
        if (*p == ';') {
            one_frame(r, from, p);
            from = p + 1;
        } else if (*p == '\n') {
            one_frame(r, from, p > from && p[-1] == '\r' ? p - 1 : p);
            from = p + 1;
        }
    }
    one_frame(r, from, e);
}
