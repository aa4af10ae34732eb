/*
 * ms_tools_ext.c: the test build of libms_tools_ext.so, the mstx library the
 * test workloads link against. It dispatches every call through function
 * tables that a tool named by MSTX_INJECTION_PATH may overwrite, exactly as
 * the real library does (see include/ms_tools_ext.h), so the hook attaches
 * here the way it attaches on a real machine.
 *
 * Where the real library, finding no tool, turns every call into a no-op
 * (range id 0), this one falls back to defaults that hand out range ids from
 * 1 and domain handles, so workloads behave the same with and without a tool.
 * A tool whose InitInjectionMstx fails gets the real behaviour: all no-ops.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ms_tools_ext.h"

/* Casts through the generic type are how the real tables store functions. */
#define FP(f) ((mstxFuncPointer)(f))

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void init_once(void);

/* --- defaults, used for every slot that no tool replaced ---------------- */

static uint64_t g_next_range_id = 1;

struct mstxDomainRegistration_st {
  struct mstxDomainRegistration_st *next;
  char name[];
};
static struct mstxDomainRegistration_st *g_domains;
static pthread_mutex_t g_domains_lock = PTHREAD_MUTEX_INITIALIZER;

static void def_mark(const char *message, aclrtStream stream) {
  (void)message;
  (void)stream;
}

static mstxRangeId def_range_start(const char *message, aclrtStream stream) {
  (void)message;
  (void)stream;
  return __atomic_fetch_add(&g_next_range_id, 1, __ATOMIC_RELAXED);
}

static void def_range_end(mstxRangeId id) { (void)id; }

static void def_get_tool_id(uint64_t *id) { *id = MSTX_TOOL_INVALID_ID; }

/* Domains live until exit: a handle might have come from a tool's create, so
 * the default destroy cannot free it. The list only keeps them reachable, so
 * leak checkers stay quiet. */
static mstxDomainHandle_t def_domain_create(const char *name) {
  if (name == NULL) return NULL;
  size_t len = strlen(name);
  struct mstxDomainRegistration_st *d = malloc(sizeof *d + len + 1);
  if (d == NULL) return NULL;
  memcpy(d->name, name, len + 1);
  pthread_mutex_lock(&g_domains_lock);
  d->next = g_domains;
  g_domains = d;
  pthread_mutex_unlock(&g_domains_lock);
  return d;
}

static void def_domain_destroy(mstxDomainHandle_t domain) { (void)domain; }

static void def_domain_mark(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  (void)domain;
  def_mark(message, stream);
}

static mstxRangeId def_domain_range_start(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  if (domain == NULL) return 0;
  return def_range_start(message, stream);
}

static void def_domain_range_end(mstxDomainHandle_t domain, mstxRangeId id) {
  (void)domain;
  (void)id;
}

static mstxMemHeapHandle_t def_heap_register(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc) {
  (void)domain;
  (void)desc;
  return NULL;
}

static void def_heap_unregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap) {
  (void)domain;
  (void)heap;
}

static void def_regions_register(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc) {
  (void)domain;
  (void)desc;
}

static void def_regions_unregister(mstxDomainHandle_t domain, mstxMemRegionsUnregisterBatch_t const *desc) {
  (void)domain;
  (void)desc;
}

static const mstxFuncPointer g_core_defaults[MSTX_API_CORE_SIZE] = {
    [MSTX_API_CORE_MARK_A] = FP(def_mark),
    [MSTX_API_CORE_RANGE_START_A] = FP(def_range_start),
    [MSTX_API_CORE_RANGE_END] = FP(def_range_end),
    [MSTX_API_CORE_GET_TOOL_ID] = FP(def_get_tool_id),
};
static const mstxFuncPointer g_domain_defaults[MSTX_API_CORE2_SIZE] = {
    [MSTX_API_CORE2_DOMAIN_CREATE_A] = FP(def_domain_create),
    [MSTX_API_CORE2_DOMAIN_DESTROY] = FP(def_domain_destroy),
    [MSTX_API_CORE2_DOMAIN_MARK_A] = FP(def_domain_mark),
    [MSTX_API_CORE2_DOMAIN_RANGE_START_A] = FP(def_domain_range_start),
    [MSTX_API_CORE2_DOMAIN_RANGE_END] = FP(def_domain_range_end),
};
static const mstxFuncPointer g_mem_defaults[MSTX_API_CORE_MEM_SIZE] = {
    [MSTX_API_CORE_MEMHEAP_REGISTER] = FP(def_heap_register),
    [MSTX_API_CORE_MEMHEAP_UNREGISTER] = FP(def_heap_unregister),
    [MSTX_API_CORE_MEM_REGIONS_REGISTER] = FP(def_regions_register),
    [MSTX_API_CORE_MEM_REGIONS_UNREGISTER] = FP(def_regions_unregister),
};

