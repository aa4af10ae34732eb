/*
 * bench_ops: the cost of one op launch, to measure the hook's overhead by
 * running it with and without LD_PRELOAD.
 *
 *   bench_ops N      runs N aclopExecuteV2 "Add" on 8-float buffers
 *
 * Prints `ns_per_op <float>` (wall time of the timed loop / N).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"

#define FLOATS 8
#define WARMUP 1000

#define CHECK(call)                                                                                                  \
  do {                                                                                                               \
    aclError err_ = (call);                                                                                          \
    if (err_ != ACL_SUCCESS) {                                                                                       \
      fprintf(stderr, "bench_ops: %s failed: %d\n", #call, err_);                                                    \
      exit(1);                                                                                                       \
    }                                                                                                                \
  } while (0)

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
  if (n <= 0) {
    fprintf(stderr, "usage: bench_ops N (N > 0)\n");
    return 2;
  }
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));

  int64_t dims[1] = {FLOATS};
  void *dev[3];
  aclTensorDesc *desc[3];
  aclDataBuffer *buf[3];
  float ones[FLOATS];
  for (int i = 0; i < FLOATS; i++) ones[i] = 1.0f;
  for (int i = 0; i < 3; i++) {
    CHECK(aclrtMalloc(&dev[i], sizeof ones, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dev[i], sizeof ones, ones, sizeof ones, ACL_MEMCPY_HOST_TO_DEVICE));
    desc[i] = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    buf[i] = aclCreateDataBuffer(dev[i], sizeof ones);
    if (desc[i] == NULL || buf[i] == NULL) return 1;
  }

  /* out = in0 + in1 with out distinct from the inputs: every call is alike. */
  for (long i = 0; i < WARMUP; i++) CHECK(aclopExecuteV2("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
  double start = now_ns();
  for (long i = 0; i < n; i++) CHECK(aclopExecuteV2("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
  double elapsed = now_ns() - start;
  printf("ns_per_op %.1f\n", elapsed / (double)n);

  for (int i = 0; i < 3; i++) {
    CHECK(aclDestroyDataBuffer(buf[i]));
    aclDestroyTensorDesc(desc[i]);
    CHECK(aclrtFree(dev[i]));
  }
  CHECK(aclFinalize());
  return 0;
}
