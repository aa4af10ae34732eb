/*
 * bench_dump: times what a watch costs on a large block. It allocates one
 * block of MIB MiB on device 0 and launches REPS `Fill` ops on it; run under
 * a --watch=Fill:0,Fill spec, each Fill is sampled before and after, so the
 * extra time over an unwatched run is two samples. It also times a plain
 * device-to-host copy of the block, the baseline a checksum watch is judged
 * against.
 *
 *   bench_dump MIB REPS     prints `memcpy_ns <n>` and `fill_ns <n>` (per call)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
  int reps = argc > 2 ? atoi(argv[2]) : 4;
  size_t bytes = mib << 20;
  void *out = NULL, *in = NULL;
  float one = 1.0f;
  if (aclrtSetDevice(0) != ACL_SUCCESS || aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMalloc(&in, sizeof one, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    fprintf(stderr, "bench_dump: cannot allocate %zu MiB; raise STOMPWATCH_TEST_DEVICE_BYTES\n", mib);
    return 1;
  }
  aclrtMemcpy(in, sizeof one, &one, sizeof one, ACL_MEMCPY_HOST_TO_DEVICE);
  aclrtMemset(out, bytes, 0, bytes);
  char *host = malloc(bytes);
  if (!host) return 1;
  memset(host, 1, bytes); /* fault the pages in before timing */
  double t0 = now_ns();
  for (int i = 0; i < reps; i++) aclrtMemcpy(host, bytes, out, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
  printf("memcpy_ns %.0f\n", (now_ns() - t0) / reps);

  aclDataBuffer *ib = aclCreateDataBuffer(in, sizeof one), *ob = aclCreateDataBuffer(out, bytes);
  aclDataBuffer *inputs[1] = {ib}, *outputs[1] = {ob};
  t0 = now_ns();
  for (int i = 0; i < reps; i++) {
    if (aclopExecuteV2("Fill", 1, NULL, inputs, 1, NULL, outputs, NULL, NULL) != ACL_SUCCESS) return 1;
  }
  printf("fill_ns %.0f\n", (now_ns() - t0) / reps);
  fflush(stdout);
  aclDestroyDataBuffer(ib);
  aclDestroyDataBuffer(ob);
  aclrtFree(in);
  aclrtFree(out);
  free(host);
  return 0;
}
