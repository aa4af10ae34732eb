/*
 * ascendcl_stream.c: the streams of the test device runtime, with a copy
 * engine as a device has one. aclrtMemcpyAsync queues the copy on its
 * stream and returns; one worker thread per stream (named "swt-stream")
 * does the stream's copies in the order they were queued, while the
 * caller's thread goes on. aclrtSynchronizeStream waits for every copy
 * queued on the stream before the call, aclrtSynchronizeDevice for those of
 * every stream of the calling thread's device, aclrtSynchronizeEvent for
 * those queued before the event was recorded (ascendcl_event.c, through
 * swt_stream_mark), and ops launched on a stream wait for its earlier
 * copies (launches are blocking here, as under ASCEND_LAUNCH_BLOCKING=1).
 * The NULL stream is each device's default stream.
 *
 * As CANN documents aclrtMemcpyAsync: the copy is asynchronous only when
 * its host side is page-locked (from aclrtMallocHost); with pageable host
 * memory it is queued the same way but the call returns once it is done.
 * Errors come where a device reports them: bad arguments and unknown
 * streams at the call; a copy that fails when the engine runs it (host to
 * host: no engine does that) at the next synchronisation that waits for it
 * (of its stream, its device or an event recorded after it), once, or at
 * the call itself when the call waited for it.
 *
 * A copy engine hands work over in microseconds, and a caller that copies
 * in chunks (the hook) queues the next chunk as soon as it has waited for
 * the last: so the worker and a waiter poll for about 50 us before they
 * sleep, which keeps two futex round trips out of every chunk. They poll
 * by yielding the CPU, not by spinning on it: a device's engine never
 * needs a host core, this one does, and when both threads share one (a
 * busy machine) a spinning waiter would hold off the very copy it waits
 * for, and a spinning worker the caller that would queue the next.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acl/acl.h"
#include "ascendcl_internal.h"

struct task {
  void *dst;
  const void *src;
  size_t count;
  aclrtMemcpyKind kind;
};

struct stream {
  int32_t device;
  pthread_mutex_t lock;
  pthread_cond_t queued, done, unused;
  struct task *tasks; /* a ring of `cap` tasks, `count` of them from `first` on */
  size_t cap, first, count;
  uint64_t enqueued, completed; /* tasks ever queued, ever finished */
  aclError error;               /* the first failure since the last synchronisation */
  uint64_t error_task;          /* its number (1-based, as `completed` counts) */
  uint64_t serial;              /* unique among every stream ever made: events tell a
                                 * destroyed stream from a new one at its address */
  int users;                    /* calls inside, holding it against destruction */
  bool worker_started, stopping;
  pthread_t worker;
  struct stream *next;
};

/* Every live stream, the default ones included; g_registry also guards
 * `users` going up, so a stream is never freed under a caller. */
static pthread_mutex_t g_registry = PTHREAD_MUTEX_INITIALIZER;
static struct stream *g_streams;
static struct stream *g_default[SWT_MAX_DEVICES];
/* Copies queued and not yet finished, all streams together: while none
 * is, an op launch checks nothing else (one load). */
static uint64_t g_pending;
static uint64_t g_serials;

/* How long a worker or waiter polls before it sleeps. */
#define POLL_NS 50000

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Called with s->lock held: polls outside it until `ready` holds of `s`
 * or POLL_NS have passed, yielding the CPU between looks (sched_yield
 * returns at once when nothing else wants this CPU); returns with the
 * lock held again. */
static void spin_unlocked(struct stream *s, bool (*ready)(const struct stream *, uint64_t), uint64_t arg) {
  pthread_mutex_unlock(&s->lock);
  for (uint64_t until = mono_ns() + POLL_NS; !ready(s, arg) && mono_ns() < until;) sched_yield();
  pthread_mutex_lock(&s->lock);
}

/* Read without the lock: the counters are stored atomically under it. */
static bool has_work(const struct stream *s, uint64_t unused) {
  (void)unused;
  return __atomic_load_n(&s->enqueued, __ATOMIC_ACQUIRE) != __atomic_load_n(&s->completed, __ATOMIC_ACQUIRE) ||
         __atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE);
}

static bool finished(const struct stream *s, uint64_t n) { return __atomic_load_n(&s->completed, __ATOMIC_ACQUIRE) >= n; }

