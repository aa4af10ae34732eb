/*
 * threads: concurrent allocations and ops from several threads, to shake
 * out races in the hook (and in the test runtime).
 *
 * 4 threads, each 1000 aclrtMalloc/aclrtFree pairs of varying sizes, then
 * 1000 "Add" ops on its own buffers; the result is checked at the end.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define THREADS 4
#define ROUNDS 1000
#define FLOATS 64

static int fail(const char *what, aclError err) {
  fprintf(stderr, "threads: %s failed: %d\n", what, err);
  return 1;
}

static void *worker(void *arg) {
  long id = (long)arg;
  aclError err;
  if ((err = aclrtSetDevice(0)) != ACL_SUCCESS) return (void *)(long)fail("aclrtSetDevice", err);
  for (int i = 0; i < ROUNDS; i++) {
    void *p;
    size_t size = 32 + (size_t)((i * 7919 + id * 104729) % 65536);
    if ((err = aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST)) != ACL_SUCCESS)
      return (void *)(long)fail("aclrtMalloc", err);
    if ((err = aclrtFree(p)) != ACL_SUCCESS) return (void *)(long)fail("aclrtFree", err);
  }

  /* acc = acc + step, ROUNDS times, starting from 0. */
  float host[FLOATS] = {0};
  void *dev[2];
  aclTensorDesc *desc[2];
  aclDataBuffer *buf[2];
  int64_t dims[1] = {FLOATS};
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < FLOATS; j++) host[j] = (float)i;
    if ((err = aclrtMalloc(&dev[i], sizeof host, ACL_MEM_MALLOC_HUGE_FIRST)) != ACL_SUCCESS)
      return (void *)(long)fail("aclrtMalloc", err);
    if ((err = aclrtMemcpy(dev[i], sizeof host, host, sizeof host, ACL_MEMCPY_HOST_TO_DEVICE)) != ACL_SUCCESS)
      return (void *)(long)fail("aclrtMemcpy", err);
    desc[i] = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    buf[i] = aclCreateDataBuffer(dev[i], sizeof host);
  }
  for (int i = 0; i < ROUNDS; i++) {
    if ((err = aclopExecuteV2("Add", 2, desc, buf, 1, desc, buf, NULL, NULL)) != ACL_SUCCESS)
      return (void *)(long)fail("aclopExecuteV2", err);
  }
  if ((err = aclrtMemcpy(host, sizeof host, dev[0], sizeof host, ACL_MEMCPY_DEVICE_TO_HOST)) != ACL_SUCCESS)
    return (void *)(long)fail("aclrtMemcpy", err);
  for (int i = 0; i < 2; i++) {
    aclDestroyDataBuffer(buf[i]);
    aclDestroyTensorDesc(desc[i]);
    if ((err = aclrtFree(dev[i])) != ACL_SUCCESS) return (void *)(long)fail("aclrtFree", err);
  }
  for (int j = 0; j < FLOATS; j++) {
    if (host[j] != (float)ROUNDS) {
      fprintf(stderr, "threads: thread %ld computed %g, expected %d\n", id, host[j], ROUNDS);
      return (void *)1L;
    }
  }
  return NULL;
}

int main(void) {
  if (aclInit(NULL) != ACL_SUCCESS) return 1;
  pthread_t threads[THREADS];
  for (long i = 0; i < THREADS; i++) {
    if (pthread_create(&threads[i], NULL, worker, (void *)i) != 0) return 1;
  }
  int failed = 0;
  for (int i = 0; i < THREADS; i++) {
    void *result;
    pthread_join(threads[i], &result);
    failed |= result != NULL;
  }
  aclFinalize();
  return failed;
}
