/*
 * hook_internal.h: what the hook's files share. The hook is preloaded into a
 * training job; everything here must be safe to call from any thread, before
 * or after initialisation, and must never take the job down.
 */
#ifndef STOMPWATCH_HOOK_INTERNAL_H
#define STOMPWATCH_HOOK_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"
#include "stompwatch_ring.h"
#include "sw_common.h"

/* ---- producer (ring_producer.c) ---- */

/* True once this process has a ring; starts it on first use. */
int sw_producer_ready(void);
struct sw_ring_header *sw_producer_header(void);

/* Names (op types, messages, command lines) are cut at this many bytes. */
#define SW_NAME_MAX 4096u

/* Reserve a record of `size` bytes (a multiple of 16, >= 64); returns NULL
 * when the consumer is gone (the record is then counted as dropped). */
struct sw_record *sw_reserve(uint32_t size, uint64_t *pos);
/* Fill the common fields and publish. */
void sw_commit(struct sw_record *rec, uint64_t pos);

/* Emit one event with an optional name and payload. */
void sw_emit(uint16_t type, uint16_t flags, int32_t device, int32_t result, uint64_t addr, uint64_t len,
             uint64_t id, uint32_t aux, const char *name, const void *payload, uint32_t payload_len);
/* The same, stamped with a time taken earlier (0: now). */
void sw_emit_at(uint64_t ts_ns, uint16_t type, uint16_t flags, int32_t device, int32_t result, uint64_t addr,
                uint64_t len, uint64_t id, uint32_t aux, const char *name, const void *payload,
                uint32_t payload_len);
struct sw_thread;
/* sw_emit_at for another thread: the record carries thread id `tid`. */
void sw_emit_for(uint32_t tid, uint64_t ts_ns, uint16_t type, int32_t device, uint64_t addr, uint64_t len,
                 uint32_t aux, const char *name);
/* One OP record (an op launch while nothing may be watched): the op path's
 * own writer, with only the fields that record has. */
void sw_emit_op(struct sw_thread *self, uint64_t ts_ns, const char *op_type, int32_t result);

/* Says once on stderr that something internal failed and what follows. */
void sw_warn_once(int *said, const char *what);

/* ---- thread state ---- */

/* Everything the op launch path keeps per thread, in one thread-local (an
 * initial-exec one: see the Makefile), so that it reads one cache line. */
struct sw_thread {
  /* Set while the hook itself calls into the runtime, so nested intercepted
   * calls pass straight through. */
  int in_hook;
  /* Current device as set through aclrtSetDevice; -1 until known. */
  int32_t device;
  /* Kernel thread id; 0 until first asked. */
  uint32_t tid;
  /* Set while a framework op (framework_ops.c) is bracketed on this
   * thread: runtime ops it launches are its parts, sampled around it as a
   * whole, not each on its own. */
  int in_framework_op;
  /* Set while host_memory.c writes pending MALLOC rows, which must not
   * flush the list they come from. */
  int writing_host_rows;
};
extern __thread struct sw_thread sw_self;

uint32_t sw_tid_slow(struct sw_thread *self);
int32_t sw_device_slow(struct sw_thread *self);
static inline uint32_t sw_tid_of(struct sw_thread *self) {
  return SW_LIKELY(self->tid) ? self->tid : sw_tid_slow(self);
}
static inline int32_t sw_device_of(struct sw_thread *self) {
  return SW_LIKELY(self->device >= 0) ? self->device : sw_device_slow(self);
}
/* This thread's current device and id, where one lookup is all a caller needs. */
static inline int32_t sw_current_device(void) { return sw_device_of(&sw_self); }
static inline uint32_t sw_tid(void) { return sw_tid_of(&sw_self); }

/* ---- real symbols (real_symbols.c) ---- */

