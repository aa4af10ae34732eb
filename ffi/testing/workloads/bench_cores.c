/*
 * bench_cores: how much work a second thread adds on this machine, for
 * the machine facts the bench prints (bench/_machine.ts). A VM's second
 * vCPU can be a whole core at one moment and next to nothing the next
 * (the host runs others on it), and its one core's pace can halve: the
 * figures of the rows that use two threads move with it.
 *
 *   bench_cores ROUNDS MS   each round runs a loop of arithmetic on one
 *                           thread for MS ms, then on two threads at once
 *                           for MS ms, then passes a cache line between two
 *                           threads 20,000 times, and prints `round <one>
 *                           <two> <ns>`: the loops done alone, by both
 *                           threads together, and the mean round trip
 *
 * Each thread's loop touches only its own stack, so the two share nothing
 * but the machine; the round trip is what sharing costs (core_roundtrip.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "core_roundtrip.h"

/* Iterations of arithmetic between two looks at the clock: about 50 us. */
#define STEP 100000

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct run {
  double ms;
  uint64_t loops;
};

static void *spin(void *arg) {
  struct run *r = arg;
  volatile uint64_t sink = 0;
  const double end = now_ms() + r->ms;
  uint64_t loops = 0;
  while (now_ms() < end) {
    for (uint64_t i = 0; i < STEP; i++) sink += i;
    loops++;
  }
  r->loops = loops;
  return NULL;
}

int main(int argc, char **argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 5;
  const double ms = argc > 2 ? atof(argv[2]) : 200;
  if (rounds < 1 || rounds > 100 || !(ms > 0 && ms <= 10000)) {
    fprintf(stderr, "usage: bench_cores ROUNDS MS (1-100 rounds of up to 10000 ms)\n");
    return 2;
  }
  for (int k = 0; k < rounds; k++) {
    struct run one = {.ms = ms}, a = {.ms = ms}, b = {.ms = ms};
    spin(&one);
    pthread_t ta, tb;
    if (pthread_create(&ta, NULL, spin, &a) != 0 || pthread_create(&tb, NULL, spin, &b) != 0) {
      fprintf(stderr, "bench_cores: cannot start a thread\n");
      return 1;
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    printf("round %llu %llu %.0f\n", (unsigned long long)one.loops, (unsigned long long)(a.loops + b.loops),
           core_roundtrip_ns(20000));
  }
  return 0;
}
