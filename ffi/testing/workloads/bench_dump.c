/*
 * bench_dump: times what a watch costs on a large block. It allocates one
 * block of MIB MiB (or SIZE bytes, written `<n>B`) on device 0, zeroed, and
 * launches REPS `Fill` ops on it (every float 1.0); run under
 * a --watch=Fill:0,Fill spec, each Fill is sampled before and after, so the
 * extra time over an unwatched run is two samples. With `copy`, after one
 * Fill it launches REPS `Copy` ops of 4 bytes into the block instead (the
 * float the Fill wrote, again): run under --watch=Copy:0,Copy, each Copy is
 * sampled before and after, and the op itself takes microseconds, so its
 * time is its samples', all in one process (README, the sampling rows,
 * says what timing them against another job's Fills got wrong). It also
 * times a plain device-to-host copy of the block, the baseline a checksum
 * watch is judged against.
 *
 *   bench_dump MIB|SIZEB REPS [copy] [wait]
 *                           prints `memcpy_ns <n>` and `fill_ns <n>` (or
 *                           `copy_ns <n>`): the median of REPS calls (a
 *                           shared machine's noise lands in a few calls, not
 *                           in every one), `ops_start_unix_ns <n>`: when
 *                           the first of them began (CLOCK_REALTIME), for
 *                           timing what a daemon still writes after the
 *                           job, and with `copy` `core_roundtrip_ns <n>`: a
 *                           cache line's round trip between two threads
 *                           (core_roundtrip.h) timed before the gate below,
 *                           -1 where no thread could be started (some
 *                           milliseconds, which other users of this job
 *                           need not wait). With `wait`, it prints
 *                           `ready` before the first and waits for a line on
 *                           stdin: the bench frees the page cache the dumps
 *                           will take just then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "core_roundtrip.h"

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_of(double *ns, int n) {
  qsort(ns, (size_t)n, sizeof *ns, by_value);
  return ns[n / 2];
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  char *unit = NULL;
  size_t n = argc > 1 ? strtoul(argv[1], &unit, 10) : 256;
  size_t bytes = unit && *unit == 'B' ? n : n << 20;
  char *reps_end = NULL;
  int reps = argc > 2 ? (int)strtol(argv[2], &reps_end, 10) : 4;
  int usage = argc > 2 && (reps_end == argv[2] || *reps_end != '\0');
  if (reps < 1 || reps > 1000) reps = 4;
  int gated = 0, copies = 0;
  for (int a = 3; a < argc && !usage; a++) {
    if (strcmp(argv[a], "wait") == 0) gated = 1;
    else if (strcmp(argv[a], "copy") == 0) copies = 1;
    else usage = 1;
  }
  if (usage) {
    fprintf(stderr, "usage: bench_dump MIB|SIZEB REPS [copy] [wait]\n");
    return 2;
  }
  double ns[1000];
  void *out = NULL, *in = NULL;
  float one = 1.0f;
  if (aclrtSetDevice(0) != ACL_SUCCESS || aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMalloc(&in, sizeof one, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    fprintf(stderr, "bench_dump: cannot allocate %zu bytes; raise STOMPWATCH_TEST_DEVICE_BYTES\n", bytes);
    return 1;
  }
  aclrtMemcpy(in, sizeof one, &one, sizeof one, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemset(out, bytes, 0, bytes);
  /* Page-aligned, as the device block is: glibc copies a block this large
   * with non-temporal stores, and on AMD Zen 3 (the 2-vCPU EPYC VM of
   * 2026-11-25) a destination a few bytes past a page boundary from its
   * source, as malloc's 16-byte header puts it, takes glibc's slow path
   * for 4 KiB aliasing: 3.5 GiB/s instead of 10-11 GiB/s at 256 MiB. The
   * baseline is the fastest plain copy, not that accident. */
  char *host = NULL;
  if (posix_memalign((void **)&host, 4096, bytes) != 0) return 1;
  memset(host, 1, bytes); /* fault the pages in before timing */
  for (int i = 0; i < reps; i++) {
    double t0 = now_ns();
    aclrtMemcpy(host, bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    ns[i] = now_ns() - t0;
  }
  printf("memcpy_ns %.0f\n", median_of(ns, reps));

  aclDataBuffer *ib = aclCreateDataBuffer(in, sizeof one), *ob = aclCreateDataBuffer(out, bytes);
  aclDataBuffer *inputs[1] = {ib}, *outputs[1] = {ob};
  /* The block the Copies are sampled on holds what Fills leave. */
  if (copies && aclopExecuteV2("Fill", 1, NULL, inputs, 1, NULL, outputs, NULL, NULL) != ACL_SUCCESS) return 1;
  /* Before the gate: the first sample follows it at once. */
  const double roundtrip_ns = copies ? core_roundtrip_ns(20000) : 0;
  if (gated) {
    printf("ready\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) {
      fprintf(stderr, "bench_dump: stdin closed before the line that says go\n");
      return 1;
    }
  }
  const char *op = copies ? "Copy" : "Fill";
  struct timespec start;
  clock_gettime(CLOCK_REALTIME, &start);
  for (int i = 0; i < reps; i++) {
    double t0 = now_ns();
    if (aclopExecuteV2(op, 1, NULL, inputs, 1, NULL, outputs, NULL, NULL) != ACL_SUCCESS) return 1;
    ns[i] = now_ns() - t0;
  }
  printf("%s_ns %.0f\n", copies ? "copy" : "fill", median_of(ns, reps));
  printf("ops_start_unix_ns %.0f\n", start.tv_sec * 1e9 + start.tv_nsec);
  if (copies) printf("core_roundtrip_ns %.0f\n", roundtrip_ns);
  fflush(stdout);
  aclDestroyDataBuffer(ib);
  aclDestroyDataBuffer(ob);
  aclrtFree(in);
  aclrtFree(out);
  free(host);
  return 0;
}
