/*
 * row_order.c: a list of memory rows put in time order, as rows.ts orders
 * them: by timestamp, stably, then each run of one timestamp by ID (NaN IDs
 * included, through the same comparison).
 */
#define _GNU_SOURCE
#include "analysis.h"
#include "two_threads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lists this long are put in time order a half a thread, then merged. */
#define TWO_HALVES_MIN (1u << 17)
/* Lists falling in time at most once in this many rows are put in order by
 * insertion (order_runs_in_place). */
#define FEW_FALLS 64
#define MOST_STEPS 4

/* Sorts a[s..e) by ids, then by position, as rows.ts sortRunById. */
static int by_id_then_pos(const void *x, const void *y, void *ids) {
    uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
    const double *cmp_ids = ids;
    double d = cmp_ids[p] - cmp_ids[q];
    if (d < 0) return -1;
    if (d > 0) return 1;
    return p < q ? -1 : p > q;
}

static void sort_run_by_id(uint32_t *a, size_t s, size_t e, const double *ids) {
    if (e - s > 32) {
        qsort_r(a + s, e - s, sizeof *a, by_id_then_pos, (void *)ids);
        return;
    }
    for (size_t k = s + 1; k < e; k++) {
        uint32_t p = a[k];
        size_t j = k;
        while (j > s && (ids[a[j - 1]] > ids[p] || (ids[a[j - 1]] == ids[p] && a[j - 1] > p))) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = p;
    }
}

/* Positions a[0..n) in rising order sorted by ts, stably, by insertion. */
static void insert_by_time(const double *ts, uint32_t *a, size_t n) {
    for (size_t k = 1; k < n; k++) {
        uint32_t p = a[k];
        size_t j = k;
        while (j > 0 && ts[a[j - 1]] > ts[p]) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = p;
    }
}

/*
 * Positions a[0..n) in rising order sorted by ts, stably (scratch: room for
 * n). One pass puts each position in a bucket by the top bits of its time,
 * and each bucket is sorted the same way over its own range. Logs are
 * written nearly in time order, so the pass and the buckets are walked
 * almost in sequence, where a radix sort's first pass by the low bits
 * scatters them and each pass after it waits on a cache miss a row. A
 * bucket holding most rows (one row stamped 0 among real times) costs one
 * level more, not a comparison sort.
 */
static void order_by_time(const double *ts, uint32_t *a, size_t n, uint32_t *scratch) {
    if (n <= 32) {
        insert_by_time(ts, a, n);
        return;
    }
    double min = INFINITY, max = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        double t = ts[a[k]];
        if (t < min) min = t;
        if (t > max) max = t;
    }
    if (min == max) return;
    int bits = 4;
    while (bits < 16 && ((size_t)1 << bits) < n) bits++;
    size_t buckets = (size_t)1 << bits;
    uint64_t range = (uint64_t)(max - min); /* whole microseconds below 2^53 */
    int shift = 0;
    while ((range >> shift) >= buckets) shift++;
    uint32_t *start = calloc(buckets + 1, sizeof *start), *at = malloc(buckets * sizeof *at);
    if (!start || !at) abort();
    for (size_t k = 0; k < n; k++) start[((uint64_t)(ts[a[k]] - min) >> shift) + 1]++;
    for (size_t d = 0; d < buckets; d++) start[d + 1] += start[d];
    memcpy(at, start, buckets * sizeof *at);
    for (size_t k = 0; k < n; k++) scratch[at[(uint64_t)(ts[a[k]] - min) >> shift]++] = a[k];
    memcpy(a, scratch, n * sizeof *a);
    free(at);
    for (size_t d = 0; d < buckets; d++)
        order_by_time(ts, a + start[d], start[d + 1] - start[d], scratch);
    free(start);
}

/* The rows list[from..to): their times and IDs read, their positions put
 * in time order, and whether they came in order already. */
struct part {
    const struct sw_rows *rows;
    const uint32_t *list;
    double *ts, *ids;
    uint32_t *a, *scratch;
    size_t from, to;
    bool rising, sorted; /* by time; by time, then ID */
};

static void order_part(struct part *p) {
    p->rising = p->sorted = true;
    for (size_t k = p->from; k < p->to; k++) {
        const struct sw_row *row = sw_row_at(p->rows, p->list[k]);
        p->ts[k] = row->t;
        p->ids[k] = row->id;
        p->a[k] = (uint32_t)k;
        if (k > p->from) {
            double t = p->ts[k], before = p->ts[k - 1];
            if (t < before) p->rising = false;
            if (sw_rows_before(t, p->ids[k], before, p->ids[k - 1])) p->sorted = false;
        }
    }
    if (!p->rising) order_by_time(p->ts, p->a + p->from, p->to - p->from, p->scratch + p->from);
}

static void *order_part_main(void *arg) {
    order_part(arg);
    return NULL;
}

/* The two halves' positions, each in time order, merged into out. */
static void merge_halves(const double *ts, const uint32_t *a, size_t half, size_t n,
                         uint32_t *out) {
    size_t i = 0, j = half, k = 0;
    while (i < half && j < n) out[k++] = ts[a[j]] < ts[a[i]] ? a[j++] : a[i++];
    while (i < half) out[k++] = a[i++];
    while (j < n) out[k++] = a[j++];
}

