/*
 * ascendcl_internal.h: what the files of the test device runtime
 * (libascendcl.so, built from ascendcl_*.c) share with each other and
 * nothing else. Hidden visibility keeps these out of the library's exports,
 * so the only symbols a preloaded hook can interpose are the ACL ones.
 */
#ifndef STOMPWATCH_ASCENDCL_INTERNAL_H
#define STOMPWATCH_ASCENDCL_INTERNAL_H

#include <stdint.h>

#define SWT_HIDDEN __attribute__((visibility("hidden")))

/* Device ids accepted by aclrtSetDevice: 0 .. SWT_MAX_DEVICES - 1. */
#define SWT_MAX_DEVICES 16

/* The calling thread's current device (aclrtSetDevice; 0 by default). */
SWT_HIDDEN int32_t swt_current_device(void);

#endif
