/*
 * ascendcl_internal.h: what the files of the test device runtime
 * (libascendcl.so, built from ascendcl_*.c) share with each other and
 * nothing else. Hidden visibility keeps these out of the library's exports,
 * so the only symbols a preloaded hook can interpose are the ACL ones.
 */
#ifndef STOMPWATCH_ASCENDCL_INTERNAL_H
#define STOMPWATCH_ASCENDCL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"

#define SWT_HIDDEN __attribute__((visibility("hidden")))

/* Device ids accepted by aclrtSetDevice: 0 .. SWT_MAX_DEVICES - 1. */
#define SWT_MAX_DEVICES 16

/* The calling thread's current device (aclrtSetDevice; 0 by default). */
SWT_HIDDEN int32_t swt_current_device(void);

/* Whether a copy's arguments are ones the runtime accepts (ascendcl_mem.c):
 * ACL_SUCCESS, or the error the call returns at once. */
SWT_HIDDEN aclError swt_check_copy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);
/* Whether [p, p + n) lies inside one block from aclrtMallocHost. */
SWT_HIDDEN int swt_page_locked(const void *p, size_t n);
/* Waits until every copy queued on the stream (NULL: the current device's
 * default one) has finished (ascendcl_stream.c): an op launched on a
 * stream runs after them. Weak: the op compiler library, built from
 * ascendcl_op.c alone (op_compiler.map), has no streams to wait for. */
SWT_HIDDEN aclError swt_stream_wait(aclrtStream stream) __attribute__((weak));

/* A point in a stream's queue: every copy queued on it before the mark
 * (aclrtRecordEvent). The serial tells the stream from one made later at
 * the same address. */
struct swt_mark {
  void *stream;
  uint64_t serial, task;
};
/* Marks the stream's queue as it is now (NULL: the current device's default
 * stream); ACL_ERROR_INVALID_PARAM for an unknown stream. */
SWT_HIDDEN aclError swt_stream_mark(aclrtStream stream, struct swt_mark *mark);
/* Waits until the copies before the mark have finished; the first error
 * among them not yet reported, else ACL_SUCCESS (also when the stream was
 * destroyed since, which finished them). */
SWT_HIDDEN aclError swt_mark_wait(const struct swt_mark *mark);

#endif
