/*
 * real_symbols.c: finds the runtime's own functions behind the ones the hook
 * interposes. Resolution is lazy and retried while something is missing,
 * because frameworks often dlopen the runtime after the hook is loaded.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "hook_internal.h"

static struct sw_real g_real;
static int g_complete;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static void *find(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p) return p;
  /* The runtime may be loaded with RTLD_LOCAL, out of RTLD_NEXT's sight. */
  void *h = dlopen("libascendcl.so", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) return NULL;
  p = dlsym(h, name);
  dlclose(h);
  return p;
}

#define RESOLVE(field)                                                                                         \
  do {                                                                                                         \
    if (!g_real.field) {                                                                                       \
      void *p = find(#field);                                                                                  \
      memcpy(&g_real.field, &p, sizeof p);                                                                     \
      if (!p) missing++;                                                                                       \
    }                                                                                                          \
  } while (0)

static void resolve(void) {
  int missing = 0;
  RESOLVE(aclrtMalloc);
  RESOLVE(aclrtMallocAlign32);
  RESOLVE(aclrtMallocCached);
  RESOLVE(aclrtFree);
  RESOLVE(aclrtMemcpy);
  RESOLVE(aclrtSynchronizeDevice);
  RESOLVE(aclrtSetDevice);
  RESOLVE(aclrtGetDevice);
  RESOLVE(aclopExecuteV2);
  RESOLVE(aclopCompileAndExecute);
  RESOLVE(aclGetDataBufferAddr);
  RESOLVE(aclGetDataBufferSizeV2);
  if (!missing) __atomic_store_n(&g_complete, 1, __ATOMIC_RELEASE);
}

const struct sw_real *sw_real(void) {
  if (SW_LIKELY(__atomic_load_n(&g_complete, __ATOMIC_ACQUIRE))) return &g_real;
  pthread_mutex_lock(&g_lock);
  resolve();
  pthread_mutex_unlock(&g_lock);
  return &g_real;
}
