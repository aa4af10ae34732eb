/*
 * blocks: live blocks allocated by each runtime call, before and after an
 * op, for GET /processes/{pid}/blocks.
 *
 *   blocks --wait-file PATH
 *
 * Allocates ONE (aclrtMalloc, 4 bytes) and A (aclrtMalloc, 256 bytes), runs
 * Fill (ONE -> A), then allocates B (aclrtMallocCached, 1024 bytes) and C
 * (aclrtMallocAlign32, 64 bytes); prints `blocks: A=0x.. B=0x.. C=0x..` and
 * `ready`, waits for PATH to exist, frees everything and exits 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acl/acl.h"

#define CHECK(call)                                                 \
  do {                                                              \
    aclError err_ = (call);                                         \
    if (err_ != ACL_SUCCESS) {                                      \
      fprintf(stderr, "blocks: %s failed: %d\n", #call, err_);      \
      exit(1);                                                      \
    }                                                               \
  } while (0)

static void wait_for(const char *path) {
  struct timespec ts = {.tv_sec = 0, .tv_nsec = 10000000L};
  for (int i = 0; i < 3000; i++) {
    if (access(path, F_OK) == 0) return;
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "blocks: %s did not appear within 30 s\n", path);
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[1], "--wait-file") != 0) {
    fprintf(stderr, "usage: blocks --wait-file PATH\n");
    return 2;
  }
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  void *one, *a, *b, *c;
  CHECK(aclrtMalloc(&one, sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMalloc(&a, 64 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
  float value = 1.0f;
  CHECK(aclrtMemcpy(one, sizeof value, &value, sizeof value, ACL_MEMCPY_HOST_TO_DEVICE));
  int64_t one_dims[1] = {1}, a_dims[1] = {64};
  aclTensorDesc *in_desc[1] = {aclCreateTensorDesc(ACL_FLOAT, 1, one_dims, ACL_FORMAT_ND)};
  aclDataBuffer *in_buf[1] = {aclCreateDataBuffer(one, sizeof(float))};
  aclTensorDesc *out_desc[1] = {aclCreateTensorDesc(ACL_FLOAT, 1, a_dims, ACL_FORMAT_ND)};
  aclDataBuffer *out_buf[1] = {aclCreateDataBuffer(a, 64 * sizeof(float))};
  CHECK(aclopExecuteV2("Fill", 1, in_desc, in_buf, 1, out_desc, out_buf, NULL, NULL));
  CHECK(aclrtMallocCached(&b, 1024, ACL_MEM_MALLOC_HUGE_FIRST));
  CHECK(aclrtMallocAlign32(&c, 64, ACL_MEM_MALLOC_HUGE_FIRST));
  printf("blocks: A=0x%016llx B=0x%016llx C=0x%016llx\n", (unsigned long long)(uintptr_t)a,
         (unsigned long long)(uintptr_t)b, (unsigned long long)(uintptr_t)c);
  printf("ready\n");
  fflush(stdout);
  wait_for(argv[2]);
  for (int i = 0; i < 1; i++) {
    aclDestroyDataBuffer(in_buf[i]);
    aclDestroyTensorDesc(in_desc[i]);
    aclDestroyDataBuffer(out_buf[i]);
    aclDestroyTensorDesc(out_desc[i]);
  }
  CHECK(aclrtFree(c));
  CHECK(aclrtFree(b));
  CHECK(aclrtFree(a));
  CHECK(aclrtFree(one));
  return 0;
}
