/*
 * two_threads.h: one piece of work on two shares at once, for the native
 * passes over a log that split their rows in two (leak_replay.c, compare.c,
 * device_lists.c, row_order.c).
 */
#ifndef STOMPWATCH_TWO_THREADS_H
#define STOMPWATCH_TWO_THREADS_H

#include <pthread.h>
#include <stdbool.h>

/* Runs work(first) on this thread and work(second) on a thread of its own,
 * both on this one when no thread can be had; returns once both are done. */
static inline void sw_on_both(void *(*work)(void *), void *first, void *second) {
    pthread_t thread;
    bool two = pthread_create(&thread, NULL, work, second) == 0;
    work(first);
    if (two) pthread_join(thread, NULL);
    else work(second);
}

#endif
