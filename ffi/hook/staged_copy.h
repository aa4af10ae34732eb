/*
 * staged_copy.h: copies a watched device block to the host in chunks, the
 * copy of each chunk overlapping the work on the one before (staged_copy.c).
 */
#ifndef STOMPWATCH_STAGED_COPY_H
#define STOMPWATCH_STAGED_COPY_H

#include <stdint.h>

#include "acl/acl.h"

/* The framework's copier, for device memory the runtime we interpose
 * cannot copy (CUDA tensors under PyTorch): the Python client registers one
 * with stompwatch_set_copier. It copies as a device's copy engine does:
 * asynchronously, each copy done once its slot is waited for. Every call
 * returns 0 on success. */
enum sw_copier_op {
  /* (device, n): a sample of this block starts; the copier waits for the
   * work queued before it, as ASCEND_LAUNCH_BLOCKING does for the runtime. */
  SW_COPIER_BEGIN = 0,
  /* (slot, host, device, n): queues the copy of n bytes at `device` to
   * `host`; slot 0 .. SW_STAGED_AHEAD - 1. */
  SW_COPIER_QUEUE = 1,
  /* (slot): waits for the copy queued with that slot. */
  SW_COPIER_WAIT = 2,
  /* (k, host, n): stores at `host` (a uint8_t **) staging buffer k of n
   * bytes, page-locked where the device has such memory, the copier's own
   * for the calling thread's life. */
  SW_COPIER_STAGING = 3,
  /* (device, n): the sample of this block is over (or failed); the copier
   * lets go of what it held for it. Its answer is not read. */
  SW_COPIER_END = 4,
};
typedef int (*sw_copier)(int op, int slot, uint64_t host, uint64_t device, uint64_t n);

/* The registered copier; NULL when none is. */
sw_copier sw_copier_get(void);

/* The copier's QUEUE and WAIT, answered as the runtime's copy calls are:
 * ACL_SUCCESS, else ACL_ERROR_INVALID_PARAM (also without a copier). */
aclError sw_copier_queue(sw_copier copier, int slot, void *host, const void *device, uint64_t n);
aclError sw_copier_wait(sw_copier copier, int slot);

struct sw_real;
/* Whether the runtime we interpose copies device memory (it can copy at
 * all); where it does not, the copier does. */
int sw_runtime_copies(const struct sw_real *real);

/* One chunk of a block: bytes [off, off + n) of it, copied to dst. `rec`
 * and `pos` are the placer's own (a ring record and its position). */
struct sw_chunk {
  uint8_t *dst;
  uint64_t off, n;
  void *rec;
  uint64_t pos;
};

/* Says where chunk c goes (sets c->dst); nonzero: no room, stop copying. */
typedef int (*sw_chunk_place)(void *ctx, struct sw_chunk *c);
/* Called once per placed chunk, in order, once its copy is over: `err` is
 * what the runtime said of it (the bytes are garbage unless ACL_SUCCESS). */
typedef void (*sw_chunk_take)(void *ctx, const struct sw_chunk *c, aclError err);

/* The most copies a staged copy keeps queued beyond the chunk being taken
 * (`ahead`): a placer that reuses places rotates among SW_STAGED_AHEAD + 1.
 * One is too few where the copy engine is a host thread: it then idles
 * from the end of each chunk until the taker has woken, seen it and queued
 * the next. On the 2-vCPU EPYC VM of 2026-11-25 (a test program doing the
 * hook's loop on the test runtime, 256 MiB, median of 9 against a memcpy
 * of the block in the same loop) one ahead sampled at 0.70x memcpy in
 * 256 KiB chunks and 0.81x in 1 MiB ones; two or three ahead at 0.92-1.06x
 * in chunks of 128 KiB to 1 MiB. */
#define SW_STAGED_AHEAD 3

/* What a staged copy came to. */
enum sw_staged {
  SW_STAGED_OK = 0,
  SW_STAGED_STOPPED = -1, /* the placer had no room: every chunk placed was taken */
  SW_STAGED_FAILED = -2,  /* done, but some copy failed */
  SW_STAGED_SERIAL = -3,  /* nothing done: the runtime cannot stage; copy serially */
};

/* The calling thread's copy stream and page-locked staging, made at its
 * first staged copy; NULL when there is no memory. The runtime's stream
 * copies where the runtime can copy at all, else the copier. */
struct sw_stager *sw_stager_new(void);
/* Gives the stream and staging back to the runtime. */
void sw_stager_free(struct sw_stager *st);

/* Copies `len` device bytes at `src` in chunks of at most `chunk` bytes,
 * each to where `place` says, handing each to `take` while the next ones
 * (up to `ahead`, at most SW_STAGED_AHEAD; one where the runtime has no
 * events) are being copied: a sample then costs about the larger of
 * copying and hashing, not their sum. Chunks are placed, and taken, in
 * order, and at most `ahead` + 1 are placed and not yet taken. */
enum sw_staged sw_staged_copy(struct sw_stager *st, const void *src, uint64_t len, uint64_t chunk, int ahead,
                              sw_chunk_place place, sw_chunk_take take, void *ctx);

/* Staging buffer `i` (0 .. SW_STAGED_AHEAD) of `bytes` bytes, page-locked,
 * for copies that have no place of their own (checksums); NULL when the
 * runtime (or the copier) gives none. */
uint8_t *sw_stager_buffer(struct sw_stager *st, int i, uint64_t bytes);

/* Makes the ring's memory page-locked (once per process), so that chunks
 * copied straight into ring records are copied asynchronously too. */
void sw_stager_lock_ring(void);

#endif
