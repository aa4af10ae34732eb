/*
 * staged_copy.c: a watched block's copy to the host, pipelined as it would
 * be on hardware: the device's copy engine moves chunks k+1 .. k+ahead
 * (aclrtMemcpyAsync on a stream of the hook's own, an event recorded
 * after each) while the host hashes chunk k, and the host waits for each
 * chunk's own event (aclrtSynchronizeEvent), never for the copies queued
 * behind it. The copy engine needs page-locked host memory to run on its
 * own (with pageable memory CANN's aclrtMemcpyAsync returns only once the
 * copy is done), hence staging from aclrtMallocHost for checksums, and the
 * ring registered with aclrtHostRegister for full-content samples, whose
 * chunks go straight into their ring records.
 *
 * Each thread that samples has its own stream and events, made on its
 * current device; a runtime without events gets one chunk ahead, waited
 * for with aclrtSynchronizeStream, and a runtime that lacks any of the
 * stream calls gets serial copies (watch_windows.c), as before.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"
#include "staged_copy.h"

#define NBUF (SW_STAGED_AHEAD + 1)

struct sw_stager {
  aclrtStream stream;
  int32_t device; /* the stream's */
  int has_stream;
  int broken; /* the runtime refused a stream on `device`: serial there */
  /* One per chunk in flight, made with the stream; none: one chunk ahead. */
  aclrtEvent event[SW_STAGED_AHEAD];
  int events;
  uint8_t *buf[NBUF];
  uint64_t buf_bytes;
  pid_t pid; /* whose stream and buffers they are: a forked child has neither */
};

static int can_stage(const struct sw_real *real) {
  return real->aclrtMemcpyAsync && real->aclrtSynchronizeStream && real->aclrtCreateStream &&
         real->aclrtDestroyStream;
}

static int has_events(const struct sw_real *real) {
  return real->aclrtCreateEvent && real->aclrtDestroyEvent && real->aclrtRecordEvent && real->aclrtSynchronizeEvent;
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
  for (int i = 0; i < NBUF; i++) {
    if (st->buf[i] && real->aclrtFreeHost) real->aclrtFreeHost(st->buf[i]);
    st->buf[i] = NULL;
  }
  st->buf_bytes = 0;
}

/* Events and stream go together: both belong to the device they were made on. */
static void drop_stream(const struct sw_real *real, struct sw_stager *st) {
  while (st->events > 0) real->aclrtDestroyEvent(st->event[--st->events]);
  if (st->has_stream) real->aclrtDestroyStream(st->stream);
  st->has_stream = 0;
}

void sw_stager_free(struct sw_stager *st) {
  if (!st) return;
  own(st);
  const struct sw_real *real = sw_real();
  if (can_stage(real)) drop_stream(real, st);
  free_buffers(real, st);
  free(st);
}

/* Events on the stream's device: all of them, or none (then one chunk ahead). */
static void make_events(const struct sw_real *real, struct sw_stager *st) {
  if (!has_events(real)) return;
  while (st->events < SW_STAGED_AHEAD && real->aclrtCreateEvent(&st->event[st->events]) == ACL_SUCCESS) st->events++;
  if (st->events < SW_STAGED_AHEAD)
    while (st->events > 0) real->aclrtDestroyEvent(st->event[--st->events]);
}

/* A stream on the thread's current device, made when the device changed. */
static int ready(const struct sw_real *real, struct sw_stager *st) {
  int32_t device = sw_current_device();
  if (st->has_stream && st->device == device) return 1;
  if (st->broken && st->device == device) return 0;
  drop_stream(real, st);
  st->device = device;
  st->broken = real->aclrtCreateStream(&st->stream) != ACL_SUCCESS;
  st->has_stream = !st->broken;
  if (st->has_stream) make_events(real, st);
  return st->has_stream;
}

uint8_t *sw_stager_buffer(struct sw_stager *st, int i, uint64_t bytes) {
  const struct sw_real *real = sw_real();
  own(st);
  if (st->buf_bytes != bytes) {
    free_buffers(real, st);
    if (!real->aclrtMallocHost || !real->aclrtFreeHost) return NULL;
    for (int k = 0; k < NBUF; k++)
      if (real->aclrtMallocHost((void **)&st->buf[k], bytes) != ACL_SUCCESS) st->buf[k] = NULL;
    for (int k = 0; k < NBUF; k++)
      if (!st->buf[k]) {
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

/* A staged copy under way: the block, and the chunks placed and not yet
 * taken, oldest first, each with what its copy call said (a copy refused
 * at the call was never queued: nothing to wait for). */
struct flight {
  const uint8_t *from;
  uint64_t len, chunk;
  int ahead;
  sw_chunk_place place;
  void *ctx;
  struct sw_chunk chunk_at[NBUF];
  aclError issued[NBUF];
  int first, count;
  uint64_t at; /* bytes placed so far */
  int stopped; /* the placer had no room */
};

/* Chunk c's event: the chunk SW_STAGED_AHEAD before it had it, and was
 * waited for before c was queued. */
static aclrtEvent event_of(const struct sw_stager *st, const struct flight *f, const struct sw_chunk *c) {
  return st->event[c->off / f->chunk % SW_STAGED_AHEAD];
}

/* Places and queues chunks until `ahead` are in flight or the block is all placed. */
static void fill(const struct sw_real *real, struct sw_stager *st, struct flight *f) {
  while (f->count < f->ahead && f->at < f->len && !f->stopped) {
    int i = (f->first + f->count) % NBUF;
    struct sw_chunk *c = &f->chunk_at[i];
    *c = (struct sw_chunk){.off = f->at, .n = f->len - f->at < f->chunk ? f->len - f->at : f->chunk};
    if (f->place(f->ctx, c)) {
      f->stopped = 1;
      return;
    }
    aclError err = real->aclrtMemcpyAsync(c->dst, c->n, f->from + c->off, c->n, ACL_MEMCPY_DEVICE_TO_HOST, st->stream);
    if (err == ACL_SUCCESS && st->events) err = real->aclrtRecordEvent(event_of(st, f, c), st->stream);
    f->issued[i] = err;
    f->at += c->n;
    f->count++;
  }
}

enum sw_staged sw_staged_copy(struct sw_stager *st, const void *src, uint64_t len, uint64_t chunk, int ahead,
                              sw_chunk_place place, sw_chunk_take take, void *ctx) {
  const struct sw_real *real = sw_real();
  if (!st || !can_stage(real)) return SW_STAGED_SERIAL;
  own(st);
  if (!ready(real, st)) return SW_STAGED_SERIAL;
  if (!st->events || ahead < 1) ahead = 1;
  if (ahead > SW_STAGED_AHEAD) ahead = SW_STAGED_AHEAD;
  struct flight f = {.from = src, .len = len, .chunk = chunk, .ahead = ahead, .place = place, .ctx = ctx};
  int failed = 0;
  fill(real, st, &f);
  while (f.count > 0) {
    struct sw_chunk *c = &f.chunk_at[f.first];
    aclError err = f.issued[f.first];
    if (err == ACL_SUCCESS)
      err = st->events ? real->aclrtSynchronizeEvent(event_of(st, &f, c)) : real->aclrtSynchronizeStream(st->stream);
    f.first = (f.first + 1) % NBUF;
    f.count--;
    /* The next copies are queued before this chunk is taken: with one
     * ahead, that is the whole overlap. */
    fill(real, st, &f);
    take(ctx, c, err);
    failed |= err != ACL_SUCCESS;
  }
  if (f.stopped) return SW_STAGED_STOPPED;
  return failed ? SW_STAGED_FAILED : SW_STAGED_OK;
}
