/*
 * intercept_acl.c: the ACL entry points the hook interposes. Each records an
 * event and calls the runtime's own function; op launches also give the
 * watch machinery its before/after moments. With nothing watched an op
 * launch costs one ring record and a few atomic loads.
 */
#define _GNU_SOURCE
#include "hook_internal.h"

#define MAX_TRACKED_OUTPUTS 64

static uint64_t g_op_seq;

uint64_t sw_next_op_seq(void) { return __atomic_add_fetch(&g_op_seq, 1, __ATOMIC_RELAXED); }

typedef aclError (*malloc_fn)(void **, size_t, aclrtMemMallocPolicy);

/* The interposers' cold paths: their symbol was missing when the table was
 * filled, and its library may have been dlopened since (sw_real_retry). */
__attribute__((noinline, cold)) static aclError malloc_again(enum sw_alloc_call call, void **devPtr, size_t size,
                                                              aclrtMemMallocPolicy policy) {
  if (call == SW_CALL_MALLOC) return SW_CALL_AGAIN(aclrtMalloc, devPtr, size, policy);
  if (call == SW_CALL_MALLOC_ALIGN32) return SW_CALL_AGAIN(aclrtMallocAlign32, devPtr, size, policy);
  return SW_CALL_AGAIN(aclrtMallocCached, devPtr, size, policy);
}

__attribute__((noinline, cold)) static aclError free_again(void *devPtr) { return SW_CALL_AGAIN(aclrtFree, devPtr); }

__attribute__((noinline, cold)) static aclError set_device_again(int32_t deviceId) {
  return SW_CALL_AGAIN(aclrtSetDevice, deviceId);
}

__attribute__((noinline, cold)) static aclError execute_again(const char *opType, int numInputs,
                                                               aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
                                                               int numOutputs, aclTensorDesc *outputDesc[],
                                                               aclDataBuffer *outputs[], aclopAttr *attr,
                                                               aclrtStream stream) {
  return SW_CALL_AGAIN(aclopExecuteV2, opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr,
                       stream);
}

__attribute__((noinline, cold)) static aclError compile_again(
    const char *opType, int numInputs, const aclTensorDesc *const inputDesc[], const aclDataBuffer *const inputs[],
    int numOutputs, const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[], const aclopAttr *attr,
    aclopEngineType engineType, aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  return SW_CALL_AGAIN(aclopCompileAndExecute, opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs,
                       attr, engineType, compileFlag, opPath, stream);
}

static aclError traced_malloc(malloc_fn real, enum sw_alloc_call call, void **devPtr, size_t size,
                              aclrtMemMallocPolicy policy) {
  if (!real) return malloc_again(call, devPtr, size, policy);
  struct sw_thread *self = &sw_self;
  if (self->in_hook) return real(devPtr, size, policy);
  self->in_hook = 1;
  aclError err = real(devPtr, size, policy);
  uint64_t addr = (err == ACL_SUCCESS && devPtr) ? (uint64_t)(uintptr_t)*devPtr : 0;
  if (err != ACL_SUCCESS) {
    /* A failed allocation carries the device's free bytes instead (the OOM
     * snapshot's device_free), asked before anything else can change them. */
    size_t free_bytes = 0, total_bytes = 0;
    if (sw_real()->aclrtGetMemInfo && sw_real()->aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes) == ACL_SUCCESS)
      addr = free_bytes;
  }
  sw_emit(SW_REC_ALLOC, err == ACL_SUCCESS ? 0 : SW_REC_FLAG_FAILED, sw_device_of(self), err, addr, size, call,
          SW_POOL_HAL, NULL, NULL, 0);
  self->in_hook = 0;
  return err;
}

SW_EXPORT aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return traced_malloc(sw_real()->aclrtMalloc, SW_CALL_MALLOC, devPtr, size, policy);
}

SW_EXPORT aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return traced_malloc(sw_real()->aclrtMallocAlign32, SW_CALL_MALLOC_ALIGN32, devPtr, size, policy);
}

SW_EXPORT aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  return traced_malloc(sw_real()->aclrtMallocCached, SW_CALL_MALLOC_CACHED, devPtr, size, policy);
}

SW_EXPORT aclError aclrtFree(void *devPtr) {
  const struct sw_real *real = sw_real();
  if (!real->aclrtFree) return free_again(devPtr);
  struct sw_thread *self = &sw_self;
  if (self->in_hook) return real->aclrtFree(devPtr);
  self->in_hook = 1;
  int32_t device = sw_device_of(self);
  aclError err = real->aclrtFree(devPtr);
  sw_emit(SW_REC_FREE, 0, device, err, (uint64_t)(uintptr_t)devPtr, 0, 0, SW_POOL_HAL, NULL, NULL, 0);
  self->in_hook = 0;
  return err;
}

