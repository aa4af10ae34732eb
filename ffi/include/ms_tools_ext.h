/*
 * ms_tools_ext.h: the mstx C API (MindStudio Tools Extension, the NPU analogue
 * of NVTX) and the injection interface through which a tool such as the
 * stompwatch hook receives the calls (SPEC section 5).
 *
 * Follows Huawei's public headers (MindStudio, Mulan PSL v2): ms_tools_ext.h
 * for the API and the memory types, mstx_detail/mstx_types.h for the function
 * pointer types, module ids and table indices, mstx_detail/mstx_impl.h for
 * the table layout. Names, values and layout are kept identical so that an
 * InitInjectionMstx written against this header works with the real
 * libms_tools_ext.so; the real split into several headers and the
 * MSTX_IMPL_GUARD are dropped.
 *
 * How injection works (as in the real library):
 *   1. On the first mstx call the library dlopens getenv("MSTX_INJECTION_PATH")
 *      (RTLD_LAZY | RTLD_LOCAL) and looks up `InitInjectionMstx` in it. When
 *      the variable is unset or dlopen fails the lookup uses a NULL handle,
 *      which glibc treats as RTLD_DEFAULT: an LD_PRELOADed library that
 *      exports InitInjectionMstx is found even without the variable.
 *   2. It calls InitInjectionMstx(getFuncTable) exactly once, other threads
 *      waiting. For each module the tool calls
 *      getFuncTable(module, &table, &size); table[id] (1 <= id < size) is the
 *      ADDRESS of the slot the API function dispatches through, so the tool
 *      writes `*table[id] = (mstxFuncPointer)myFunction`. table[0] and
 *      table[size] are NULL.
 *   3. InitInjectionMstx returns MSTX_SUCCESS, or MSTX_FAIL, in which case
 *      every slot is cleared and all mstx calls become no-ops (ranges
 *      return 0), which is what the real library does.
 *
 * A replacement must not call the slot's previous content: during
 * InitInjectionMstx the slots hold the library's init trampolines, which
 * dispatch through the slot again (endless recursion). A tool that replaces
 * mstxRangeStartA therefore hands out its own range ids.
 */
#ifndef STOMPWATCH_MS_TOOLS_EXT_H
#define STOMPWATCH_MS_TOOLS_EXT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSTX_SUCCESS 0
#define MSTX_FAIL 1

/* What mstxGetToolId reports (the real list; a tool registers its own id by
 * replacing MSTX_API_CORE_GET_TOOL_ID). */
#define MSTX_TOOL_INVALID_ID 0x0
#define MSTX_TOOL_MSPROF_ID 0x1000
#define MSTX_TOOL_MSOPPROF_ID 0x1001
#define MSTX_TOOL_MSSANITIZER_ID 0x1002
#define MSTX_TOOL_MSLEAKS_ID 0x1003

typedef uint64_t mstxRangeId;
typedef void *aclrtStream; /* same typedef as acl.h; C11 allows the repeat */

struct mstxDomainRegistration_st;
typedef struct mstxDomainRegistration_st mstxDomainRegistration_t;
typedef mstxDomainRegistration_t *mstxDomainHandle_t;

struct mstxMemHeap_st;
typedef struct mstxMemHeap_st mstxMemHeap_t;
typedef mstxMemHeap_t *mstxMemHeapHandle_t;

struct mstxMemRegion_st;
typedef struct mstxMemRegion_st mstxMemRegion_t;
typedef mstxMemRegion_t *mstxMemRegionHandle_t;

/* Memory registration: how torch_npu reports its caching-allocator blocks
 * (domain "ptaCaching"). regionDescArray points at regionCount
 * mstxMemVirtualRangeDesc_t when regionType is VIRTUAL_ADDRESS. */
typedef struct mstxMemVirtualRangeDesc_t {
  uint32_t deviceId;
  void const *ptr;
  uint64_t size;
} mstxMemVirtualRangeDesc_t;

typedef enum mstxMemHeapUsageType { MSTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR = 0 } mstxMemHeapUsageType;
typedef enum mstxMemType { MSTX_MEM_TYPE_VIRTUAL_ADDRESS = 0 } mstxMemType;

typedef struct mstxMemHeapDesc_t {
  mstxMemHeapUsageType usage;
  mstxMemType type;
  void const *typeSpecificDesc; /* a mstxMemVirtualRangeDesc_t for VIRTUAL_ADDRESS */
} mstxMemHeapDesc_t;

typedef struct mstxMemRegionsRegisterBatch_t {
  mstxMemHeapHandle_t heap;
  mstxMemType regionType;
  size_t regionCount;
  void const *regionDescArray;
  mstxMemRegionHandle_t *regionHandleArrayOut;
} mstxMemRegionsRegisterBatch_t;

typedef enum mstxMemRegionRefType {
  MSTX_MEM_REGION_REF_TYPE_POINTER = 0,
  MSTX_MEM_REGION_REF_TYPE_HANDLE
} mstxMemRegionRefType;

typedef struct mstxMemRegionRef_t {
  mstxMemRegionRefType refType;
  union {
    void const *pointer;
    mstxMemRegionHandle_t handle;
  };
} mstxMemRegionRef_t;

typedef struct mstxMemRegionsUnregisterBatch_t {
  size_t refCount;
  mstxMemRegionRef_t const *refArray;
} mstxMemRegionsUnregisterBatch_t;

/* The API. Messages must not be NULL (tools cut them at 156 bytes); stream
 * may be NULL. mstxRangeStartA returns 0 on failure. */
void mstxMarkA(const char *message, aclrtStream stream);
mstxRangeId mstxRangeStartA(const char *message, aclrtStream stream);
void mstxRangeEnd(mstxRangeId id);
void mstxGetToolId(uint64_t *id);

