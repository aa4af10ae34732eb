/*
 * bench_ring: floods the ring with N small events through the producer API
 * (`stompwatch_emit`, found in the preloaded hook), to measure how fast the
 * daemon takes events from one process.
 *
 *   bench_ring N     prints `emit_ns <total>` (time spent producing)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef int (*emit_fn)(int, int, int, uint64_t, uint64_t, uint64_t, uint32_t, const char *);

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  emit_fn emit = (emit_fn)dlsym(RTLD_DEFAULT, "stompwatch_emit");
  if (!emit) {
    fprintf(stderr, "bench_ring: run me with the stompwatch hook preloaded\n");
    return 1;
  }
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  /* Allocations and frees of blocks in turn, like a training step's
   * traffic: each becomes a row of the event log. */
  for (long i = 0; i < n; i++) {
    uint64_t addr = 0x100000000ull + (uint64_t)(i >> 1) * 4096;
    emit((i & 1) ? 5 /* FREE */ : 4 /* ALLOC */, 0, 0, addr, 4096, 0, 0, NULL);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("emit_ns %.0f\n", (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec));
  return 0;
}