SW_EXPORT aclError aclrtSetDevice(int32_t deviceId) {
  const struct sw_real *real = sw_real();
  if (!real->aclrtSetDevice) return set_device_again(deviceId);
  aclError err = real->aclrtSetDevice(deviceId);
  if (err == ACL_SUCCESS) sw_self.device = deviceId;
  return err;
}

/* Collects the op's output buffers: what it is allowed to write. */
static int collect_outputs(const struct sw_real *real, int n, aclDataBuffer *const outputs[], uint64_t *pairs) {
  if (n <= 0 || !outputs || !real->aclGetDataBufferAddr || !real->aclGetDataBufferSizeV2) return 0;
  if (n > MAX_TRACKED_OUTPUTS) n = MAX_TRACKED_OUTPUTS;
  for (int i = 0; i < n; i++) {
    pairs[2 * i] = outputs[i] ? (uint64_t)(uintptr_t)real->aclGetDataBufferAddr(outputs[i]) : 0;
    pairs[2 * i + 1] = outputs[i] ? (uint64_t)real->aclGetDataBufferSizeV2(outputs[i]) : 0;
  }
  return n;
}

/*
 * An op launch as the hook follows it. While no watch may sample (the
 * common case, and the one the +100 ns budget per launch is for) it is one
 * OP record written after the call, with the launch time: outputs are not
 * read, because only a watch's verdict needs them. While watches may
 * sample, OP_BEGIN (with the outputs) and OP_END bracket the samples, so
 * the daemon knows which op each one belongs to.
 */
struct op_launch {
  uint64_t ts_ns, seq;
  int sampled;
};

__attribute__((noinline)) static void sampled_begin(struct op_launch *op, struct sw_thread *self, const char *opType, int numOutputs,
                          aclDataBuffer *const outputs[]) {
  uint64_t pairs[2 * MAX_TRACKED_OUTPUTS];
  int n = collect_outputs(sw_real(), numOutputs, outputs, pairs);
  op->seq = sw_next_op_seq();
  sw_emit_at(op->ts_ns, SW_REC_OP_BEGIN, 0, sw_device_of(self), 0, 0, 0, op->seq, (uint32_t)n, opType, pairs,
             (uint32_t)(n * 2 * sizeof(uint64_t)));
  sw_watch_before_op(opType, op->seq, pairs, n);
}

static inline void op_begin(struct op_launch *op, struct sw_thread *self, const char *opType, int numOutputs,
                            aclDataBuffer *const outputs[]) {
  op->ts_ns = sw_event_ns();
  op->sampled = !self->in_framework_op && sw_watch_may_sample();
  if (SW_UNLIKELY(op->sampled)) sampled_begin(op, self, opType, numOutputs, outputs);
}

static inline void op_end(const struct op_launch *op, struct sw_thread *self, const char *opType, aclError err) {
  if (SW_LIKELY(!op->sampled)) {
    sw_emit_op(self, op->ts_ns, opType, err);
    return;
  }
  sw_watch_after_op(opType, op->seq);
  sw_emit(SW_REC_OP_END, 0, sw_device_of(self), err, 0, 0, op->seq, 0, opType, NULL, 0);
}

SW_EXPORT aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[],
                                  aclDataBuffer *inputs[], int numOutputs, aclTensorDesc *outputDesc[],
                                  aclDataBuffer *outputs[], aclopAttr *attr, aclrtStream stream) {
  const struct sw_real *real = sw_real();
  if (!real->aclopExecuteV2)
    return execute_again(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream);
  struct sw_thread *self = &sw_self;
  if (self->in_hook)
    return real->aclopExecuteV2(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr,
                                stream);
  self->in_hook = 1;
  struct op_launch op;
  op_begin(&op, self, opType, numOutputs, outputs);
  aclError err =
      real->aclopExecuteV2(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, stream);
  op_end(&op, self, opType, err);
  self->in_hook = 0;
  return err;
}

SW_EXPORT aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                          const aclDataBuffer *const inputs[], int numOutputs,
                                          const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                          const aclopAttr *attr, aclopEngineType engineType,
                                          aclopCompileType compileFlag, const char *opPath, aclrtStream stream) {
  const struct sw_real *real = sw_real();
  if (!real->aclopCompileAndExecute)
    return compile_again(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr, engineType,
                         compileFlag, opPath, stream);
  struct sw_thread *self = &sw_self;
  if (self->in_hook)
    return real->aclopCompileAndExecute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs, attr,
                                        engineType, compileFlag, opPath, stream);
  self->in_hook = 1;
  struct op_launch op;
  op_begin(&op, self, opType, numOutputs, outputs);
  aclError err = real->aclopCompileAndExecute(opType, numInputs, inputDesc, inputs, numOutputs, outputDesc, outputs,
                                              attr, engineType, compileFlag, opPath, stream);
  op_end(&op, self, opType, err);
  self->in_hook = 0;
  return err;
}