mstxDomainHandle_t mstxDomainCreateA(const char *name);
void mstxDomainDestroy(mstxDomainHandle_t domain);
void mstxDomainMarkA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
mstxRangeId mstxDomainRangeStartA(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
void mstxDomainRangeEnd(mstxDomainHandle_t domain, mstxRangeId id);

mstxMemHeapHandle_t mstxMemHeapRegister(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc);
void mstxMemHeapUnregister(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap);
void mstxMemRegionsRegister(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc);
void mstxMemRegionsUnregister(mstxDomainHandle_t domain, mstxMemRegionsUnregisterBatch_t const *desc);

/* The type a tool casts its function to before storing it in a slot. */
typedef void (*mstxMarkAFunc)(const char *message, aclrtStream stream);
typedef mstxRangeId (*mstxRangeStartAFunc)(const char *message, aclrtStream stream);
typedef void (*mstxRangeEndFunc)(mstxRangeId id);
typedef void (*mstxGetToolIdFunc)(uint64_t *id);
typedef mstxDomainHandle_t (*mstxDomainCreateAFunc)(const char *name);
typedef void (*mstxDomainDestroyFunc)(mstxDomainHandle_t domain);
typedef void (*mstxDomainMarkAFunc)(mstxDomainHandle_t domain, const char *message, aclrtStream stream);
typedef mstxRangeId (*mstxDomainRangeStartAFunc)(mstxDomainHandle_t domain, const char *message,
                                                 aclrtStream stream);
typedef void (*mstxDomainRangeEndFunc)(mstxDomainHandle_t domain, mstxRangeId id);
typedef mstxMemHeapHandle_t (*mstxMemHeapRegisterFunc)(mstxDomainHandle_t domain, mstxMemHeapDesc_t const *desc);
typedef void (*mstxMemHeapUnregisterFunc)(mstxDomainHandle_t domain, mstxMemHeapHandle_t heap);
typedef void (*mstxMemRegionsRegisterFunc)(mstxDomainHandle_t domain, mstxMemRegionsRegisterBatch_t const *desc);
typedef void (*mstxMemRegionsUnregisterFunc)(mstxDomainHandle_t domain,
                                             mstxMemRegionsUnregisterBatch_t const *desc);

/* Modules: one function table each. */
typedef enum mstxFuncModule {
  MSTX_API_MODULE_INVALID = 0,
  MSTX_API_MODULE_CORE = 1,        /* mark, range, tool id */
  MSTX_API_MODULE_CORE_DOMAIN = 2, /* domain variants */
  MSTX_API_MODULE_CORE_MEM = 3,    /* heap and region registration */
  MSTX_API_MODULE_SIZE,
  MSTX_API_MODULE_FORCE_INT = 0x7fffffff
} mstxFuncModule;

/* Slot indices inside each module's table. */
typedef enum mstxImplCoreFuncId {
  MSTX_API_CORE_INVALID = 0,
  MSTX_API_CORE_MARK_A = 1,
  MSTX_API_CORE_RANGE_START_A = 2,
  MSTX_API_CORE_RANGE_END = 3,
  MSTX_API_CORE_GET_TOOL_ID = 4,
  MSTX_API_CORE_SIZE,
  MSTX_API_CORE_FORCE_INT = 0x7fffffff
} mstxImplCoreFuncId;

typedef enum mstxImplCoreDomainFuncId {
  MSTX_API_CORE2_INVALID = 0,
  MSTX_API_CORE2_DOMAIN_CREATE_A = 1,
  MSTX_API_CORE2_DOMAIN_DESTROY = 2,
  MSTX_API_CORE2_DOMAIN_MARK_A = 3,
  MSTX_API_CORE2_DOMAIN_RANGE_START_A = 4,
  MSTX_API_CORE2_DOMAIN_RANGE_END = 5,
  MSTX_API_CORE2_SIZE,
  MSTX_API_CORE2_FORCE_INT = 0x7fffffff
} mstxImplCoreDomainFuncId;

typedef enum mstxImplCoreMemFuncId {
  MSTX_API_CORE_MEM_INVALID = 0,
  MSTX_API_CORE_MEMHEAP_REGISTER = 1,
  MSTX_API_CORE_MEMHEAP_UNREGISTER = 2,
  MSTX_API_CORE_MEM_REGIONS_REGISTER = 3,
  MSTX_API_CORE_MEM_REGIONS_UNREGISTER = 4,
  MSTX_API_CORE_MEM_SIZE,
  MSTX_API_CORE_MEM_FORCE_INT = 0x7fffffff
} mstxImplCoreMemFuncId;

/* A table is an array of slot addresses: table[id] (a mstxFuncPointer *)
 * points at the slot, the slot holds a function pointer stored under the
 * generic type (gcc's -Wcast-function-type accepts casts to and from
 * void (*)(void)). */
typedef void (*mstxFuncPointer)(void);
typedef mstxFuncPointer **mstxFuncTable;

/* Returns MSTX_SUCCESS and sets *outTable and *outSize (the number of entries
 * minus one, i.e. the module's *_SIZE), or MSTX_FAIL for an unknown module or
 * a NULL out parameter. */
typedef int (*mstxGetModuleFuncTableFunc)(mstxFuncModule module, mstxFuncTable *outTable, unsigned int *outSize);

/* What the tool exports as `InitInjectionMstx` (default visibility, C
 * linkage); returns MSTX_SUCCESS or MSTX_FAIL. */
typedef int (*mstxInitInjectionFunc)(mstxGetModuleFuncTableFunc getFuncTable);
int InitInjectionMstx(mstxGetModuleFuncTableFunc getFuncTable);

#ifdef __cplusplus
}
#endif
#endif
