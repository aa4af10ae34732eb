/*
 * out_buffer.h: the snapshot writer's output, double-buffered onto a
 * writer thread (out_buffer.c).
 */
#ifndef SW_OUT_BUFFER_H
#define SW_OUT_BUFFER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sw_out {
    int fd;
    uint8_t *buf, *spare;
    size_t n, cap;
    double total;
    /* The hand-over: pending is the buffer the thread writes. */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint8_t *pending;
    size_t pending_n;
    bool closing, threaded;
    int error; /* errno of the first failed write */
};

void sw_out_init(struct sw_out *o, int fd);
void sw_out_flush(struct sw_out *o);
void sw_out_slow_room(struct sw_out *o, size_t n);
void sw_out_put(struct sw_out *o, const void *src, size_t n);
/* Writes what is left, stops the thread; returns the first errno, or 0. */
int sw_out_close(struct sw_out *o);

/* Room for n contiguous bytes at o->buf + o->n. */
static inline uint8_t *sw_out_room(struct sw_out *o, size_t n) {
    if (o->n + n > o->cap) sw_out_slow_room(o, n);
    return o->buf + o->n;
}

static inline void sw_out_byte(struct sw_out *o, uint8_t b) {
    if (o->n == o->cap) sw_out_flush(o);
    o->buf[o->n++] = b;
}

#endif
