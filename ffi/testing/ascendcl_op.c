/*
 * ascendcl_op.c: data buffers, tensor descriptions and single-op execution
 * of the test device runtime. Four op types run on the host over arena
 * memory, synchronously (as with ASCEND_LAUNCH_BLOCKING=1), after the copies
 * queued on their stream:
 *
 *   Add, Mul  float32 out0[i] = in0[i] op in1[i], for the length of out0
 *   Fill      every float of out0 = the first float of in0
 *   Copy      all of in0 into out0, without looking at out0's size: the
 *             realistic overflow bug that stompwatch exists to catch
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "ascendcl_internal.h"

struct aclDataBuffer {
  void *data;
  size_t size;
};

struct aclTensorDesc {
  aclDataType dataType;
  aclFormat format;
  int numDims;
  int64_t dims[];
};

/* NULL data with size 0 is how ACL describes an absent optional input. */
aclDataBuffer *aclCreateDataBuffer(void *data, size_t size) {
  aclDataBuffer *b = malloc(sizeof *b);
  if (b != NULL) *b = (aclDataBuffer){.data = data, .size = size};
  return b;
}

void *aclGetDataBufferAddr(const aclDataBuffer *dataBuffer) { return dataBuffer ? dataBuffer->data : NULL; }

size_t aclGetDataBufferSizeV2(const aclDataBuffer *dataBuffer) { return dataBuffer ? dataBuffer->size : 0; }

aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) {
  if (dataBuffer == NULL) return ACL_ERROR_INVALID_PARAM;
  free((void *)dataBuffer);
  return ACL_SUCCESS;
}

aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format) {
  if (numDims < 0 || (numDims > 0 && dims == NULL)) return NULL;
  aclTensorDesc *d = malloc(sizeof *d + (size_t)numDims * sizeof d->dims[0]);
  if (d == NULL) return NULL;
  d->dataType = dataType;
  d->format = format;
  d->numDims = numDims;
  if (numDims > 0) memcpy(d->dims, dims, (size_t)numDims * sizeof d->dims[0]);
  return d;
}

void aclDestroyTensorDesc(const aclTensorDesc *desc) { free((void *)desc); }

static aclError op_error(const char *opType, const char *why) {
  fprintf(stderr, "ascendcl(test): op %s: %s\n", opType, why);
  return ACL_ERROR_INVALID_PARAM;
}

/* Buffer i of the list, or NULL when it does not exist or has no memory. */
static const aclDataBuffer *buffer(int count, const aclDataBuffer *const list[], int i) {
  if (i >= count || list == NULL || list[i] == NULL || list[i]->data == NULL) return NULL;
  return list[i];
}

static aclError elementwise(const char *opType, char op, int numInputs, const aclDataBuffer *const inputs[],
                            int numOutputs, aclDataBuffer *const outputs[]) {
  const aclDataBuffer *a = buffer(numInputs, inputs, 0), *b = buffer(numInputs, inputs, 1);
  const aclDataBuffer *out = buffer(numOutputs, (const aclDataBuffer *const *)outputs, 0);
  if (a == NULL || b == NULL || out == NULL) return op_error(opType, "needs two inputs and one output");
  /* No broadcasting: a shorter input is a shape error, not an over-read. */
  if (a->size < out->size || b->size < out->size) return op_error(opType, "an input is shorter than the output");
  const float *x = a->data, *y = b->data;
  float *z = out->data;
  size_t n = out->size / sizeof(float);
  if (op == '+')
    for (size_t i = 0; i < n; i++) z[i] = x[i] + y[i];
  else
    for (size_t i = 0; i < n; i++) z[i] = x[i] * y[i];
  return ACL_SUCCESS;
}

/* The real runtimes take both launch paths to the same kernels; so does this
 * one, through a static function so that neither entry point calls the other
 * through the PLT (a preloaded hook would count the op twice). */
static aclError run_op(const char *opType, int numInputs, const aclDataBuffer *const inputs[], int numOutputs,
                       aclDataBuffer *const outputs[]) {
  if (opType == NULL || numInputs < 0 || numOutputs < 0) return ACL_ERROR_INVALID_PARAM;
  if (strcmp(opType, "Add") == 0) return elementwise(opType, '+', numInputs, inputs, numOutputs, outputs);
  if (strcmp(opType, "Mul") == 0) return elementwise(opType, '*', numInputs, inputs, numOutputs, outputs);

  bool fill = strcmp(opType, "Fill") == 0, copy = strcmp(opType, "Copy") == 0;
  if (!fill && !copy) return op_error(opType, "unknown op type");
  const aclDataBuffer *in = buffer(numInputs, inputs, 0);
  const aclDataBuffer *out = buffer(numOutputs, (const aclDataBuffer *const *)outputs, 0);
  if (in == NULL || out == NULL) return op_error(opType, "needs one input and one output");
  if (copy) {
    memmove(out->data, in->data, in->size); /* the unchecked length is the point */
    return ACL_SUCCESS;
  }
  if (in->size < sizeof(float)) return op_error(opType, "the input holds no float");
  float value;
  memcpy(&value, in->data, sizeof value);
  float *z = out->data;
  for (size_t i = 0; i < out->size / sizeof(float); i++) z[i] = value;
  return ACL_SUCCESS;
}

aclError aclopExecuteV2(const char *opType, int numInputs, aclTensorDesc *inputDesc[], aclDataBuffer *inputs[],
                        int numOutputs, aclTensorDesc *outputDesc[], aclDataBuffer *outputs[], aclopAttr *attr,
                        aclrtStream stream) {
  (void)inputDesc, (void)outputDesc, (void)attr;
  aclError err = swt_stream_wait ? swt_stream_wait(stream) : ACL_SUCCESS;
  if (err != ACL_SUCCESS) return err;
  return run_op(opType, numInputs, (const aclDataBuffer *const *)inputs, numOutputs, outputs);
}

aclError aclopCompileAndExecute(const char *opType, int numInputs, const aclTensorDesc *const inputDesc[],
                                const aclDataBuffer *const inputs[], int numOutputs,
                                const aclTensorDesc *const outputDesc[], aclDataBuffer *const outputs[],
                                const aclopAttr *attr, aclopEngineType engineType, aclopCompileType compileFlag,
                                const char *opPath, aclrtStream stream) {
  (void)inputDesc, (void)outputDesc, (void)attr, (void)engineType, (void)compileFlag, (void)opPath;
  aclError err = swt_stream_wait ? swt_stream_wait(stream) : ACL_SUCCESS;
  if (err != ACL_SUCCESS) return err;
  return run_op(opType, numInputs, inputs, numOutputs, outputs);
}
