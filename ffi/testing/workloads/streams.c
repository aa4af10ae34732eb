/*
 * streams: drives the test runtime's copy engine (ascendcl_stream.c) and
 * prints what it saw as `fact value` lines, for test/ffi/streams_test.ts.
 *
 *   streams order     a chain of copies, each reading what the one before
 *                     wrote, queued at once on one stream
 *   streams sync      a large copy, then aclrtSynchronizeStream; the worker
 *                     threads before and after aclrtDestroyStream
 *   streams pageable  an async copy into malloc'd memory, read at once
 *   streams device    copies on two streams, then aclrtSynchronizeDevice
 *   streams op        a Fill launched on a stream right after a copy of its input
 *   streams errors    the codes the calls and synchronisations return
 *   streams register  the same for memory made page-locked by aclrtHostRegister
 *   streams events    events recorded between copies, and what waiting for
 *                     each reports
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define BIG (32u << 20)

static void *device(size_t n) {
  void *p = NULL;
  if (aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
    fprintf(stderr, "streams: cannot allocate %zu device bytes\n", n);
    exit(1);
  }
  return p;
}

static void *pinned(size_t n) {
  void *p = NULL;
  if (aclrtMallocHost(&p, n) != ACL_SUCCESS) {
    fprintf(stderr, "streams: cannot allocate %zu page-locked bytes\n", n);
    exit(1);
  }
  return p;
}

static aclrtStream new_stream(void) {
  aclrtStream s = NULL;
  if (aclrtCreateStream(&s) != ACL_SUCCESS) exit(1);
  return s;
}

/* Threads of this process named as the runtime names its stream workers. */
static int workers(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/task");
  for (struct dirent *e; d && (e = readdir(d));) {
    char path[300], name[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(name, sizeof name, f)) n += strcmp(name, "swt-stream\n") == 0;
    fclose(f);
  }
  if (d) closedir(d);
  return n;
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

static void order(void) {
  aclrtStream s = new_stream();
  unsigned char *from = pinned(BIG), *to = pinned(BIG);
  void *a = device(BIG), *b = device(BIG), *c = device(BIG);
  memset(from, 0x5a, BIG);
  memset(to, 0, BIG);
  printf("queued %d\n", aclrtMemcpyAsync(a, BIG, from, BIG, ACL_MEMCPY_HOST_TO_DEVICE, s) == ACL_SUCCESS &&
                            aclrtMemcpyAsync(b, BIG, a, BIG, ACL_MEMCPY_DEVICE_TO_DEVICE, s) == ACL_SUCCESS &&
                            aclrtMemcpyAsync(c, BIG, b, BIG, ACL_MEMCPY_DEVICE_TO_DEVICE, s) == ACL_SUCCESS &&
                            aclrtMemcpyAsync(to, BIG, c, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s) == ACL_SUCCESS);
  printf("synchronized %d\n", aclrtSynchronizeStream(s));
  printf("chain_arrived %d\n", all_bytes(to, BIG, 0x5a));
}

static void sync(void) {
  aclrtStream s = new_stream();
  unsigned char *to = pinned(BIG);
  void *from = device(BIG);
  aclrtMemset(from, BIG, 0x33, BIG);
  memset(to, 0, BIG);
  printf("workers_before %d\n", workers());
  printf("queued %d\n", aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s));
  printf("workers_queued %d\n", workers());
  printf("synchronized %d\n", aclrtSynchronizeStream(s));
  printf("copy_arrived %d\n", all_bytes(to, BIG, 0x33));
  memset(to, 0, BIG);
  aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s);
  printf("destroyed %d\n", aclrtDestroyStream(s));
  printf("destroy_finished_it %d\n", all_bytes(to, BIG, 0x33));
  printf("workers_after %d\n", workers());
}

static void pageable(void) {
  unsigned char *to = malloc(BIG);
  void *from = device(BIG);
  if (!to) exit(1);
  aclrtMemset(from, BIG, 0x44, BIG);
  memset(to, 0, BIG);
  printf("queued %d\n", aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, NULL));
  printf("done_on_return %d\n", all_bytes(to, BIG, 0x44));
}

