/*
 * real_symbols.c: finds the runtime's own functions behind the ones the hook
 * interposes. Frameworks often dlopen the runtime after the hook is loaded,
 * so the table is filled at the first call made while the runtime is there:
 * a call that finds none of its symbols (no runtime loaded yet: an mstx mark
 * asking for the device, say) resolves nothing and leaves the question for
 * the next call. The first call that finds any of them fills the table and
 * publishes it with a release store; from then on it is read without a lock.
 *
 * A symbol missing from that first table is not settled yet for the
 * functions the hook interposes: on a real CANN aclopCompileAndExecute
 * lives in libacl_op_compiler.so, which a framework may dlopen long after
 * its first aclrtMalloc. So an interposer that finds its function missing
 * looks that one symbol up again (sw_real_retry: the call fails anyway, so
 * the path is cold) and stores it in the table when found; only when the
 * retry fails too is the symbol named on stderr, once, and the call fails
 * with ACL_ERROR_INVALID_PARAM. The retry is sound at that moment because an
 * interposed function can only be reached once the library that defines it
 * is loaded (its caller was linked against it or looked it up).
 *
 * The functions only the hook itself calls (copies, device queries, buffer
 * addresses) live in libascendcl.so with aclrtMalloc, so a table without
 * them is final: they are named at once, and their callers cope.
 *
 * Found symbols cost nothing more: the table is read as before, and a
 * pointer the retry stores is one aligned word (atomic store), which a
 * reader sees either still NULL (and retries, under the lock) or whole.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
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
#define SERIAL "watched blocks are copied, then hashed, not both at once"
#define ONE_AHEAD "a checksum sample queues one chunk's copy ahead of the hash, not several"
/* `without` NULL: an interposed function, looked up again when missing. */
#define SYMBOL(field, without) {#field, offsetof(struct sw_real, field), without}

static const struct {
  const char *name;
  size_t offset;
  const char *without; /* what the job loses */
} SYMBOLS[] = {
    SYMBOL(aclrtMalloc, NULL),
    SYMBOL(aclrtMallocAlign32, NULL),
    SYMBOL(aclrtMallocCached, NULL),
    SYMBOL(aclrtFree, NULL),
    SYMBOL(aclrtSetDevice, NULL),
    SYMBOL(aclopExecuteV2, NULL),
    SYMBOL(aclopCompileAndExecute, NULL),
    SYMBOL(aclrtMemcpy, "watched blocks cannot be copied, so no watch records a sample"),
    SYMBOL(aclrtSynchronizeDevice, "watches sample without waiting for the device"),
    SYMBOL(aclrtGetDevice, "events of threads that never call aclrtSetDevice are put on device 0"),
    SYMBOL(aclGetDataBufferAddr, "op outputs are unknown: --watch windows do not open, every change is a stomp"),
    SYMBOL(aclGetDataBufferSizeV2, "op outputs are unknown: --watch windows do not open, every change is a stomp"),
    SYMBOL(aclrtGetMemInfo, "OOM snapshots say 0 bytes were free on the device"),
    SYMBOL(aclrtMemcpyAsync, SERIAL),
    SYMBOL(aclrtSynchronizeStream, SERIAL),
    SYMBOL(aclrtCreateStream, SERIAL),
    SYMBOL(aclrtDestroyStream, SERIAL),
    SYMBOL(aclrtMallocHost, SERIAL),
    SYMBOL(aclrtFreeHost, SERIAL),
    SYMBOL(aclrtHostRegister, "full-content samples are copied into the ring before they are hashed, not while"),
    SYMBOL(aclrtCreateEvent, ONE_AHEAD),
    SYMBOL(aclrtDestroyEvent, ONE_AHEAD),
    SYMBOL(aclrtRecordEvent, ONE_AHEAD),
    SYMBOL(aclrtSynchronizeEvent, ONE_AHEAD),
};
#define NSYMBOLS (sizeof SYMBOLS / sizeof SYMBOLS[0])

/* Which interposed symbols were named missing (under g_lock). */
static int g_named[NSYMBOLS];

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

static void name_missing(size_t i) {
  if (g_named[i]) return;
  g_named[i] = 1;
  fprintf(stderr, "stompwatch: the device runtime has no %s; %s\n", SYMBOLS[i].name,
          SYMBOLS[i].without ? SYMBOLS[i].without : FAILS);
}

/* How many objects the process has loaded so far (glibc counts them for
 * dl_iterate_phdr; the first object's callback already has the count). */
static int loads_of(struct dl_phdr_info *info, size_t size, void *out) {
  if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
    *(unsigned long long *)out = info->dlpi_adds;
  return 1;
}

/* Searching for the runtime's symbols walks every loaded library (a
 * PyTorch job has hundreds, and a framework op asks several times): while
 * none is found, search again only after the process loaded something new. */
static unsigned long long g_loads_searched = ~0ull;

/* Fills and publishes the table once any symbol is found; called with g_lock held. */
static void resolve_locked(void) {
  if (__atomic_load_n(&g_resolved, __ATOMIC_RELAXED)) return;
  unsigned long long loads = 0;
  dl_iterate_phdr(loads_of, &loads);
  if (loads != 0 && loads == g_loads_searched) return;
  g_loads_searched = loads;
  void *found[NSYMBOLS];
  int any = 0;
  for (size_t i = 0; i < NSYMBOLS; i++) any |= (found[i] = find(SYMBOLS[i].name)) != NULL;
  if (!any) return;
  for (size_t i = 0; i < NSYMBOLS; i++) memcpy((char *)&g_real + SYMBOLS[i].offset, &found[i], sizeof found[i]);
  __atomic_store_n(&g_resolved, 1, __ATOMIC_RELEASE);
  for (size_t i = 0; i < NSYMBOLS; i++)
    if (!found[i] && SYMBOLS[i].without) name_missing(i);
}

__attribute__((noinline)) static const struct sw_real *resolve(void) {
  pthread_mutex_lock(&g_lock);
  resolve_locked();
  const struct sw_real *table = __atomic_load_n(&g_resolved, __ATOMIC_RELAXED) ? &g_real : &g_none;
  pthread_mutex_unlock(&g_lock);
  return table;
}

const struct sw_real *sw_real(void) {
  if (SW_LIKELY(__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))) return &g_real;
  return resolve();
}

const struct sw_real *sw_real_retry(size_t offset) {
  size_t i = 0;
  while (i < NSYMBOLS && SYMBOLS[i].offset != offset) i++;
  if (i == NSYMBOLS) return NULL;
  void **slot = (void **)((char *)&g_real + offset);
  pthread_mutex_lock(&g_lock);
  resolve_locked();
  int resolved = __atomic_load_n(&g_resolved, __ATOMIC_RELAXED);
  void *p = resolved ? __atomic_load_n(slot, __ATOMIC_RELAXED) : NULL;
  if (resolved && !p) {
    p = find(SYMBOLS[i].name);
    if (p)
      __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    else
      name_missing(i);
  }
  pthread_mutex_unlock(&g_lock);
  /* No runtime at all: sw_real_missing says so, not each symbol. */
  return p ? &g_real : NULL;
}

aclError sw_real_missing(void) {
  static int said;
  if (!__atomic_load_n(&g_resolved, __ATOMIC_ACQUIRE))
    sw_warn_once(&said, "no device runtime (libascendcl.so) is loaded; ACL calls fail with ACL_ERROR_INVALID_PARAM");
  return ACL_ERROR_INVALID_PARAM;
}
