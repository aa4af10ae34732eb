/*
 * intercept_mstx.c: mstx marks and ranges, caught two ways. Preloaded, the
 * hook's mstxMarkA/mstxRangeStartA/mstxRangeEnd interpose the library's; and
 * through InitInjectionMstx (MSTX_INJECTION_PATH, or the mstx library finding
 * a preloaded tool by itself) the hook fills the library's function table,
 * which also catches callers that looked the functions up with dlsym.
 * When both paths see one call, the interposed function records it and the
 * table entry, reached from inside it, only hands back the range id.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "hook_internal.h"
#include "ms_tools_ext.h"

static uint64_t g_range_id;
static __thread int t_in_mstx;
static __thread mstxRangeId t_range_id;

static mstxRangeId next_range_id(void) { return __atomic_add_fetch(&g_range_id, 1, __ATOMIC_RELAXED); }

static void record_mark(const char *message) {
  sw_emit(SW_REC_MARK, 0, sw_current_device(), 0, 0, 0, 0, 0, message ? message : "", NULL, 0);
}

static void record_range_start(mstxRangeId id, const char *message) {
  sw_emit(SW_REC_RANGE_START, 0, sw_current_device(), 0, 0, 0, id, 0, message ? message : "", NULL, 0);
}

static void record_range_end(mstxRangeId id) {
  sw_emit(SW_REC_RANGE_END, 0, sw_current_device(), 0, 0, 0, id, 0, NULL, NULL, 0);
}

/* ---- table entries (injection) ---- */

static void table_mark(const char *message, aclrtStream stream) {
  (void)stream;
  if (!t_in_mstx) record_mark(message);
}

static mstxRangeId table_range_start(const char *message, aclrtStream stream) {
  (void)stream;
  if (t_in_mstx) return t_range_id;
  mstxRangeId id = next_range_id();
  record_range_start(id, message);
  return id;
}

static void table_range_end(mstxRangeId id) {
  if (!t_in_mstx) record_range_end(id);
}

SW_EXPORT int InitInjectionMstx(mstxGetModuleFuncTableFunc getFuncTable) {
  mstxFuncTable table;
  unsigned int size = 0;
  if (!getFuncTable || getFuncTable(MSTX_API_MODULE_CORE, &table, &size) != MSTX_SUCCESS ||
      size < MSTX_API_CORE_RANGE_END)
    return MSTX_FAIL;
  /* Never call what a slot held before: during init it is a trampoline back
   * into the slot itself. */
  *table[MSTX_API_CORE_MARK_A] = (mstxFuncPointer)table_mark;
  *table[MSTX_API_CORE_RANGE_START_A] = (mstxFuncPointer)table_range_start;
  *table[MSTX_API_CORE_RANGE_END] = (mstxFuncPointer)table_range_end;
  return MSTX_SUCCESS;
}

/* ---- interposed functions (LD_PRELOAD) ---- */

/* The library's own function behind ours, kept in `*slot` once found. The
 * slot is shared by every thread, so it is read and written atomically;
 * while the library lacks the function (or is not loaded yet) each call
 * asks again, which marks, rare as they are, can afford. */
static void *next(void **slot, const char *name) {
  void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!p && (p = dlsym(RTLD_NEXT, name)) != NULL) __atomic_store_n(slot, p, __ATOMIC_RELEASE);
  return p;
}

SW_EXPORT void mstxMarkA(const char *message, aclrtStream stream) {
  static void *slot;
  mstxMarkAFunc real = (mstxMarkAFunc)next(&slot, "mstxMarkA");
  record_mark(message);
  t_in_mstx = 1;
  if (real) real(message, stream);
  t_in_mstx = 0;
}

SW_EXPORT mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream) {
  static void *slot;
  mstxRangeStartAFunc real = (mstxRangeStartAFunc)next(&slot, "mstxRangeStartA");
  mstxRangeId id = next_range_id();
  record_range_start(id, message);
  t_in_mstx = 1;
  t_range_id = id;
  /* The library's own id is not ours when no tool table is in place;
   * callers get ours, so start and end always match in the log. */
  if (real) real(message, stream);
  t_in_mstx = 0;
  return id;
}

SW_EXPORT void mstxRangeEnd(mstxRangeId id) {
  static void *slot;
  mstxRangeEndFunc real = (mstxRangeEndFunc)next(&slot, "mstxRangeEnd");
  record_range_end(id);
  t_in_mstx = 1;
  if (real) real(id);
  t_in_mstx = 0;
}
