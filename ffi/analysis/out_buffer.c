/*
 * out_buffer.c: where the snapshot's bytes go. Two 4 MiB buffers take
 * turns: the converter fills one while a second thread write(2)s the other
 * to the file, so writing costs the converter nothing but a hand-over on a
 * machine with a second core.
 */
#include "out_buffer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BUF_SIZE (4u << 20)

static void *writer_main(void *arg) {
    struct sw_out *o = arg;
    pthread_mutex_lock(&o->lock);
    for (;;) {
        while (!o->pending && !o->closing) pthread_cond_wait(&o->cond, &o->lock);
        if (!o->pending) break;
        uint8_t *p = o->pending;
        size_t n = o->pending_n;
        pthread_mutex_unlock(&o->lock);
        int error = 0;
        while (n) {
            ssize_t k = write(o->fd, p, n);
            if (k < 0) {
                if (errno == EINTR) continue;
                error = errno;
                break;
            }
            p += k;
            n -= (size_t)k;
        }
        pthread_mutex_lock(&o->lock);
        if (error && !o->error) o->error = error;
        o->pending = NULL;
        pthread_cond_broadcast(&o->cond);
    }
    pthread_mutex_unlock(&o->lock);
    return NULL;
}

void sw_out_init(struct sw_out *o, int fd) {
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->spare = malloc(BUF_SIZE);
    o->buf = malloc(BUF_SIZE);
    if (!o->spare || !o->buf) abort();
    o->cap = BUF_SIZE;
    pthread_mutex_init(&o->lock, NULL);
    pthread_cond_init(&o->cond, NULL);
    o->threaded = pthread_create(&o->thread, NULL, writer_main, o) == 0;
}

void sw_out_flush(struct sw_out *o) {
    if (!o->n) return;
    o->total += o->n;
    if (!o->threaded) {
        uint8_t *p = o->buf;
        size_t n = o->n;
        while (n && !o->error) {
            ssize_t k = write(o->fd, p, n);
            if (k < 0 && errno != EINTR) o->error = errno;
            if (k > 0) p += k, n -= (size_t)k;
        }
        o->n = 0;
        return;
    }
    pthread_mutex_lock(&o->lock);
    while (o->pending) pthread_cond_wait(&o->cond, &o->lock);
    o->pending = o->buf;
    o->pending_n = o->n;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
    uint8_t *t = o->buf;
    o->buf = o->spare;
    o->spare = t;
    o->n = 0;
}

void sw_out_slow_room(struct sw_out *o, size_t n) {
    sw_out_flush(o);
    if (n > o->cap) abort(); /* callers ask for a few dozen bytes */
}

void sw_out_put(struct sw_out *o, const void *src, size_t n) {
    const uint8_t *p = src;
    while (n) {
        if (o->n == o->cap) sw_out_flush(o);
        size_t k = o->cap - o->n < n ? o->cap - o->n : n;
        memcpy(o->buf + o->n, p, k);
        o->n += k;
        p += k;
        n -= k;
    }
}

int sw_out_close(struct sw_out *o) {
    sw_out_flush(o);
    if (o->threaded) {
        pthread_mutex_lock(&o->lock);
        o->closing = true;
        pthread_cond_broadcast(&o->cond);
        pthread_mutex_unlock(&o->lock);
        pthread_join(o->thread, NULL);
    }
    pthread_mutex_destroy(&o->lock);
    pthread_cond_destroy(&o->cond);
    free(o->buf);
    free(o->spare);
    o->buf = o->spare = NULL;
    return o->error;
}
