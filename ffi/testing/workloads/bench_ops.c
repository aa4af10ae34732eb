/*
 * bench_ops: the cost of one op launch, to measure the hook's overhead.
 *
 *   bench_ops N      runs N aclopExecuteV2 "Add" on 8-float buffers, and N
 *                    more calling the runtime's own aclopExecuteV2 directly
 *
 * The direct calls are the baseline: under LD_PRELOAD they are what the job
 * would pay without the hook, measured in the same process, in alternating
 * blocks, so that drift of the machine between runs (on a shared VM it is
 * larger than the effect) falls on both alike. Without LD_PRELOAD the two
 * figures should agree.
 *
 * Prints `ns_per_op <float>` (calls through the linked symbol, the hook's
 * when preloaded) and `ns_per_op_direct <float>`: the median over blocks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl/acl.h"

#define FLOATS 8
#define WARMUP 1000
#define BLOCKS 41

#define CHECK(call)                                                                                                  \
  do {                                                                                                               \
    aclError err_ = (call);                                                                                          \
    if (err_ != ACL_SUCCESS) {                                                                                       \
      fprintf(stderr, "bench_ops: %s failed: %d\n", #call, err_);                                                    \
      exit(1);                                                                                                       \
    }                                                                                                                \
  } while (0)

typedef aclError (*execute_fn)(const char *, int, aclTensorDesc *[], aclDataBuffer *[], int, aclTensorDesc *[],
                               aclDataBuffer *[], aclopAttr *, aclrtStream);

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *xs, int n) {
  qsort(xs, (size_t)n, sizeof *xs, by_value);
  return xs[n / 2];
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

  /* The runtime's own function, behind any preloaded hook. */
  void *runtime = dlopen("libascendcl.so", RTLD_NOW | RTLD_NOLOAD);
  execute_fn direct = runtime ? (execute_fn)dlsym(runtime, "aclopExecuteV2") : NULL;
  if (!direct) {
    fprintf(stderr, "bench_ops: cannot find the runtime's aclopExecuteV2: %s\n", dlerror());
    return 1;
  }

  /* out = in0 + in1 with out distinct from the inputs: every call is alike. */
  for (long i = 0; i < WARMUP; i++) {
    CHECK(aclopExecuteV2("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
    CHECK(direct("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
  }
  long per_block = n / BLOCKS > 0 ? n / BLOCKS : 1;
  double linked[BLOCKS], own[BLOCKS];
  for (int b = 0; b < BLOCKS; b++) {
    double start = now_ns();
    for (long i = 0; i < per_block; i++) CHECK(aclopExecuteV2("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
    double mid = now_ns();
    for (long i = 0; i < per_block; i++) CHECK(direct("Add", 2, desc, buf, 1, &desc[2], &buf[2], NULL, NULL));
    linked[b] = (mid - start) / (double)per_block;
    own[b] = (now_ns() - mid) / (double)per_block;
  }
  printf("ns_per_op %.1f\n", median(linked, BLOCKS));
  printf("ns_per_op_direct %.1f\n", median(own, BLOCKS));
  dlclose(runtime);

  for (int i = 0; i < 3; i++) {
    CHECK(aclDestroyDataBuffer(buf[i]));
    aclDestroyTensorDesc(desc[i]);
    CHECK(aclrtFree(dev[i]));
  }
  CHECK(aclFinalize());
  return 0;
}
