/*
 * staged_copy.c: a watched block's copy to the host, pipelined as it would
 * be on hardware: the device's copy engine moves chunk k+1
 * (aclrtMemcpyAsync on a stream of the hook's own) while the host hashes
 * chunk k, and the two meet once per chunk (aclrtSynchronizeStream). The
 * copy engine needs page-locked host memory to run on its own (with
 * pageable memory CANN's aclrtMemcpyAsync returns only once the copy is
 * done), hence staging from aclrtMallocHost for checksums, and the ring
 * registered with aclrtHostRegister for full-content samples, whose chunks
 * go straight into their ring records.
 *
 * Each thread that samples has its own stream, made on its current
 * device; a runtime that lacks any of these calls gets serial copies
 * (watch_windows.c), as before.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"
#include "staged_copy.h"

struct sw_stager {
  aclrtStream stream;
  int32_t device; /* the stream's */
  int has_stream;
  int broken; /* the runtime refused a stream on `device`: serial there */
  uint8_t *buf[2];
  uint64_t buf_bytes;
  pid_t pid; /* whose stream and buffers they are: a forked child has neither */
};

static int can_stage(const struct sw_real *real) {
  return real->aclrtMemcpyAsync && real->aclrtSynchronizeStream && real->aclrtCreateStream &&
         real->aclrtDestroyStream;
}

struct sw_stager *sw_stager_new(void) {
  struct sw_stager *st = calloc(1, sizeof *st);
  if (st) st->pid = getpid();
  return st;
}

/* In a forked child the parent's stream has no worker behind it (threads
 * do not survive fork): forget the parent's stream and staging rather than
 * use or free them, and start afresh. */
static void own(struct sw_stager *st) {
  pid_t pid = getpid();
  if (st->pid == pid) return;
  memset(st, 0, sizeof *st);
  st->pid = pid;
}

static void free_buffers(const struct sw_real *real, struct sw_stager *st) {
  for (int i = 0; i < 2; i++) {
    if (st->buf[i] && real->aclrtFreeHost) real->aclrtFreeHost(st->buf[i]);
    st->buf[i] = NULL;
  }
  st->buf_bytes = 0;
}

void sw_stager_free(struct sw_stager *st) {
  if (!st) return;
  own(st);
  const struct sw_real *real = sw_real();
  if (st->has_stream && real->aclrtDestroyStream) real->aclrtDestroyStream(st->stream);
  free_buffers(real, st);
  free(st);
}

/* A stream on the thread's current device, made when the device changed. */
static int ready(const struct sw_real *real, struct sw_stager *st) {
  int32_t device = sw_current_device();
  if (st->has_stream && st->device == device) return 1;
  if (st->broken && st->device == device) return 0;
  if (st->has_stream) real->aclrtDestroyStream(st->stream);
  st->has_stream = 0;
  st->device = device;
  st->broken = real->aclrtCreateStream(&st->stream) != ACL_SUCCESS;
  st->has_stream = !st->broken;
  return st->has_stream;
}

uint8_t *sw_stager_buffer(struct sw_stager *st, int i, uint64_t bytes) {
  const struct sw_real *real = sw_real();
  own(st);
  if (st->buf_bytes != bytes) {
    free_buffers(real, st);
    if (!real->aclrtMallocHost || !real->aclrtFreeHost) return NULL;
    for (int k = 0; k < 2; k++)
      if (real->aclrtMallocHost((void **)&st->buf[k], bytes) != ACL_SUCCESS) st->buf[k] = NULL;
    if (!st->buf[0] || !st->buf[1]) {
      free_buffers(real, st);
      return NULL;
    }
    st->buf_bytes = bytes;
  }
  return st->buf[i];
}

void sw_stager_lock_ring(void) {
  static int tried;
  if (__atomic_load_n(&tried, __ATOMIC_ACQUIRE)) return;
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  const struct sw_real *real = sw_real();
  struct sw_ring_header *hdr = sw_producer_header();
  if (!tried && hdr && real->aclrtHostRegister) {
    void *device_side;
    /* Refused: the ring stays pageable and its copies serial, no worse. */
    real->aclrtHostRegister(hdr, SW_DATA_OFFSET + hdr->capacity, ACL_HOST_REGISTER_MAPPED, &device_side);
  }
  __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
}

enum sw_staged sw_staged_copy(struct sw_stager *st, const void *src, uint64_t len, uint64_t chunk,
                              sw_chunk_place place, sw_chunk_take take, void *ctx) {
  const struct sw_real *real = sw_real();
  if (!st || !can_stage(real)) return SW_STAGED_SERIAL;
  own(st);
  if (!ready(real, st)) return SW_STAGED_SERIAL;
  const uint8_t *from = src;
  struct sw_chunk cur = {.off = 0, .n = len < chunk ? len : chunk}, next;
  if (place(ctx, &cur)) return SW_STAGED_STOPPED;
  aclError issued = real->aclrtMemcpyAsync(cur.dst, cur.n, from, cur.n, ACL_MEMCPY_DEVICE_TO_HOST, st->stream);
  int failed = 0;
  for (;;) {
    /* A copy refused at the call was never queued: nothing to wait for. */
    aclError err = issued != ACL_SUCCESS ? issued : real->aclrtSynchronizeStream(st->stream);
    uint64_t at = cur.off + cur.n;
    int more = at < len, stopped = 0;
    if (more) {
      next = (struct sw_chunk){.off = at, .n = len - at < chunk ? len - at : chunk};
      stopped = place(ctx, &next) != 0;
      if (!stopped)
        issued = real->aclrtMemcpyAsync(next.dst, next.n, from + at, next.n, ACL_MEMCPY_DEVICE_TO_HOST, st->stream);
    }
    take(ctx, &cur, err);
    failed |= err != ACL_SUCCESS;
    if (stopped) return SW_STAGED_STOPPED;
    if (!more) break;
    cur = next;
  }
  return failed ? SW_STAGED_FAILED : SW_STAGED_OK;
}