static void device_sync(void) {
  aclrtStream s1 = new_stream(), s2 = new_stream();
  unsigned char *to1 = pinned(BIG), *to2 = pinned(BIG);
  void *from = device(BIG);
  aclrtMemset(from, BIG, 0x66, BIG);
  memset(to1, 0, BIG);
  memset(to2, 0, BIG);
  aclrtMemcpyAsync(to1, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s1);
  aclrtMemcpyAsync(to2, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s2);
  printf("synchronized %d\n", aclrtSynchronizeDevice());
  printf("both_arrived %d\n", all_bytes(to1, BIG, 0x66) && all_bytes(to2, BIG, 0x66));
}

static void op(void) {
  aclrtStream s = new_stream();
  float seven = 7.0f;
  float *value = pinned(sizeof seven);
  unsigned char *filler = pinned(BIG);
  void *in = device(sizeof seven), *out = device(1 << 20), *scratch = device(BIG);
  *value = seven;
  memset(filler, 0, BIG);
  aclrtMemset(in, sizeof seven, 0, sizeof seven);
  /* A large copy first, so that the one the op reads is still queued when
   * the op is launched. */
  aclrtMemcpyAsync(scratch, BIG, filler, BIG, ACL_MEMCPY_HOST_TO_DEVICE, s);
  aclrtMemcpyAsync(in, sizeof seven, value, sizeof seven, ACL_MEMCPY_HOST_TO_DEVICE, s);
  aclDataBuffer *ib = aclCreateDataBuffer(in, sizeof seven), *ob = aclCreateDataBuffer(out, 1 << 20);
  aclDataBuffer *inputs[1] = {ib}, *outputs[1] = {ob};
  printf("launched %d\n", aclopExecuteV2("Fill", 1, NULL, inputs, 1, NULL, outputs, NULL, s));
  float first = 0;
  aclrtMemcpy(&first, sizeof first, out, sizeof first, ACL_MEMCPY_DEVICE_TO_HOST);
  printf("filled_with %g\n", first);
}

