/*
 * device_lists.c: the memory rows cut into one list per device, each put
 * in rows.ts order() for the replay. A device's rows most often come in
 * time order already, though the devices interleave, so the cut notes how
 * each list stands on the way and the ordering does only what is left:
 * nothing, the runs of one microsecond whose IDs fall, or a whole sort.
 * Both the cut and the ordering run on two threads.
 */
#include "analysis.h"
#include "two_threads.h"

#include <pthread.h>
#include <stdlib.h>

/* One thread's share of the cut: rows [from, to) of the walk. */
struct share {
    const struct sw_rows *rows;
    const uint32_t *order; /* NULL: file order */
    size_t from, to, devices;
    uint32_t **list;
    size_t *count; /* per device, this share's rows */
    size_t *base;  /* per device, where this share's rows go in its list */
    struct sw_list_order *noted; /* per device, this share's rows */
    double *first_t, *first_id;  /* per device, this share's first row */
};

static int32_t device_at(const struct share *s, size_t k, uint32_t *i) {
    *i = s->order ? s->order[k] : (uint32_t)k;
    return sw_row_device(sw_row_at(s->rows, *i));
}

static void *count_share(void *arg) {
    struct share *s = arg;
    for (size_t k = s->from; k < s->to; k++) {
        uint32_t i;
        int32_t d = device_at(s, k, &i);
        if (d >= 0 && (size_t)d < s->devices) s->count[d]++;
    }
    return NULL;
}

static void *fill_share(void *arg) {
    struct share *s = arg;
    size_t *at = malloc(s->devices * sizeof *at);
    if (!at) abort();
    for (size_t d = 0; d < s->devices; d++) {
        at[d] = s->base[d];
        sw_list_order_init(&s->noted[d]);
    }
    for (size_t k = s->from; k < s->to; k++) {
        uint32_t i;
        int32_t d = device_at(s, k, &i);
        if (d < 0 || (size_t)d >= s->devices) continue;
        const struct sw_row *r = sw_row_at(s->rows, i);
        if (at[d] == s->base[d]) {
            s->first_t[d] = r->t;
            s->first_id[d] = r->id;
        }
        sw_list_order_note(&s->noted[d], r->t, r->id, at[d]);
        s->list[d][at[d]++] = i;
    }
    free(at);
    return NULL;
}

static void share_init(struct share *s, const struct sw_rows *rows, const uint32_t *order,
                       size_t from, size_t to, size_t devices, uint32_t **list) {
    *s = (struct share){.rows = rows, .order = order, .from = from, .to = to, .devices = devices,
                        .list = list};
    s->count = calloc(devices, sizeof *s->count);
    s->base = calloc(devices, sizeof *s->base);
    s->noted = calloc(devices, sizeof *s->noted);
    s->first_t = malloc(devices * sizeof *s->first_t);
    s->first_id = malloc(devices * sizeof *s->first_id);
    if (!s->count || !s->base || !s->noted || !s->first_t || !s->first_id) abort();
}

static void share_free(struct share *s) {
    free(s->count);
    free(s->base);
    for (size_t d = 0; d < s->devices; d++) free(s->noted[d].untidy.p);
    free(s->noted);
    free(s->first_t);
    free(s->first_id);
}

void sw_device_lists_split(const struct sw_rows *rows, const uint32_t *order, size_t devices,
                           struct sw_device_lists *out) {
    size_t n = rows->count;
    out->devices = devices;
    out->n = calloc(devices, sizeof *out->n);
    out->list = calloc(devices, sizeof *out->list);
    out->order = calloc(devices, sizeof *out->order);
    if (!out->n || !out->list || !out->order) abort();
    struct share a, b;
    share_init(&a, rows, order, 0, n / 2, devices, out->list);
    share_init(&b, rows, order, n / 2, n, devices, out->list);
    sw_on_both(count_share, &a, &b);
    for (size_t d = 0; d < devices; d++) {
        out->n[d] = a.count[d] + b.count[d];
        b.base[d] = a.count[d];
        out->list[d] = malloc((out->n[d] + 1) * sizeof **out->list);
        if (!out->list[d]) abort();
    }
    sw_on_both(fill_share, &a, &b);
    /* The shares joined: the second one's first row of a list noted after
     * the first one's last, then the rest of what the second one noted. */
    for (size_t d = 0; d < devices; d++) {
        struct sw_list_order *o = &out->order[d], *second = &b.noted[d];
        *o = a.noted[d];
        a.noted[d].untidy = (struct sw_positions){0};
        if (!b.count[d]) continue;
        sw_list_order_note(o, b.first_t[d], b.first_id[d], b.base[d]);
        o->rising = o->rising && second->rising;
        o->sorted = o->sorted && second->sorted;
        for (size_t k = 0; o->rising && k < second->untidy.n; k++)
            sw_positions_push(&o->untidy, second->untidy.p[k]);
    }
    share_free(&a);
    share_free(&b);
}

/* Device d's list in time order, from what the cut noted. */
static void order_list(const struct sw_rows *rows, struct sw_device_lists *by, size_t d) {
    const struct sw_list_order *o = &by->order[d];
    if (!o->rising) sw_rows_order(rows, by->list[d], by->n[d]);
    else if (!o->sorted) sw_rows_order_runs(rows, by->list[d], by->n[d], o);
}

struct every_other {
    const struct sw_rows *rows;
    struct sw_device_lists *by;
};

static void *order_odd_devices(void *arg) {
    struct every_other *o = arg;
    for (size_t d = 1; d < o->by->devices; d += 2) order_list(o->rows, o->by, d);
    return NULL;
}

void sw_device_lists_order(const struct sw_rows *rows, struct sw_device_lists *by, double only) {
    if (only >= 0) {
        if (only < (double)by->devices) order_list(rows, by, (size_t)only);
        return;
    }
    size_t unsorted = 0;
    for (size_t d = 0; d < by->devices; d++) unsorted += !by->order[d].sorted;
    struct every_other odd = {rows, by};
    pthread_t thread;
    bool two = unsorted > 1 && pthread_create(&thread, NULL, order_odd_devices, &odd) == 0;
    for (size_t d = 0; d < by->devices; d += two ? 2 : 1) order_list(rows, by, d);
    if (two) pthread_join(thread, NULL);
}

void sw_device_lists_free(struct sw_device_lists *by) {
    for (size_t d = 0; d < by->devices; d++) {
        free(by->list[d]);
        free(by->order[d].untidy.p);
    }
    free(by->list);
    free(by->n);
    free(by->order);
}
