/*
 * staged_copy.h: copies a watched device block to the host in chunks, the
 * copy of each chunk overlapping the work on the one before (staged_copy.c).
 */
#ifndef STOMPWATCH_STAGED_COPY_H
#define STOMPWATCH_STAGED_COPY_H

#include <stdint.h>

#include "acl/acl.h"

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
 * first staged copy; NULL when there is no memory. */
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
 * runtime gives none. */
uint8_t *sw_stager_buffer(struct sw_stager *st, int i, uint64_t bytes);

/* Makes the ring's memory page-locked (once per process), so that chunks
 * copied straight into ring records are copied asynchronously too. */
void sw_stager_lock_ring(void);

#endif