/* --- dispatch ----------------------------------------------------------- */

/* Before initialisation every slot holds a trampoline that initialises and
 * dispatches again, as in the real library (mstx_init_defs.h). */
static void tr_mark(const char *message, aclrtStream stream);
static mstxRangeId tr_range_start(const char *message, aclrtStream stream);
static void tr_range_end(mstxRangeId id);
static void tr_get_tool_id(uint64_t *id);
static mstxDomainHandle_t tr_domain_create(const char *name);
static void tr_domain_destroy(mstxDomainHandle_t domain);
static void tr_domain_mark(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
static mstxRangeId tr_domain_range_start(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
static void tr_domain_range_end(mstxDomainHandle_t domain, mstxRangeId id);
static mstxMemHeapHandle_t tr_heap_register(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc);
static void tr_heap_unregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap);
static void tr_regions_register(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc);
static void tr_regions_unregister(mstxDomainHandle_t domain, mstxMemRegionsUnregisterBatch_t const *desc);

/* The slots, indexed by function id (index 0 unused). */
static mstxFuncPointer g_core[MSTX_API_CORE_SIZE] = {
    [MSTX_API_CORE_MARK_A] = FP(tr_mark),
    [MSTX_API_CORE_RANGE_START_A] = FP(tr_range_start),
    [MSTX_API_CORE_RANGE_END] = FP(tr_range_end),
    [MSTX_API_CORE_GET_TOOL_ID] = FP(tr_get_tool_id),
};
static mstxFuncPointer g_domain[MSTX_API_CORE2_SIZE] = {
    [MSTX_API_CORE2_DOMAIN_CREATE_A] = FP(tr_domain_create),
    [MSTX_API_CORE2_DOMAIN_DESTROY] = FP(tr_domain_destroy),
    [MSTX_API_CORE2_DOMAIN_MARK_A] = FP(tr_domain_mark),
    [MSTX_API_CORE2_DOMAIN_RANGE_START_A] = FP(tr_domain_range_start),
    [MSTX_API_CORE2_DOMAIN_RANGE_END] = FP(tr_domain_range_end),
};
static mstxFuncPointer g_mem[MSTX_API_CORE_MEM_SIZE] = {
    [MSTX_API_CORE_MEMHEAP_REGISTER] = FP(tr_heap_register),
    [MSTX_API_CORE_MEMHEAP_UNREGISTER] = FP(tr_heap_unregister),
    [MSTX_API_CORE_MEM_REGIONS_REGISTER] = FP(tr_regions_register),
    [MSTX_API_CORE_MEM_REGIONS_UNREGISTER] = FP(tr_regions_unregister),
};

/* What getFuncTable hands out: slot addresses, NULL at 0 and at the end. */
static mstxFuncPointer *g_core_table[MSTX_API_CORE_SIZE + 1] = {
    NULL, &g_core[1], &g_core[2], &g_core[3], &g_core[4], NULL,
};
static mstxFuncPointer *g_domain_table[MSTX_API_CORE2_SIZE + 1] = {
    NULL, &g_domain[1], &g_domain[2], &g_domain[3], &g_domain[4], &g_domain[5], NULL,
};
static mstxFuncPointer *g_mem_table[MSTX_API_CORE_MEM_SIZE + 1] = {
    NULL, &g_mem[1], &g_mem[2], &g_mem[3], &g_mem[4], NULL,
};

/* The tool writes slots only inside InitInjectionMstx, under pthread_once;
 * the acquire load pairs with our release stores after it. */
static mstxFuncPointer slot(mstxFuncPointer *s) { return __atomic_load_n(s, __ATOMIC_ACQUIRE); }

/* Static twins of the public functions: the trampolines call these rather
 * than the exported names, which an LD_PRELOADed library could interpose. */
static void do_mark(const char *message, aclrtStream stream) {
  mstxMarkAFunc f = (mstxMarkAFunc)slot(&g_core[MSTX_API_CORE_MARK_A]);
  if (f) f(message, stream);
}
static mstxRangeId do_range_start(const char *message, aclrtStream stream) {
  mstxRangeStartAFunc f = (mstxRangeStartAFunc)slot(&g_core[MSTX_API_CORE_RANGE_START_A]);
  return f ? f(message, stream) : 0;
}
static void do_range_end(mstxRangeId id) {
  mstxRangeEndFunc f = (mstxRangeEndFunc)slot(&g_core[MSTX_API_CORE_RANGE_END]);
  if (f) f(id);
}
static void do_get_tool_id(uint64_t *id) {
  if (id == NULL) return;
  mstxGetToolIdFunc f = (mstxGetToolIdFunc)slot(&g_core[MSTX_API_CORE_GET_TOOL_ID]);
  if (f)
    f(id);
  else
    *id = MSTX_TOOL_INVALID_ID;
}
static mstxDomainHandle_t do_domain_create(const char *name) {
  mstxDomainCreateAFunc f = (mstxDomainCreateAFunc)slot(&g_domain[MSTX_API_CORE2_DOMAIN_CREATE_A]);
  return f ? f(name) : NULL;
}
static void do_domain_destroy(mstxDomainHandle_t domain) {
  mstxDomainDestroyFunc f = (mstxDomainDestroyFunc)slot(&g_domain[MSTX_API_CORE2_DOMAIN_DESTROY]);
  if (f) f(domain);
}
static void do_domain_mark(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  mstxDomainMarkAFunc f = (mstxDomainMarkAFunc)slot(&g_domain[MSTX_API_CORE2_DOMAIN_MARK_A]);
  if (f) f(domain, message, stream);
}
static mstxRangeId do_domain_range_start(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  mstxDomainRangeStartAFunc f =
      (mstxDomainRangeStartAFunc)slot(&g_domain[MSTX_API_CORE2_DOMAIN_RANGE_START_A]);
  return f ? f(domain, message, stream) : 0;
}
static void do_domain_range_end(mstxDomainHandle_t domain, mstxRangeId id) {
  mstxDomainRangeEndFunc f = (mstxDomainRangeEndFunc)slot(&g_domain[MSTX_API_CORE2_DOMAIN_RANGE_END]);
  if (f) f(domain, id);
}
static mstxMemHeapHandle_t do_heap_register(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc) {
  mstxMemHeapRegisterFunc f = (mstxMemHeapRegisterFunc)slot(&g_mem[MSTX_API_CORE_MEMHEAP_REGISTER]);
  return f ? f(domain, desc) : NULL;
}
static void do_heap_unregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap) {
  mstxMemHeapUnregisterFunc f = (mstxMemHeapUnregisterFunc)slot(&g_mem[MSTX_API_CORE_MEMHEAP_UNREGISTER]);
  if (f) f(domain, heap);
}
static void do_regions_register(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc) {
  mstxMemRegionsRegisterFunc f = (mstxMemRegionsRegisterFunc)slot(&g_mem[MSTX_API_CORE_MEM_REGIONS_REGISTER]);
  if (f) f(domain, desc);
}
static void do_regions_unregister(mstxDomainHandle_t domain, mstxMemRegionsUnregisterBatch_t const *desc) {
  mstxMemRegionsUnregisterFunc f =
      (mstxMemRegionsUnregisterFunc)slot(&g_mem[MSTX_API_CORE_MEM_REGIONS_UNREGISTER]);
  if (f) f(domain, desc);
}

