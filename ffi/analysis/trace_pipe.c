/*
 * trace_pipe.c: the `device_traces` part of a snapshot, made on two cores:
 * a second thread replays the devices (replay.c) and hands their entries
 * over in blocks, while this one writes them (snap_writer.c). The writer's
 * memo of strings and frames depends on the order things are written in,
 * so there is one writer and it takes the entries in replay order.
 */
#include "analysis.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096
#define NBLOCKS 8

struct rec {
    double addr, size, t;
    int32_t stack;
    int32_t action; /* -1: the device's entries end here */
};

struct block {
    struct rec r[BLOCK];
    size_t n;
};

struct pipe {
    struct sw_trace_job *job;
    struct block *blocks;
    uint64_t head, tail; /* blocks handed over, blocks taken back */
    bool cancel;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* the replay's side */
    double skip, n, total;
    /* No second thread: each block is written as soon as it is full. */
    struct sw_writer *inline_writer;
    size_t inline_device;
    bool inline_open;
};

static void write_block(struct sw_writer *w, const struct block *b, size_t *device, bool *open);

/* ---- the replay's side ---- */

static struct block *filling(struct pipe *p) { return &p->blocks[p->head % NBLOCKS]; }

/* Hands the block being filled over; false when the writer gave up. */
static bool hand_over(struct pipe *p) {
    if (p->inline_writer) {
        write_block(p->inline_writer, filling(p), &p->inline_device, &p->inline_open);
        filling(p)->n = 0;
        return !sw_writer_failed(p->inline_writer);
    }
    pthread_mutex_lock(&p->lock);
    p->head++;
    pthread_cond_broadcast(&p->cond);
    while (p->head - p->tail == NBLOCKS && !p->cancel) pthread_cond_wait(&p->cond, &p->lock);
    bool go = !p->cancel;
    pthread_mutex_unlock(&p->lock);
    filling(p)->n = 0;
    return go;
}

static void put(struct pipe *p, int action, double addr, double size, int32_t stack, double t) {
    struct block *b = filling(p);
    b->r[b->n++] = (struct rec){addr, size, t, stack, action};
    if (b->n == BLOCK) hand_over(p);
}

static void count_entry(void *ctx, int action, double addr, double size, int32_t stack, double t,
                        double extra) {
    (void)action, (void)addr, (void)size, (void)stack, (void)t, (void)extra;
    ((struct pipe *)ctx)->total++;
}

static void keep_entry(void *ctx, int action, double addr, double size, int32_t stack, double t,
                       double extra) {
    struct pipe *p = ctx;
    struct sw_trace_job *job = p->job;
    if (!job->history) return;
    /* A free is two entries the viewer joins: never keep half of one. */
    if (p->n < p->skip || (p->n == p->skip && p->skip > 0 && action == A_FREE_DONE)) {
        if (p->n == p->skip) p->skip++;
        p->n++;
        job->dropped++;
        return;
    }
    p->n++;
    job->entries++;
    put(p, action, action == A_OOM ? extra : addr, size, stack, t);
}

static void replay_all(struct pipe *p) {
    struct sw_trace_job *job = p->job;
    for (size_t d = 0; d < job->shown; d++) {
        if (job->device < 0 || (double)d == job->device) {
            p->skip = p->n = p->total = 0;
            if (job->history && job->max_entries >= 0) {
                struct sw_replayed dry;
                sw_replay_device(job->rows, job->lists[d], job->counts[d], (int32_t)d, count_entry,
                                 p, &dry);
                sw_replayed_free(&dry);
                p->skip = p->total - job->max_entries > 0 ? p->total - job->max_entries : 0;
            }
            sw_replay_device(job->rows, job->lists[d], job->counts[d], (int32_t)d, keep_entry, p,
                             &job->ends[d]);
            job->freed += job->ends[d].freed_before_log;
            job->overlapped += job->ends[d].lost_frees;
        }
        struct block *b = filling(p);
        b->r[b->n++] = (struct rec){0, 0, 0, 0, -1};
        if (!hand_over(p)) return;
    }
}

static void *replay_main(void *arg) {
    replay_all(arg);
    return NULL;
}

/* ---- the writer's side ---- */

static void write_block(struct sw_writer *w, const struct block *b, size_t *device, bool *open) {
    for (size_t i = 0; i < b->n; i++) {
        const struct rec *r = &b->r[i];
        if (!*open) {
            sw_writer_list_start(w);
            *open = true;
        }
        if (r->action < 0) {
            sw_writer_list_end(w);
            *open = false;
            ++*device;
            continue;
        }
        sw_writer_entry(w, r->action, r->addr, r->size, r->t, r->stack);
    }
}

void sw_write_traces(struct sw_trace_job *job, struct sw_writer *w) {
    struct pipe p = {.job = job};
    p.blocks = malloc(NBLOCKS * sizeof *p.blocks);
    if (!p.blocks) abort();
    p.blocks[0].n = 0;
    pthread_mutex_init(&p.lock, NULL);
    pthread_cond_init(&p.cond, NULL);
    size_t device = 0;
    bool open = false;
    pthread_t thread;
    if (pthread_create(&thread, NULL, replay_main, &p) != 0) {
        p.inline_writer = w;
        replay_all(&p);
        device = job->shown;
    }
    while (device < job->shown) {
        pthread_mutex_lock(&p.lock);
        while (p.tail == p.head) pthread_cond_wait(&p.cond, &p.lock);
        pthread_mutex_unlock(&p.lock);
        write_block(w, &p.blocks[p.tail % NBLOCKS], &device, &open);
        pthread_mutex_lock(&p.lock);
        p.tail++;
        if (sw_writer_failed(w)) p.cancel = true;
        pthread_cond_broadcast(&p.cond);
        pthread_mutex_unlock(&p.lock);
        if (p.cancel) break;
    }
    if (!p.inline_writer) pthread_join(thread, NULL);
    pthread_mutex_destroy(&p.lock);
    pthread_cond_destroy(&p.cond);
    free(p.blocks);
}
