/*
 * stomp: a workload with a memory stomp, the case stompwatch exists for.
 * Blocks A and B (64 floats each) are adjacent on device 0; a Copy of the
 * 256-float block C into A writes past A's end, through B and beyond.
 *
 *   stomp [--sleep-ms N] [--wait-file PATH]
 *
 * Output, flushed line by line, so a test can act while it runs:
 *   stomp: A=0x... B=0x... C=0x...   (0x%016llx, once allocated)
 *   ready                            (before waiting and before the ops)
 * With --wait-file it then waits (10 ms polls, at most 30 s) until PATH
 * exists; --sleep-ms sleeps between ops. The ops, in order:
 *   1 Fill A <- 1.0   2 Fill B <- 2.0   3 Mul B = B * B (a legitimate write
 *   of B)   4 Copy A <- C (the stomp: B becomes 3.0)   5 Add A = A + B
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"

#define CHECK(call)                                                                                                  \
  do {                                                                                                               \
    aclError err_ = (call);                                                                                          \
    if (err_ != ACL_SUCCESS) {                                                                                       \
      fprintf(stderr, "stomp: %s failed: %d\n", #call, err_);                                                        \
      exit(1);                                                                                                       \
    }                                                                                                                \
  } while (0)

struct tensor {
  void *dev;
  size_t floats;
  aclTensorDesc *desc;
  aclDataBuffer *buf;
};

static struct tensor make_tensor(size_t floats) {
  struct tensor t = {.floats = floats};
  CHECK(aclrtMalloc(&t.dev, floats * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  int64_t dims[1] = {(int64_t)floats};
  t.desc = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
  t.buf = aclCreateDataBuffer(t.dev, floats * sizeof(float));
  if (t.desc == NULL || t.buf == NULL) {
    fprintf(stderr, "stomp: cannot describe a tensor\n");
    exit(1);
  }
  return t;
}

static void drop_tensor(struct tensor *t) {
  CHECK(aclDestroyDataBuffer(t->buf));
  aclDestroyTensorDesc(t->desc);
  CHECK(aclrtFree(t->dev));
}

static void upload(struct tensor *t, float value) {
  float host[256];
  for (size_t i = 0; i < t->floats; i++) host[i] = value;
  CHECK(aclrtMemcpy(t->dev, t->floats * sizeof(float), host, t->floats * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE));
}

static void sleep_ms(long ms) {
  struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static void wait_for(const char *path) {
  for (int i = 0; i < 3000; i++) {
    if (access(path, F_OK) == 0) return;
    sleep_ms(10);
  }
  fprintf(stderr, "stomp: %s did not appear within 30 s\n", path);
  exit(1);
}

static void op(const char *type, struct tensor *in0, struct tensor *in1, struct tensor *out) {
  aclTensorDesc *in_desc[2] = {in0->desc, in1 ? in1->desc : NULL};
  aclDataBuffer *in_buf[2] = {in0->buf, in1 ? in1->buf : NULL};
  CHECK(aclopExecuteV2(type, in1 ? 2 : 1, in_desc, in_buf, 1, &out->desc, &out->buf, NULL, NULL));
}

int main(int argc, char **argv) {
  long pause_ms = 0;
  const char *wait_file = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--sleep-ms") == 0 && i + 1 < argc)
      pause_ms = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--wait-file") == 0 && i + 1 < argc)
      wait_file = argv[++i];
    else {
      fprintf(stderr, "usage: stomp [--sleep-ms N] [--wait-file PATH]\n");
      return 2;
    }
  }

  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  struct tensor a = make_tensor(64), b = make_tensor(64), c = make_tensor(256);
  struct tensor one = make_tensor(1), two = make_tensor(1);
  printf("stomp: A=0x%016llx B=0x%016llx C=0x%016llx\n", (unsigned long long)(uintptr_t)a.dev,
         (unsigned long long)(uintptr_t)b.dev, (unsigned long long)(uintptr_t)c.dev);
  fflush(stdout);
  upload(&c, 3.0f);
  upload(&one, 1.0f);
  upload(&two, 2.0f);
  printf("ready\n");
  fflush(stdout);
  if (wait_file != NULL) wait_for(wait_file);

  struct {
    const char *type;
    struct tensor *in0, *in1, *out;
  } ops[] = {
      {"Fill", &one, NULL, &a}, {"Fill", &two, NULL, &b}, {"Mul", &b, &b, &b},
      {"Copy", &c, NULL, &a},   {"Add", &a, &b, &a},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    if (i > 0 && pause_ms > 0) sleep_ms(pause_ms);
    op(ops[i].type, ops[i].in0, ops[i].in1, ops[i].out);
  }

  CHECK(aclrtSynchronizeDevice());
  drop_tensor(&two);
  drop_tensor(&one);
  drop_tensor(&c);
  drop_tensor(&b);
  drop_tensor(&a);
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return 0;
}
