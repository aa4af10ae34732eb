/*
 * staged_copy.c: a watched block's copy to the host, pipelined as it would
 * be on hardware: the device's copy engine moves chunks k+1 .. k+ahead
 * while the host hashes chunk k, and the host waits for each chunk's own
 * completion, never for the copies queued behind it. Two engines queue the
 * copies:
 *
 * - the runtime we interpose (aclrtMemcpyAsync on a stream of the hook's
 *   own, an event recorded after each chunk, aclrtSynchronizeEvent). The
 *   copy engine needs page-locked host memory to run on its own (with
 *   pageable memory CANN's aclrtMemcpyAsync returns only once the copy is
 *   done), hence staging from aclrtMallocHost for checksums, and the ring
 *   registered with aclrtHostRegister for full-content samples, whose
 *   chunks go straight into their ring records. Each thread that samples
 *   has its own stream and events, made on its current device; a runtime
 *   without events gets one chunk ahead, waited for with
 *   aclrtSynchronizeStream, and a runtime that lacks any of the stream
 *   calls gets serial copies (watch_windows.c), as before;
 * - the framework's copier, for device memory that runtime cannot copy
 *   (CUDA tensors under PyTorch): the Python client queues each chunk on a
 *   stream of its own and waits for it by slot, into page-locked staging
 *   it owns (sw_copier_op).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"
#include "staged_copy.h"

#define NBUF (SW_STAGED_AHEAD + 1)

static sw_copier g_copier;

SW_EXPORT void stompwatch_set_copier(sw_copier fn) { __atomic_store_n(&g_copier, fn, __ATOMIC_RELEASE); }

sw_copier sw_copier_get(void) { return __atomic_load_n(&g_copier, __ATOMIC_ACQUIRE); }

aclError sw_copier_queue(sw_copier copier, int slot, void *host, const void *device, uint64_t n) {
  return copier && copier(SW_COPIER_QUEUE, slot, (uint64_t)(uintptr_t)host, (uint64_t)(uintptr_t)device, n) == 0
             ? ACL_SUCCESS
             : ACL_ERROR_INVALID_PARAM;
}

aclError sw_copier_wait(sw_copier copier, int slot) {
  return copier && copier(SW_COPIER_WAIT, slot, 0, 0, 0) == 0 ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

struct sw_stager {
  aclrtStream stream;
  int32_t device; /* the stream's */
  int has_stream;
  int broken; /* the runtime refused a stream on `device`: serial there */
  /* One per chunk in flight, made with the stream; none: one chunk ahead. */
  aclrtEvent event[SW_STAGED_AHEAD];
  int events;
  /* Staging: the runtime's page-locked memory, or the copier's own (never
   * freed here: the copier keeps it for the thread). */
  uint8_t *buf[NBUF];
  uint64_t buf_bytes;
  pid_t pid; /* whose stream and buffers they are: a forked child has neither */
};

int sw_runtime_copies(const struct sw_real *real) { return real->aclrtMemcpy != NULL; }

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
    if (st->buf[i] && sw_runtime_copies(real) && real->aclrtFreeHost) real->aclrtFreeHost(st->buf[i]);
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

/* Staging buffer k of `bytes`, from whichever engine copies. */
static uint8_t *new_buffer(const struct sw_real *real, int k, uint64_t bytes) {
  void *p = NULL;
  if (sw_runtime_copies(real)) {
    if (!real->aclrtMallocHost || !real->aclrtFreeHost) return NULL;
    return real->aclrtMallocHost(&p, bytes) == ACL_SUCCESS ? p : NULL;
  }
  sw_copier copier = sw_copier_get();
  return copier && copier(SW_COPIER_STAGING, k, (uint64_t)(uintptr_t)&p, 0, bytes) == 0 ? p : NULL;
}