#define INIT() pthread_once(&g_once, init_once)
static void tr_mark(const char *m, aclrtStream s) { INIT(); do_mark(m, s); }
static mstxRangeId tr_range_start(const char *m, aclrtStream s) { INIT(); return do_range_start(m, s); }
static void tr_range_end(mstxRangeId id) { INIT(); do_range_end(id); }
static void tr_get_tool_id(uint64_t *id) { INIT(); do_get_tool_id(id); }
static mstxDomainHandle_t tr_domain_create(const char *n) { INIT(); return do_domain_create(n); }
static void tr_domain_destroy(mstxDomainHandle_t d) { INIT(); do_domain_destroy(d); }
static void tr_domain_mark(mstxDomainHandle_t d, const char *m, aclrtStream s) { INIT(); do_domain_mark(d, m, s); }
static mstxRangeId tr_domain_range_start(mstxDomainHandle_t d, const char *m, aclrtStream s) {
  INIT();
  return do_domain_range_start(d, m, s);
}
static void tr_domain_range_end(mstxDomainHandle_t d, mstxRangeId id) { INIT(); do_domain_range_end(d, id); }
static mstxMemHeapHandle_t tr_heap_register(mstxDomainHandle_t d, mstxMemHeapDesc_t const *desc) {
  INIT();
  return do_heap_register(d, desc);
}
static void tr_heap_unregister(mstxDomainHandle_t d, mstxMemHeapHandle_t h) { INIT(); do_heap_unregister(d, h); }
static void tr_regions_register(mstxDomainHandle_t d, mstxMemRegionsRegisterBatch_t const *desc) {
  INIT();
  do_regions_register(d, desc);
}
static void tr_regions_unregister(mstxDomainHandle_t d, mstxMemRegionsUnregisterBatch_t const *desc) {
  INIT();
  do_regions_unregister(d, desc);
}

