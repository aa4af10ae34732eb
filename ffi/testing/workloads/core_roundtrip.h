/*
 * core_roundtrip.h: how long a cache line takes to go from one thread to
 * another and back, for the bench workloads. Hundreds of nanoseconds more
 * than usual: the host has put the two vCPUs on cores far apart, and a
 * thread reading what the other has just written waits that much longer
 * (README, the sampling rows, has what that did to a checksum sample);
 * microseconds: the two threads took turns on one CPU. Printed beside a
 * figure, it tells which a run met.
 */
#ifndef SW_CORE_ROUNDTRIP_H
#define SW_CORE_ROUNDTRIP_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

struct core_roundtrip_line {
  _Alignas(64) _Atomic long ping;
  _Alignas(64) _Atomic long pong;
  long trips;
};

/* Waits for *word to hold `want`; gives the core up now and then, so that
 * two threads on one vCPU still take turns. */
static inline void core_roundtrip_wait(_Atomic long *word, long want) {
  for (unsigned spins = 0; atomic_load_explicit(word, memory_order_acquire) != want;)
    if (++spins % 4096 == 0) sched_yield();
}

static inline void *core_roundtrip_echo(void *arg) {
  struct core_roundtrip_line *l = arg;
  for (long i = 1; i <= l->trips; i++) {
    core_roundtrip_wait(&l->ping, i);
    atomic_store_explicit(&l->pong, i, memory_order_release);
  }
  return NULL;
}

/* Nanoseconds a round trip of `trips` between this thread and a new one
 * took on average; -1 when no thread could be started. */
static inline double core_roundtrip_ns(long trips) {
  static struct core_roundtrip_line line;
  atomic_store(&line.ping, 0);
  atomic_store(&line.pong, 0);
  line.trips = trips;
  pthread_t echo;
  if (pthread_create(&echo, NULL, core_roundtrip_echo, &line) != 0) return -1;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 1; i <= trips; i++) {
    atomic_store_explicit(&line.ping, i, memory_order_release);
    core_roundtrip_wait(&line.pong, i);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(echo, NULL);
  return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)trips;
}

#endif
