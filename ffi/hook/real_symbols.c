/*
 * real_symbols.c: finds the runtime's own functions behind the ones the hook
 * interposes, once. Frameworks often dlopen the runtime after the hook is
 * loaded, so "once" is the first call made while the runtime is there: a
 * call that finds none of its symbols (no runtime loaded yet: an mstx mark
 * asking for the device, say) resolves nothing and leaves the question for
 * the next call. The first call that finds any of them settles every one:
 * the table is filled, published with a release store, and each symbol the
 * runtime lacks is named once on stderr and stays missing. From then on
 * the table is read without a lock, and a function whose symbol is missing
 * fails with ACL_ERROR_INVALID_PARAM instead of being called.
 *
 * An interposed function can only be reached once the library that defines
 * it is loaded (the caller was linked against it), which is why settling
 * at the first call is safe for them. On a real CANN, aclopCompileAndExecute
 * lives in libacl_op_compiler.so, loaded with the runtime by the frameworks
 * that use it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "hook_internal.h"

/* Read by every intercepted call: only after g_resolved (acquire). */
static struct sw_real g_real;
static int g_resolved;
/* What callers get while no runtime is loaded: every symbol missing. */
static const struct sw_real g_none;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

#define FAILS "calls to it fail with ACL_ERROR_INVALID_PARAM"
#define SYMBOL(field, without) {#field, offsetof(struct sw_real, field), without}

static const struct {
  const char *name;
  size_t offset;
  const char *without; /* what the job loses */
} SYMBOLS[] = {
    SYMBOL(aclrtMalloc, FAILS),
    SYMBOL(aclrtMallocAlign32, FAILS),
    SYMBOL(aclrtMallocCached, FAILS),
    SYMBOL(aclrtFree, FAILS),
    SYMBOL(aclrtSetDevice, FAILS),
    SYMBOL(aclopExecuteV2, FAILS),
    SYMBOL(aclopCompileAndExecute, FAILS),
    SYMBOL(aclrtMemcpy, "watched blocks cannot be copied, so no watch records a sample"),
    SYMBOL(aclrtSynchronizeDevice, "watches sample without waiting for the device"),
    SYMBOL(aclrtGetDevice, "events of threads that never call aclrtSetDevice are put on device 0"),
    SYMBOL(aclGetDataBufferAddr, "op outputs are unknown: --watch windows do not open, every change is a stomp"),
    SYMBOL(aclGetDataBufferSizeV2, "op outputs are unknown: --watch windows do not open, every change is a stomp"),
};
#define NSYMBOLS (sizeof SYMBOLS / sizeof SYMBOLS[0])

/* Libraries that define the symbols, searched when they were loaded
 * RTLD_LOCAL, out of RTLD_NEXT's sight. */
static const char *const RUNTIME_LIBRARIES[] = {"libascendcl.so", "libacl_op_compiler.so"};

static void *find(const char *name) {
  void *p = dlsym(RTLD_NEXT, name);
  for (size_t i = 0; !p && i < sizeof RUNTIME_LIBRARIES / sizeof RUNTIME_LIBRARIES[0]; i++) {
    void *h = dlopen(RUNTIME_LIBRARIES[i], RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    p = dlsym(h, name);
    dlclose(h);
  }
  return p;
}

__attribute__((noinline)) static const struct sw_real *resolve(void) {
  pthread_mutex_lock(&g_lock);
  if (!__atomic_load_n(&g_resolved, __ATOMIC_RELAXED)) {
    void *found[NSYMBOLS];
    int any = 0;
    for (size_t i = 0; i < NSYMBOLS; i++) any |= (found[i] = find(SYMBOLS[i].name)) != NULL;
    if (any) {
      for (size_t i = 0; i < NSYMBOLS; i++) memcpy((char *)&g_real + SYMBOLS[i].offset, &found[i], sizeof found[i]);
      __atomic_store_n(&g_resolved, 1, __ATOMIC_RELEASE);
      for (size_t i = 0; i < NSYMBOLS; i++)
        if (!found[i]) fprintf(stderr, "stompwatch: the device runtime has no %s; %s\n", SYMBOLS[i].name, SYMBOLS[i].without);
    }
  }
  const struct sw_real *table = __atomic_load_n(&g_resolved, __ATOMIC_RELAXED) ? &g_real : &g_none;
  pthread_mutex_unlock(&g_lock);
  return table;
}

const struct sw_real *sw_real(void) {
  if (SW_LIKELY(__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))) return &g_real;
  return resolve();
}

aclError sw_real_missing(void) {
  static int said;
  if (!__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))
    sw_warn_once(&said, "no device runtime (libascendcl.so) is loaded; ACL calls fail with ACL_ERROR_INVALID_PARAM");
  return ACL_ERROR_INVALID_PARAM;
}
