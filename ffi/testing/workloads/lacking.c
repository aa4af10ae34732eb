/*
 * lacking: calls functions the runtime may lack, from several threads at
 * once, to see that the hook answers them with an error instead of taking
 * the job down, and names each missing one once however many threads ask.
 *
 * Run against build/testing/lacking/libascendcl.so (LD_LIBRARY_PATH), which
 * has no aclopCompileAndExecute, aclrtMallocCached or aclrtGetDevice. Without
 * the hook such a call is a symbol lookup error: only the hook's own
 * definitions make the calls below reachable.
 *
 * Prints per call `NAME CODE` from thread 0 (every thread must agree, or it
 * exits 1), then `done`.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define THREADS 4

struct result {
  aclError cached, compile, execute, malloc_;
};

static pthread_barrier_t g_start;

static void *worker(void *arg) {
  struct result *r = arg;
  pthread_barrier_wait(&g_start); /* all threads make their first call together */
  void *cached = NULL, *plain = NULL;
  r->cached = aclrtMallocCached(&cached, 64, ACL_MEM_MALLOC_HUGE_FIRST);
  r->malloc_ = aclrtMalloc(&plain, 64, ACL_MEM_MALLOC_HUGE_FIRST);
  float one = 1.0f;
  aclDataBuffer *in = aclCreateDataBuffer(&one, sizeof one);
  aclDataBuffer *out = aclCreateDataBuffer(plain, 64);
  const aclDataBuffer *const ins[1] = {in};
  aclDataBuffer *const outs[1] = {out};
  r->compile = aclopCompileAndExecute("Fill", 1, NULL, ins, 1, NULL, outs, NULL, ACL_ENGINE_SYS, ACL_COMPILE_SYS,
                                      NULL, NULL);
  aclDataBuffer *ins2[1] = {in}, *outs2[1] = {out};
  r->execute = aclopExecuteV2("Fill", 1, NULL, ins2, 1, NULL, outs2, NULL, NULL);
  aclDestroyDataBuffer(in);
  aclDestroyDataBuffer(out);
  if (cached) aclrtFree(cached);
  if (plain) aclrtFree(plain);
  return NULL;
}

int main(void) {
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 1;
  pthread_t t[THREADS];
  struct result r[THREADS];
  pthread_barrier_init(&g_start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, &r[i]);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 1; i < THREADS; i++)
    if (r[i].cached != r[0].cached || r[i].compile != r[0].compile || r[i].execute != r[0].execute ||
        r[i].malloc_ != r[0].malloc_) {
      fprintf(stderr, "lacking: threads got different answers\n");
      return 1;
    }
  printf("aclrtMallocCached %d\naclrtMalloc %d\naclopCompileAndExecute %d\naclopExecuteV2 %d\ndone\n", r[0].cached,
         r[0].malloc_, r[0].compile, r[0].execute);
  return 0;
}