static void *run_stream(void *arg) {
  struct stream *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    if (s->count == 0 && !s->stopping) spin_unlocked(s, has_work, 0);
    while (s->count == 0 && !s->stopping) pthread_cond_wait(&s->queued, &s->lock);
    if (s->count == 0) break;
    struct task t = s->tasks[s->first];
    pthread_mutex_unlock(&s->lock);
    aclError err = ACL_SUCCESS;
    if (t.kind == ACL_MEMCPY_HOST_TO_HOST) err = ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    else memmove(t.dst, t.src, t.count);
    pthread_mutex_lock(&s->lock);
    s->first = (s->first + 1) % s->cap;
    s->count--;
    __atomic_store_n(&s->completed, s->completed + 1, __ATOMIC_RELEASE);
    if (err != ACL_SUCCESS && s->error == ACL_SUCCESS) s->error = err, s->error_task = s->completed;
    __atomic_sub_fetch(&g_pending, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&s->done);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

static struct stream *new_stream(int32_t device) {
  struct stream *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->device = device;
  s->serial = __atomic_add_fetch(&g_serials, 1, __ATOMIC_RELAXED);
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->queued, NULL);
  pthread_cond_init(&s->done, NULL);
  pthread_cond_init(&s->unused, NULL);
  return s;
}

static void free_stream(struct stream *s) {
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->queued);
  pthread_cond_destroy(&s->done);
  pthread_cond_destroy(&s->unused);
  free(s->tasks);
  free(s);
}

/* Called with g_registry held. */
static struct stream *find(aclrtStream handle) {
  if (handle == NULL) {
    int32_t device = swt_current_device();
    if (g_default[device] == NULL) {
      struct stream *s = new_stream(device);
      if (s == NULL) return NULL;
      s->next = g_streams;
      g_streams = g_default[device] = s;
    }
    return g_default[device];
  }
  for (struct stream *s = g_streams; s != NULL; s = s->next)
    if ((aclrtStream)s == handle) return s;
  return NULL;
}

/* Called with g_registry held: keeps s from destruction until release(). */
static void hold(struct stream *s) {
  pthread_mutex_lock(&s->lock);
  s->users++;
  pthread_mutex_unlock(&s->lock);
}

/* The stream behind a handle (NULL: the default one of the current
 * device), held until release(); NULL when there is no such stream. */
static struct stream *acquire(aclrtStream handle) {
  pthread_mutex_lock(&g_registry);
  struct stream *s = find(handle);
  if (s != NULL) hold(s);
  pthread_mutex_unlock(&g_registry);
  return s;
}

static void release(struct stream *s) {
  pthread_mutex_lock(&s->lock);
  if (--s->users == 0) pthread_cond_broadcast(&s->unused);
  pthread_mutex_unlock(&s->lock);
}

/* Called with s->lock held: waits until task number `n` has finished, then
 * takes the stream's error if it is that of a task from `first` to `n`. */
static aclError wait_for(struct stream *s, uint64_t n, uint64_t first) {
  if (s->completed < n) spin_unlocked(s, finished, n);
  while (s->completed < n) pthread_cond_wait(&s->done, &s->lock);
  aclError err = ACL_SUCCESS;
  if (s->error != ACL_SUCCESS && s->error_task >= first && s->error_task <= n) err = s->error, s->error = ACL_SUCCESS;
  return err;
}

/* Called with s->lock held: queues one copy; its number, or 0 when there is
 * no memory or thread for it. */
static uint64_t enqueue(struct stream *s, const struct task *t) {
  if (!s->worker_started) {
    if (pthread_create(&s->worker, NULL, run_stream, s) != 0) return 0;
    pthread_setname_np(s->worker, "swt-stream");
    s->worker_started = true;
  }
  if (s->count == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    struct task *grown = malloc(cap * sizeof *grown);
    if (grown == NULL) return 0;
    for (size_t i = 0; i < s->count; i++) grown[i] = s->tasks[(s->first + i) % s->cap];
    free(s->tasks);
    s->tasks = grown, s->cap = cap, s->first = 0;
  }
  s->tasks[(s->first + s->count) % s->cap] = *t;
  s->count++;
  __atomic_add_fetch(&g_pending, 1, __ATOMIC_RELAXED);
  pthread_cond_signal(&s->queued);
  __atomic_store_n(&s->enqueued, s->enqueued + 1, __ATOMIC_RELEASE);
  return s->enqueued;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  aclError err = swt_check_copy(dst, destMax, src, count, kind);
  if (err != ACL_SUCCESS) return err;
  bool to_host = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_HOST_TO_HOST;
  bool from_host = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_HOST_TO_HOST;
  bool pageable = (to_host && !swt_page_locked(dst, count)) || (from_host && !swt_page_locked(src, count));
  struct stream *s = acquire(stream);
  if (s == NULL) return ACL_ERROR_INVALID_PARAM;
  struct task t = {dst, src, count, kind};
  pthread_mutex_lock(&s->lock);
  uint64_t n = enqueue(s, &t);
  if (n == 0) err = ACL_ERROR_BAD_ALLOC;
  else if (pageable) err = wait_for(s, n, n);
  pthread_mutex_unlock(&s->lock);
  release(s);
  return err;
}