struct sw_real {
  aclError (*aclrtMalloc)(void **, size_t, aclrtMemMallocPolicy);
  aclError (*aclrtMallocAlign32)(void **, size_t, aclrtMemMallocPolicy);
  aclError (*aclrtMallocCached)(void **, size_t, aclrtMemMallocPolicy);
  aclError (*aclrtFree)(void *);
  aclError (*aclrtMemcpy)(void *, size_t, const void *, size_t, aclrtMemcpyKind);
  aclError (*aclrtSynchronizeDevice)(void);
  aclError (*aclrtSetDevice)(int32_t);
  aclError (*aclrtGetDevice)(int32_t *);
  aclError (*aclopExecuteV2)(const char *, int, aclTensorDesc *[], aclDataBuffer *[], int, aclTensorDesc *[],
                             aclDataBuffer *[], aclopAttr *, aclrtStream);
  aclError (*aclopCompileAndExecute)(const char *, int, const aclTensorDesc *const[], const aclDataBuffer *const[],
                                     int, const aclTensorDesc *const[], aclDataBuffer *const[], const aclopAttr *,
                                     aclopEngineType, aclopCompileType, const char *, aclrtStream);
  void *(*aclGetDataBufferAddr)(const aclDataBuffer *);
  size_t (*aclGetDataBufferSizeV2)(const aclDataBuffer *);
  aclError (*aclrtGetMemInfo)(aclrtMemAttr, size_t *, size_t *);
  /* For pipelined samples (staged_copy.c). */
  aclError (*aclrtMemcpyAsync)(void *, size_t, const void *, size_t, aclrtMemcpyKind, aclrtStream);
  aclError (*aclrtSynchronizeStream)(aclrtStream);
  aclError (*aclrtCreateStream)(aclrtStream *);
  aclError (*aclrtDestroyStream)(aclrtStream);
  aclError (*aclrtMallocHost)(void **, size_t);
  aclError (*aclrtFreeHost)(void *);
  aclError (*aclrtHostRegister)(void *, uint64_t, aclrtHostRegisterType, void **);
  aclError (*aclrtCreateEvent)(aclrtEvent *);
  aclError (*aclrtDestroyEvent)(aclrtEvent);
  aclError (*aclrtRecordEvent)(aclrtEvent, aclrtStream);
  aclError (*aclrtSynchronizeEvent)(aclrtEvent);
};

/* The table, resolved at the first call made while the runtime is loaded
 * (it may be dlopened late); a NULL member means the runtime lacked that
 * symbol when last looked up. */
const struct sw_real *sw_real(void);
/* Cold path of an interposer whose function is missing: looks that symbol
 * (the member at `offset`) up again, since its library may have been
 * dlopened since. The table when found now, else NULL (and the symbol is
 * named missing on stderr, once). The interposer then calls itself again
 * from a cold function (SW_CALL_AGAIN), so that its hot path keeps its
 * arguments in place and pays nothing for the retry. */
const struct sw_real *sw_real_retry(size_t offset);
/* What an interposed function returns when its real one is missing. */
aclError sw_real_missing(void);
/* The body of an interposer's cold retry: `fn` (the interposer, whose
 * symbol is member `fn` of the table) called again once the symbol is found. */
#define SW_CALL_AGAIN(fn, ...) \
  (sw_real_retry(offsetof(struct sw_real, fn)) ? fn(__VA_ARGS__) : sw_real_missing())

/* ---- CPU storages (host_memory.c, host_blocks.c) ---- */

/* MALLOC rows of CPU storages waiting for their op to end (exported so
 * that the Python client reads it through a memoryview). emit_record writes
 * them (sw_host_flush) before any other record, so they keep their place in
 * the ring. On a cache line of its own: it changes with every storage. */
extern uint32_t stompwatch_host_pending;
void sw_host_flush(void);

/* A live CPU storage the hook recorded. `pins`: watches that read it in
 * place; a pinned block the job frees gets its FREE row but is given back
 * to the allocator only when the last pin goes (`freed` until then). */
struct sw_host_block {
  uint64_t addr; /* 0: empty slot, 1: removed */
  uint64_t size;
  uint32_t pins;
  uint32_t freed;
};
/* Guards every change to the table and the pending rows. */
extern pthread_mutex_t sw_host_lock;
/* Blocks in the table: free()'s first, unlocked test. */
extern uint64_t sw_host_live;
/* Without the lock: whether addr may be in the table (0: certainly not). */
int sw_host_blocks_may_hold(uint64_t addr);
/* Under sw_host_lock. */
struct sw_host_block *sw_host_blocks_add(uint64_t addr, uint64_t size); /* NULL: no memory for the table */
struct sw_host_block *sw_host_blocks_find(uint64_t addr);
struct sw_host_block *sw_host_blocks_holding(uint64_t addr, uint64_t len);
void sw_host_blocks_remove(struct sw_host_block *b);
void sw_host_blocks_forget(void);

/* ---- watches (watch_windows.c) ---- */

/* Whether any watch may sample around the next op: when not, an op launch
 * is one OP record and skips the hooks below. */
int sw_watch_may_sample(void);
/* Around every intercepted op launch. `outputs` holds n {addr, len} pairs. */
void sw_watch_before_op(const char *op, uint64_t op_seq, const uint64_t *outputs, int n);
void sw_watch_after_op(const char *op, uint64_t op_seq);
/* Extents of one framework op passed on, at most: an op that writes more
 * tensors than this is rare, and its extra extents then count as not
 * writable (a false stomp, never a missed one). */
#define SW_MAX_EXTENTS 64
/* Around a framework op (framework_ops.c): the n {addr, len} extents it may
 * write (n <= SW_MAX_EXTENTS), until the next call; n = -1 for runtime op
 * launches. `host`: the framework says they are host memory. */
void sw_watch_allow(const uint64_t *extents, int n, int host);
/* The next op sequence number, shared by runtime and framework ops. */
uint64_t sw_next_op_seq(void);

#endif