static void errors(void) {
  aclrtStream s = new_stream();
  unsigned char *host = pinned(64), *pageable = malloc(64);
  void *dev = device(64);
  int not_a_stream = 0;
  if (!pageable) exit(1);
  printf("null_destination %d\n", aclrtMemcpyAsync(NULL, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
  printf("count_over_max %d\n", aclrtMemcpyAsync(host, 32, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
  printf("host_as_device %d\n", aclrtMemcpyAsync(host, 64, pageable, 64, ACL_MEMCPY_DEVICE_TO_HOST, s));
  printf("unknown_stream %d\n", aclrtMemcpyAsync(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST, &not_a_stream));
  printf("sync_unknown_stream %d\n", aclrtSynchronizeStream(&not_a_stream));
  printf("destroy_unknown_stream %d\n", aclrtDestroyStream(&not_a_stream));
  printf("free_host_not_page_locked %d\n", aclrtFreeHost(pageable));
  printf("host_to_host_queued %d\n", aclrtMemcpyAsync(host, 64, host + 32, 32, ACL_MEMCPY_HOST_TO_HOST, s));
  printf("host_to_host_at_sync %d\n", aclrtSynchronizeStream(s));
  printf("next_sync %d\n", aclrtSynchronizeStream(s));
  printf("host_to_host_queued_again %d\n", aclrtMemcpyAsync(host, 64, host + 32, 32, ACL_MEMCPY_HOST_TO_HOST, s));
  printf("host_to_host_at_device_sync %d\n", aclrtSynchronizeDevice());
  printf("host_to_host_pageable %d\n",
         aclrtMemcpyAsync(pageable, 64, pageable + 32, 32, ACL_MEMCPY_HOST_TO_HOST, s));
  printf("sync_after_pageable %d\n", aclrtSynchronizeStream(s));
}

/* A host-to-host copy fails on the engine: at the call where the call
 * waits (pageable memory), at the synchronisation where it does not. */
static void registered(void) {
  aclrtStream s = new_stream();
  unsigned char *mem = malloc(4096);
  void *dev = NULL;
  if (!mem) exit(1);
  printf("register %d\n", aclrtHostRegister(mem, 4096, ACL_HOST_REGISTER_MAPPED, &dev));
  printf("free_host_registered %d\n", aclrtFreeHost(mem));
  printf("host_to_host_queued %d\n", aclrtMemcpyAsync(mem, 64, mem + 64, 64, ACL_MEMCPY_HOST_TO_HOST, s));
  printf("host_to_host_at_sync %d\n", aclrtSynchronizeStream(s));
  printf("unregister %d\n", aclrtHostUnregister(mem));
  printf("unregister_again %d\n", aclrtHostUnregister(mem));
  printf("host_to_host_unregistered %d\n", aclrtMemcpyAsync(mem, 64, mem + 64, 64, ACL_MEMCPY_HOST_TO_HOST, s));
  free(mem);
}

/* An event covers the copies queued before it was recorded: a copy that
 * fails behind it is reported at the next event, not at this one. */
static void events(void) {
  aclrtStream s = new_stream();
  aclrtEvent first = NULL, second = NULL;
  unsigned char *to = pinned(BIG), *host = pinned(64);
  void *from = device(BIG);
  int not_a_stream = 0;
  aclrtMemset(from, BIG, 0x77, BIG);
  memset(to, 0, BIG);
  printf("created %d\n", aclrtCreateEvent(&first) == ACL_SUCCESS && aclrtCreateEvent(&second) == ACL_SUCCESS);
  printf("sync_unrecorded %d\n", aclrtSynchronizeEvent(first));
  printf("record_null %d\n", aclrtRecordEvent(NULL, s));
  printf("record_unknown_stream %d\n", aclrtRecordEvent(first, &not_a_stream));
  aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s);
  printf("recorded %d\n", aclrtRecordEvent(first, s));
  aclrtMemcpyAsync(host, 64, host + 32, 32, ACL_MEMCPY_HOST_TO_HOST, s);
  aclrtRecordEvent(second, s);
  printf("sync_first %d\n", aclrtSynchronizeEvent(first));
  printf("copy_arrived %d\n", all_bytes(to, BIG, 0x77));
  printf("sync_second %d\n", aclrtSynchronizeEvent(second));
  printf("sync_stream_after %d\n", aclrtSynchronizeStream(s));
  memset(to, 0, BIG);
  aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s);
  printf("recorded_again %d\n", aclrtRecordEvent(first, s));
  printf("sync_again %d\n", aclrtSynchronizeEvent(first));
  printf("copy_arrived_again %d\n", all_bytes(to, BIG, 0x77));
  aclrtMemcpyAsync(to, BIG, from, BIG, ACL_MEMCPY_DEVICE_TO_HOST, s);
  aclrtRecordEvent(first, s);
  aclrtDestroyStream(s);
  printf("sync_destroyed_stream %d\n", aclrtSynchronizeEvent(first));
  printf("destroyed %d\n", aclrtDestroyEvent(first) == ACL_SUCCESS && aclrtDestroyEvent(second) == ACL_SUCCESS);
}

int main(int argc, char **argv) {
  const char *what = argc > 1 ? argv[1] : "";
  if (aclrtSetDevice(0) != ACL_SUCCESS) return 1;
  if (strcmp(what, "order") == 0) order();
  else if (strcmp(what, "sync") == 0) sync();
  else if (strcmp(what, "pageable") == 0) pageable();
  else if (strcmp(what, "device") == 0) device_sync();
  else if (strcmp(what, "op") == 0) op();
  else if (strcmp(what, "errors") == 0) errors();
  else if (strcmp(what, "register") == 0) registered();
  else if (strcmp(what, "events") == 0) events();
  else {
    fprintf(stderr, "usage: streams order|sync|pageable|device|op|errors|register|events\n");
    return 2;
  }
  return 0;
}