static aclError synchronize(struct stream *s) {
  pthread_mutex_lock(&s->lock);
  aclError err = wait_for(s, s->enqueued, 1);
  pthread_mutex_unlock(&s->lock);
  return err;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  struct stream *s = acquire(stream);
  if (s == NULL) return ACL_ERROR_INVALID_PARAM;
  aclError err = synchronize(s);
  release(s);
  return err;
}

aclError aclrtSynchronizeDevice(void) {
  int32_t device = swt_current_device();
  enum { MAX_AT_ONCE = 256 };
  struct stream *held[MAX_AT_ONCE];
  aclError first = ACL_SUCCESS;
  bool more = true;
  /* Holds a batch of the device's streams, then waits outside the
   * registry lock: other threads go on queueing meanwhile. */
  for (size_t skip = 0; more; skip += MAX_AT_ONCE) {
    int n = 0;
    size_t seen = 0;
    more = false;
    pthread_mutex_lock(&g_registry);
    for (struct stream *s = g_streams; s != NULL; s = s->next) {
      if (s->device != device || seen++ < skip) continue;
      if (n == MAX_AT_ONCE) {
        more = true;
        break;
      }
      hold(s);
      held[n++] = s;
    }
    pthread_mutex_unlock(&g_registry);
    for (int i = 0; i < n; i++) {
      aclError err = synchronize(held[i]);
      if (first == ACL_SUCCESS) first = err;
      release(held[i]);
    }
  }
  return first;
}

aclError swt_stream_mark(aclrtStream stream, struct swt_mark *mark) {
  struct stream *s = acquire(stream);
  if (s == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&s->lock);
  *mark = (struct swt_mark){s, s->serial, s->enqueued};
  pthread_mutex_unlock(&s->lock);
  release(s);
  return ACL_SUCCESS;
}

aclError swt_mark_wait(const struct swt_mark *mark) {
  pthread_mutex_lock(&g_registry);
  struct stream *s = g_streams;
  while (s != NULL && (s != mark->stream || s->serial != mark->serial)) s = s->next;
  if (s != NULL) hold(s);
  pthread_mutex_unlock(&g_registry);
  if (s == NULL) return ACL_SUCCESS; /* destroyed, which finished its copies */
  pthread_mutex_lock(&s->lock);
  aclError err = wait_for(s, mark->task, 1);
  pthread_mutex_unlock(&s->lock);
  release(s);
  return err;
}

aclError swt_stream_wait(aclrtStream stream) {
  if (__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE) == 0) return ACL_SUCCESS;
  struct stream *s = acquire(stream);
  if (s == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&s->lock);
  while (s->completed < s->enqueued) pthread_cond_wait(&s->done, &s->lock);
  pthread_mutex_unlock(&s->lock);
  release(s);
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream) {
  if (stream == NULL) return ACL_ERROR_INVALID_PARAM;
  struct stream *s = new_stream(swt_current_device());
  if (s == NULL) return ACL_ERROR_BAD_ALLOC;
  pthread_mutex_lock(&g_registry);
  s->next = g_streams;
  g_streams = s;
  pthread_mutex_unlock(&g_registry);
  *stream = s;
  return ACL_SUCCESS;
}

/* Finishes the stream's queued copies first, as the runtime does. */
aclError aclrtDestroyStream(aclrtStream stream) {
  if (stream == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&g_registry);
  struct stream **at = &g_streams;
  while (*at != NULL && (aclrtStream)*at != stream) at = &(*at)->next;
  struct stream *s = *at;
  if (s != NULL) *at = s->next;
  pthread_mutex_unlock(&g_registry);
  if (s == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&s->lock);
  while (s->users > 0) pthread_cond_wait(&s->unused, &s->lock);
  __atomic_store_n(&s->stopping, true, __ATOMIC_RELEASE);
  pthread_cond_signal(&s->queued);
  pthread_mutex_unlock(&s->lock);
  if (s->worker_started) pthread_join(s->worker, NULL);
  free_stream(s);
  return ACL_SUCCESS;
}