/* --- injection ---------------------------------------------------------- */

static int get_func_table(mstxFuncModule module, mstxFuncTable *outTable, unsigned int *outSize) {
  mstxFuncTable table;
  unsigned int size;
  switch (module) {
  case MSTX_API_MODULE_CORE:
    table = g_core_table, size = MSTX_API_CORE_SIZE;
    break;
  case MSTX_API_MODULE_CORE_DOMAIN:
    table = g_domain_table, size = MSTX_API_CORE2_SIZE;
    break;
  case MSTX_API_MODULE_CORE_MEM:
    table = g_mem_table, size = MSTX_API_CORE_MEM_SIZE;
    break;
  default:
    return MSTX_FAIL;
  }
  if (outTable == NULL || outSize == NULL) return MSTX_FAIL;
  *outTable = table;
  *outSize = size;
  return MSTX_SUCCESS;
}

/* Slots still holding their trampoline were not replaced by the tool. */
static void settle(mstxFuncPointer *slots, const mstxFuncPointer *tramps, const mstxFuncPointer *defaults,
                   unsigned n, int tool_failed) {
  for (unsigned i = 1; i < n; i++) {
    mstxFuncPointer now = slots[i];
    mstxFuncPointer next = tool_failed ? NULL : now == tramps[i] ? defaults[i] : now;
    __atomic_store_n(&slots[i], next, __ATOMIC_RELEASE);
  }
}

static void init_once(void) {
  /* Copies of the trampoline tables, to recognise untouched slots. */
  mstxFuncPointer core[MSTX_API_CORE_SIZE], domain[MSTX_API_CORE2_SIZE], mem[MSTX_API_CORE_MEM_SIZE];
  memcpy(core, g_core, sizeof core);
  memcpy(domain, g_domain, sizeof domain);
  memcpy(mem, g_mem, sizeof mem);

  void *handle = NULL;
  const char *path = getenv("MSTX_INJECTION_PATH");
  if (path != NULL && path[0] != '\0') {
    handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) fprintf(stderr, "ms_tools_ext: cannot load MSTX_INJECTION_PATH: %s\n", dlerror());
  }
  /* A NULL handle is RTLD_DEFAULT in glibc: like the real library, this finds
   * an LD_PRELOADed tool even when the variable is unset. */
  mstxInitInjectionFunc init = (mstxInitInjectionFunc)dlsym(handle, "InitInjectionMstx");
  int failed = init != NULL && init(get_func_table) != MSTX_SUCCESS;

  settle(g_core, core, g_core_defaults, MSTX_API_CORE_SIZE, failed);
  settle(g_domain, domain, g_domain_defaults, MSTX_API_CORE2_SIZE, failed);
  settle(g_mem, mem, g_mem_defaults, MSTX_API_CORE_MEM_SIZE, failed);
}

/* --- the exported API --------------------------------------------------- */

void mstxMarkA(const char *message, aclrtStream stream) { do_mark(message, stream); }
mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream) { return do_range_start(message, stream); }
void mstxRangeEnd(mstxRangeId id) { do_range_end(id); }
void mstxGetToolId(uint64_t *id) { do_get_tool_id(id); }

mstxDomainHandle_t mstxDomainCreateA(const char *name) { return do_domain_create(name); }
void mstxDomainDestroy(mstxDomainHandle_t domain) { do_domain_destroy(domain); }
void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  do_domain_mark(domain, message, stream);
}
mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, aclrtStream stream) {
  return do_domain_range_start(domain, message, stream);
}
void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id) { do_domain_range_end(domain, id); }

mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc) {
  return do_heap_register(domain, desc);
}
void mstxMemHeapUnregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap) {
  do_heap_unregister(domain, heap);
}
void mstxMemRegionsRegister(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc) {
  do_regions_register(domain, desc);
}
void mstxMemRegionsUnregister(mstxDomainHandle_t domain, mstxMemRegionsUnregisterBatch_t const *desc) {
  do_regions_unregister(domain, desc);
}