void sw_rows_order_runs(const struct sw_rows *r, uint32_t *list, size_t n,
                        const struct sw_list_order *o) {
    const struct sw_positions *at = &o->untidy;
    uint32_t *pos = NULL, *rows = NULL;
    double *ids = NULL;
    size_t cap = 0, done = 0; /* runs end before list[done] are in order */
    for (size_t k = 0; k < at->n; k++) {
        size_t s = at->p[k];
        if (s < done || s >= n) continue;
        double t = sw_row_at(r, list[s])->t;
        while (s > 0 && sw_row_at(r, list[s - 1])->t == t) s--;
        size_t e = at->p[k] + 1;
        while (e < n && sw_row_at(r, list[e])->t == t) e++;
        done = e;
        size_t m = e - s;
        if (m < 2) continue;
        if (m > cap) {
            cap = m * 2;
            pos = realloc(pos, cap * sizeof *pos);
            rows = realloc(rows, cap * sizeof *rows);
            ids = realloc(ids, cap * sizeof *ids);
            if (!pos || !rows || !ids) abort();
        }
        for (size_t j = 0; j < m; j++) {
            pos[j] = (uint32_t)j;
            rows[j] = list[s + j];
            ids[j] = sw_row_at(r, rows[j])->id;
        }
        sort_run_by_id(pos, 0, m, ids);
        for (size_t j = 0; j < m; j++) list[s + j] = rows[pos[j]];
    }
    free(pos);
    free(rows);
    free(ids);
}

void sw_positions_push(struct sw_positions *at, size_t k) {
    if (at->n == at->cap) {
        at->cap = at->cap ? at->cap * 2 : 64;
        at->p = realloc(at->p, at->cap * sizeof *at->p);
        if (!at->p) abort();
    }
    at->p[at->n++] = (uint32_t)k;
}

/*
 * The general path's answer for a list nearly rising in time, as most
 * logs' lists are, without its four arrays of n (each fresh page of them a
 * fault). A log of several threads rises but for a few rows stamped a
 * little late: each is moved back into place as it comes, by insertion,
 * a few steps. Then only the runs of one microsecond that are out of ID
 * order are sorted, where they lie. False when the list falls in time
 * more than once in FEW_FALLS rows, or its rows lie too far from their
 * places (more steps than MOST_STEPS a row): the list is then partly in
 * order, but no row has passed one of its own time, so the general path
 * orders it as it would have ordered the list given.
 */
static bool order_runs_in_place(const struct sw_rows *r, uint32_t *list, size_t n) {
    const size_t few = n / FEW_FALLS;
    size_t falls = 0, steps = n * MOST_STEPS;
    /* Rows noted as they come stay next to the one noted before them (the
     * latest so far); a row moved back shifts the places noted past its
     * own. Noted again only where the row moved back lands in a run of its
     * own time, which it may put out of ID order. */
    bool note_again = false;
    struct sw_list_order o;
    sw_list_order_init(&o);
    bool ordered = true;
    for (size_t k = 0; k < n && ordered; k++) {
        const uint32_t i = list[k];
        const struct sw_row *row = sw_row_at(r, i);
        const double t = row->t;
        if (t >= o.last_t) {
            sw_list_order_note(&o, t, row->id, k);
            continue;
        }
        size_t j = k;
        while (j > 0 && sw_row_at(r, list[j - 1])->t > t) {
            list[j] = list[j - 1];
            j--;
        }
        list[j] = i;
        for (size_t u = o.untidy.n; u > 0 && o.untidy.p[u - 1] >= j; u--) o.untidy.p[u - 1]++;
        ordered = ++falls <= few && k - j <= steps;
        steps -= ordered ? k - j : 0;
        /* The row after it is later (it was passed): only the one before
         * may share its time. */
        note_again = note_again || (j > 0 && sw_row_at(r, list[j - 1])->t == t);
    }
    if (ordered && note_again) {
        free(o.untidy.p);
        sw_list_order_init(&o);
        for (size_t k = 0; k < n; k++) {
            const struct sw_row *row = sw_row_at(r, list[k]);
            sw_list_order_note(&o, row->t, row->id, k);
        }
    }
    /* As the general path: a list in order by time, then ID is left as it is. */
    if (ordered && !o.sorted) sw_rows_order_runs(r, list, n, &o);
    free(o.untidy.p);
    return ordered;
}

void sw_rows_order(const struct sw_rows *r, uint32_t *list, size_t n) {
    if (n < 2 || order_runs_in_place(r, list, n)) return;
    double *ts = malloc(n * sizeof *ts), *ids = malloc(n * sizeof *ids);
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!ts || !ids || !a || !b) abort();
    size_t half = n >= TWO_HALVES_MIN ? n / 2 : n;
    struct part first = {.rows = r, .list = list, .ts = ts, .ids = ids, .a = a, .scratch = b,
                         .from = 0, .to = half};
    struct part second = first;
    second.from = half;
    second.to = n;
    if (half < n) sw_on_both(order_part_main, &first, &second);
    else order_part(&first);
    bool rising = first.rising, sorted = first.sorted;
    if (half < n) {
        double t = ts[half], before = ts[half - 1];
        rising = rising && second.rising && !(t < before);
        sorted = sorted && second.sorted && !sw_rows_before(t, ids[half], before, ids[half - 1]);
    }
    if (!sorted) {
        if (!rising && half < n) {
            merge_halves(ts, a, half, n, b);
            uint32_t *merged = b;
            b = a;
            a = merged;
        }
        for (size_t s = 0; s < n;) {
            size_t e = s + 1;
            while (e < n && ts[a[e]] == ts[a[s]]) e++;
            if (e - s > 1) sort_run_by_id(a, s, e, ids);
            s = e;
        }
        memcpy(b, list, n * sizeof *b);
        for (size_t k = 0; k < n; k++) list[k] = b[a[k]];
    }
    free(a);
    free(b);
    free(ts);
    free(ids);
}