uint8_t *sw_stager_buffer(struct sw_stager *st, int i, uint64_t bytes) {
  const struct sw_real *real = sw_real();
  own(st);
  if (st->buf_bytes != bytes) {
    free_buffers(real, st);
    for (int k = 0; k < NBUF; k++) st->buf[k] = new_buffer(real, k, bytes);
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
  const struct sw_real *real;
  sw_copier copier; /* NULL: the runtime copies */
  struct sw_stager *st;
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

/* Chunk c's completion slot (an event of the runtime's, or the copier's):
 * the chunk SW_STAGED_AHEAD before it had it, and was waited for before c
 * was queued. */
static int slot_of(const struct flight *f, const struct sw_chunk *c) {
  return (int)(c->off / f->chunk % SW_STAGED_AHEAD);
}

static aclError queue(struct flight *f, const struct sw_chunk *c) {
  const struct sw_real *real = f->real;
  struct sw_stager *st = f->st;
  if (f->copier) return sw_copier_queue(f->copier, slot_of(f, c), c->dst, f->from + c->off, c->n);
  aclError err = real->aclrtMemcpyAsync(c->dst, c->n, f->from + c->off, c->n, ACL_MEMCPY_DEVICE_TO_HOST, st->stream);
  if (err == ACL_SUCCESS && st->events) err = real->aclrtRecordEvent(st->event[slot_of(f, c)], st->stream);
  return err;
}

static aclError wait_for(const struct flight *f, const struct sw_chunk *c) {
  const struct sw_real *real = f->real;
  struct sw_stager *st = f->st;
  if (f->copier) return sw_copier_wait(f->copier, slot_of(f, c));
  return st->events ? real->aclrtSynchronizeEvent(st->event[slot_of(f, c)]) : real->aclrtSynchronizeStream(st->stream);
}

/* Places and queues chunks until `ahead` are in flight or the block is all placed. */
static void fill(struct flight *f) {
  while (f->count < f->ahead && f->at < f->len && !f->stopped) {
    int i = (f->first + f->count) % NBUF;
    struct sw_chunk *c = &f->chunk_at[i];
    *c = (struct sw_chunk){.off = f->at, .n = f->len - f->at < f->chunk ? f->len - f->at : f->chunk};
    if (f->place(f->ctx, c)) {
      f->stopped = 1;
      return;
    }
    f->issued[i] = queue(f, c);
    f->at += c->n;
    f->count++;
  }
}

/* The flight's engine, ready on the thread's current device; 0 when
 * neither can stage. */
static int start(struct flight *f) {
  if (!sw_runtime_copies(f->real)) {
    f->copier = sw_copier_get();
    return f->copier != NULL;
  }
  if (!can_stage(f->real) || !ready(f->real, f->st)) return 0;
  if (!f->st->events) f->ahead = 1;
  return 1;
}

enum sw_staged sw_staged_copy(struct sw_stager *st, const void *src, uint64_t len, uint64_t chunk, int ahead,
                              sw_chunk_place place, sw_chunk_take take, void *ctx) {
  if (!st) return SW_STAGED_SERIAL;
  own(st);
  if (ahead < 1) ahead = 1;
  if (ahead > SW_STAGED_AHEAD) ahead = SW_STAGED_AHEAD;
  struct flight f = {.real = sw_real(), .st = st, .from = src, .len = len, .chunk = chunk, .ahead = ahead,
                     .place = place, .ctx = ctx};
  if (!start(&f)) return SW_STAGED_SERIAL;
  int failed = 0;
  fill(&f);
  while (f.count > 0) {
    struct sw_chunk *c = &f.chunk_at[f.first];
    aclError err = f.issued[f.first];
    if (err == ACL_SUCCESS) err = wait_for(&f, c);
    f.first = (f.first + 1) % NBUF;
    f.count--;
    /* The next copies are queued before this chunk is taken: with one
     * ahead, that is the whole overlap. */
    fill(&f);
    take(ctx, c, err);
    failed |= err != ACL_SUCCESS;
  }
  if (f.stopped) return SW_STAGED_STOPPED;
  return failed ? SW_STAGED_FAILED : SW_STAGED_OK;
}
