/*
 * framework_ops.c: the producer API a framework calls around its own ops
 * (the Python client's dispatch mode brackets every Aten op with these,
 * through ctypes). A bracketed op goes down the same path as a runtime op
 * launch: OP_BEGIN with the extents it may write, before and after samples
 * of every open watch, OP_END; so the daemon names files, counts calls and
 * judges changes the same way for both.
 */
#define _GNU_SOURCE
#include "hook_internal.h"

/* Set in stompwatch_op_begin's `n` when every extent is host memory (CPU
 * tensors), which the hook may then read in place. */
#define STOMPWATCH_EXTENTS_HOST (1 << 30)

/*
 * Opens a framework op named `op` (e.g. `torch._ops.aten.add_.Tensor`) that
 * may write the `n` byte extents {addr, len} at `extents`; samples every
 * open watch before it. Returns the op's sequence number for
 * stompwatch_op_end, or 0 when no watch may sample (then nothing was
 * written and no end is needed). The caller keeps `extents` alive until
 * the end: the after samples read them again. `n` may carry
 * STOMPWATCH_EXTENTS_HOST: a --watch window opened on this op's output is
 * then read in place.
 */
SW_EXPORT uint64_t stompwatch_op_begin(const char *op, const uint64_t *extents, int n) {
  if (!sw_watch_may_sample()) return 0;
  const int host = (n & STOMPWATCH_EXTENTS_HOST) != 0;
  n &= ~STOMPWATCH_EXTENTS_HOST;
  if (n < 0 || !extents) n = 0;
  if (n > SW_MAX_EXTENTS) n = SW_MAX_EXTENTS;
  struct sw_thread *self = &sw_self;
  uint64_t seq = sw_next_op_seq();
  sw_emit(SW_REC_OP_BEGIN, SW_REC_FLAG_FRAMEWORK, sw_device_of(self), 0, 0, 0, seq, (uint32_t)n, op, extents,
          (uint32_t)(n * 2 * sizeof(uint64_t)));
  sw_watch_allow(extents, n, host);
  sw_watch_before_op(op, seq, extents, n);
  self->in_framework_op = 1;
  return seq;
}

/* Closes the op opened with sequence number `seq`: samples after it.
 * `stack` (may be NULL): the caller's call stack, for the op's rows. */
SW_EXPORT void stompwatch_op_end(const char *op, uint64_t seq, int result, const char *stack) {
  if (!seq) return;
  struct sw_thread *self = &sw_self;
  self->in_framework_op = 0;
  sw_watch_after_op(op, seq);
  sw_watch_allow(NULL, -1, 0);
  (void)op;
  sw_emit(SW_REC_OP_END, SW_REC_FLAG_FRAMEWORK, sw_device_of(self), result, 0, 0, seq, 0, stack, NULL, 0);
}

/* Whether any watch may sample around the next op: a framework may skip
 * its bracketing work while this is 0. */
SW_EXPORT int stompwatch_may_sample(void) { return sw_watch_may_sample(); }

/* A framework's allocation of `size` bytes on `device` in `pool` failed
 * (PyTorch's out-of-memory error): a failed ALLOC record, as a runtime
 * allocation that fails makes, so that the daemon writes the OOM snapshot
 * the job asked for. `free_bytes`: what the device had left, when known;
 * `op`: the framework op that asked (may be NULL). */
SW_EXPORT void stompwatch_alloc_failed(int device, int pool, uint64_t size, uint64_t free_bytes, const char *op) {
  if (pool < SW_POOL_HAL || pool > SW_POOL_PTA) return;
  sw_emit(SW_REC_ALLOC, SW_REC_FLAG_FAILED, device, ACL_ERROR_RT_MEMORY_ALLOCATION, free_bytes, size, 0, (uint32_t)pool, op,
          NULL, 0);
}
