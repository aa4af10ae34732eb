/*
 * stall: a job whose daemon stops reading for a while. It emits through the
 * producer API (`stompwatch_emit`, found in the preloaded hook) in two
 * phases, each started by a file the test creates:
 *
 *   stall N GATE1 GATE2 [TRIES]
 *     emits a mark (the hook makes its ring), prints `ready`, waits for
 *     GATE1, emits N events (more than a small ring holds: with the daemon
 *     stopped, the hook passes through and counts them), prints `phase1 N`;
 *     waits for GATE2 (the daemon runs again), emits until an event is
 *     delivered (at most TRIES, 10000, 1 ms apart), then 100 more and a mark
 *     `phase 2 done`; prints `emitted TOTAL` (every call, delivered or not)
 *     and exits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*emit_fn)(int, int, int, uint64_t, uint64_t, uint64_t, uint32_t, const char *);

static void wait_for(const char *path) {
  struct timespec pause = {0, 5000000};
  while (access(path, F_OK) != 0) nanosleep(&pause, NULL);
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: stall N GATE1 GATE2 [TRIES]\n");
    return 2;
  }
  long n = atol(argv[1]), emitted = 0, most = argc == 5 ? atol(argv[4]) : 10000;
  emit_fn emit = (emit_fn)dlsym(RTLD_DEFAULT, "stompwatch_emit");
  if (!emit) {
    fprintf(stderr, "stall: run me with the stompwatch hook preloaded\n");
    return 1;
  }
  emit(8 /* MARK */, 0, 0, 0, 0, 0, 0, "start"); /* makes the ring: the daemon sees the job */
  emitted++;
  printf("ready\n");
  fflush(stdout);
  wait_for(argv[2]);
  for (long i = 0; i < n; i++, emitted++) {
    uint64_t addr = 0x100000000ull + (uint64_t)(i >> 1) * 4096;
    emit((i & 1) ? 5 /* FREE */ : 4 /* ALLOC */, 0, 0, addr, 4096, 0, 0, NULL);
  }
  printf("phase1 %ld\n", n);
  fflush(stdout);
  wait_for(argv[3]);
  /* The hook takes the ring back on the first event after the daemon's
   * heartbeat moves: until then each one is counted as lost. Bounded, so a
   * hook that never resumes ends the job all the same. */
  struct timespec pause = {0, 1000000};
  int delivered = 0;
  for (long tries = 0; !delivered && tries < most; tries++, emitted++) {
    delivered = emit(8 /* MARK */, 0, 0, 0, 0, 0, 0, "phase 2 try") == 0;
    if (!delivered) nanosleep(&pause, NULL);
  }
  for (int i = 0; i < 100; i++, emitted++) emit(4 /* ALLOC */, 0, 0, 0x200000000ull + (uint64_t)i * 4096, 4096, 0, 0, NULL);
  emit(8 /* MARK */, 0, 0, 0, 0, 0, 0, "phase 2 done");
  emitted++;
  printf("emitted %ld\n", emitted);
  return 0;
}
