/*
 * ring_producer.c: the producer side of the shared-memory ring. A traced
 * process makes its ring on first use (`{pid}.ring` in STOMPWATCH_RING_DIR),
 * then any thread reserves, fills and publishes records without locks.
 * When the ring is full it waits for the daemon (backpressure, never a silent
 * drop); only when the daemon has stopped answering does it pass through and
 * count what it could not deliver. A daemon that was only stalled gets the
 * ring back once its heartbeat moves, with a GAP record saying what was lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hook_internal.h"

enum { STATE_UNINIT = 0, STATE_STARTING = 1, STATE_READY = 2, STATE_OFF = 3 };

static int g_state = STATE_UNINIT;
static struct sw_ring_header *g_hdr;
static uint8_t *g_data;
static uint64_t g_mask;
/* The last tail this process read. The consumer writes the shared tail
 * after every round; reading it on every reservation would pull that cache
 * line across cores each time, so it is read again only when the space
 * known free runs out. */
static uint64_t g_tail_seen;
/* While passing through (SW_FLAG_STALLED): the heartbeat that was found
 * stale. Any other value means the daemon reads again. */
static uint64_t g_stall_beat;
/* Taken by the one thread that publishes the GAP record. */
static int g_resuming;

/* Either flag: records are not written, only counted. */
#define PASS_THROUGH (SW_FLAG_CONSUMER_GONE | SW_FLAG_STALLED)

__thread struct sw_thread sw_self = {.in_hook = 0, .device = -1, .tid = 0, .in_framework_op = 0};

uint32_t sw_tid_slow(struct sw_thread *self) { return self->tid = (uint32_t)syscall(SYS_gettid); }

/* Asks the runtime once; device 0 while it cannot say. */
int32_t sw_device_slow(struct sw_thread *self) {
  const struct sw_real *real = sw_real();
  int32_t d = 0;
  if (real->aclrtGetDevice && real->aclrtGetDevice(&d) == ACL_SUCCESS && d >= 0) return self->device = d;
  return 0;
}

struct sw_ring_header *sw_producer_header(void) { return g_state == STATE_READY ? g_hdr : NULL; }

void sw_warn_once(int *said, const char *what) {
  if (__atomic_exchange_n(said, 1, __ATOMIC_RELAXED)) return;
  fprintf(stderr, "stompwatch: %s\n", what);
}

static void read_command(char *out, size_t cap) {
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, out, cap - 1) : -1;
  if (fd >= 0) close(fd);
  if (n <= 0) n = 0;
  for (ssize_t i = 0; i < n; i++)
    if (out[i] == '\0') out[i] = ' ';
  while (n > 0 && out[n - 1] == ' ') n--;
  out[n] = '\0';
}

static uint64_t ring_capacity(void) {
  const char *s = getenv("STOMPWATCH_RING_BYTES");
  uint64_t cap = s ? strtoull(s, NULL, 10) : 0;
  if (cap < (1u << 20)) cap = SW_DEFAULT_CAPACITY;
  uint64_t p = 1;
  while (p < cap) p <<= 1; /* offsets are masked: the size must be a power of two */
  return p;
}

/* torch_npu's OOM snapshot settings, for the daemon, which writes the files
 * (the job may die right after its failed allocation). The path is made
 * absolute here, where the job's working directory is known. */
static void oom_config(struct sw_ring_header *h) {
  const char *mode = getenv("OOM_SNAPSHOT_ENABLE");
  if (!mode || (strcmp(mode, "1") != 0 && strcmp(mode, "2") != 0)) return;
  const char *dir = getenv("OOM_SNAPSHOT_PATH");
  if (!dir || !*dir) dir = ".";
  char resolved[PATH_MAX];
  struct stat st;
  if (!realpath(dir, resolved) || stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode) ||
      strlen(resolved) >= sizeof h->oom_path) {
    fprintf(stderr, "stompwatch: OOM_SNAPSHOT_PATH is invalid. %s (no OOM snapshots for this process)\n", dir);
    return;
  }
  memcpy(h->oom_path, resolved, strlen(resolved) + 1);
  h->oom_snapshot = (uint32_t)(mode[0] - '0');
}

/* Makes `{dir}/{pid}.ring` complete before the daemon can see it: written
 * under a temporary name, then renamed. */
static int make_ring(const char *dir) {
  char tmp[4096], final[4096];
  int pid = getpid();
  uint64_t cap = ring_capacity();
  snprintf(tmp, sizeof tmp, "%s/.%d.ring.tmp", dir, pid);
  snprintf(final, sizeof final, "%s/%d.ring", dir, pid);
  unlink(tmp);
  int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  size_t total = SW_DATA_OFFSET + cap;
  void *base = MAP_FAILED;
  /* Pages allocated and mapped now: first-touch faults (page allocation and
   * clearing) would otherwise land on the job's op launches during the
   * ring's first lap. MAP_POPULATE alone only read-faults a shared mapping,
   * which leaves tmpfs holes to be filled on first write. */
  if (ftruncate(fd, (off_t)total) == 0) {
    (void)posix_fallocate(fd, 0, (off_t)total); /* may fail on a full tmpfs: then only the first lap is slower */
    base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  close(fd);
  if (base == MAP_FAILED) {
    unlink(tmp);
    return -1;
  }
  struct sw_ring_header *h = base;
  h->version = SW_RING_VERSION;
  h->header_size = SW_HEADER_SIZE;
  h->data_offset = SW_DATA_OFFSET;
  h->capacity = cap;
  h->pid = pid;
  h->start_ns = sw_now_ns();
  h->heartbeat_ns = h->start_ns; /* a daemon that never comes times out like one that left */
  const char *blocking = getenv("ASCEND_LAUNCH_BLOCKING");
  if (blocking && strcmp(blocking, "1") == 0) h->flags |= SW_FLAG_LAUNCH_BLOCKING;
  const char *algo = getenv("STOMPWATCH_CHECKSUM");
  h->checksum_algo = (algo && strcmp(algo, "crc64-msmemscope") == 0) ? SW_CHECKSUM_CRC64_MSMEMSCOPE : SW_CHECKSUM_XXH3;
  /* Whole or not at all: a value cut short could read as a different,
   * valid one to the daemon, which parses it again. */
  const char *cli = getenv("STOMPWATCH_WATCH");
  if (cli && strlen(cli) < sizeof h->cli_watch) memcpy(h->cli_watch, cli, strlen(cli) + 1);
  read_command(h->command, sizeof h->command);
  oom_config(h);
  __atomic_store_n(&h->magic, SW_RING_MAGIC, __ATOMIC_RELEASE);
  if (rename(tmp, final) != 0) {
    munmap(base, total);
    unlink(tmp);
    return -1;
  }
  g_hdr = h;
  g_data = (uint8_t *)base + SW_DATA_OFFSET;
  g_mask = cap - 1;
  return 0;
}

static void at_exit(void) {
  if (g_state != STATE_READY) return;
  sw_emit(SW_REC_PROC_EXIT, 0, -1, 0, 0, 0, 0, 0, NULL, NULL, 0);
  __atomic_fetch_or(&g_hdr->flags, SW_FLAG_EXITED, __ATOMIC_RELEASE);
}

/* A forked child must not write into its parent's ring. */
static void after_fork_in_child(void) {
  g_state = STATE_UNINIT;
  g_hdr = NULL;
  g_tail_seen = 0;
  g_stall_beat = 0;
  g_resuming = 0;
  sw_self.tid = 0;
}

static void start(void) {
  static int said;
  const char *dir = getenv("STOMPWATCH_RING_DIR");
  if (!dir || !*dir) {
    __atomic_store_n(&g_state, STATE_OFF, __ATOMIC_RELEASE);
    return;
  }
  if (make_ring(dir) != 0) {
    sw_warn_once(&said, "cannot create the event ring in STOMPWATCH_RING_DIR; the job runs untraced");
    __atomic_store_n(&g_state, STATE_OFF, __ATOMIC_RELEASE);
    return;
  }
  static int registered;
  if (!registered) {
    registered = 1;
    atexit(at_exit);
    pthread_atfork(NULL, NULL, after_fork_in_child);
  }
  __atomic_store_n(&g_state, STATE_READY, __ATOMIC_RELEASE);
  sw_emit(SW_REC_PROC_START, 0, -1, 0, 0, 0, 0, 0, g_hdr->command, NULL, 0);
}

int sw_producer_ready(void) {
  int s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
  if (SW_LIKELY(s == STATE_READY)) return 1;
  if (s == STATE_OFF) return 0;
  int expected = STATE_UNINIT;
  if (__atomic_compare_exchange_n(&g_state, &expected, STATE_STARTING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    start();
  } else {
    while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == STATE_STARTING) sched_yield();
  }
  return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == STATE_READY;
}

/* Whether the consumer process has ended: then nothing will read the ring
 * again. A stopped one (SIGSTOP, a debugger) still exists. */
static int consumer_exited(void) {
  int pid = __atomic_load_n(&g_hdr->consumer_pid, __ATOMIC_ACQUIRE);
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* A record at least this large is a chunk of a full-content sample. */
#define BIG_RECORD (64u << 10)

/* Waits for the consumer to free space for a record of `size` bytes; 0
 * once it is judged silent: the job must not stall with its daemon.
 * An event waits for the few bytes the daemon frees with its next batch:
 * it yields, then sleeps 50 us at a time. A sample's chunk waits for MiBs,
 * which the daemon frees by writing them to a file, a few ms per chunk:
 * yielding and waking every 50 us there took CPU from the daemon's very
 * writes on a busy machine, so it sleeps from the start, 50 us doubling
 * every 4 waits up to 1 ms (the ring holds far more than 1 ms of writes). */
static int wait_for_consumer(unsigned *spins, uint32_t size) {
  static int said_gone, said_stalled;
  if (__atomic_load_n(&g_hdr->flags, __ATOMIC_ACQUIRE) & PASS_THROUGH) return 0;
  if (size >= BIG_RECORD && *spins < 64) *spins = 64;
  if (++*spins < 64) {
    sched_yield();
    return 1;
  }
  uint64_t beat = __atomic_load_n(&g_hdr->heartbeat_ns, __ATOMIC_ACQUIRE);
  if (sw_now_ns() - beat > SW_CONSUMER_TIMEOUT_NS) {
    int olderr = errno;
    if (consumer_exited()) {
      __atomic_fetch_or(&g_hdr->flags, SW_FLAG_CONSUMER_GONE, __ATOMIC_RELEASE);
      sw_warn_once(&said_gone, "the daemon stopped reading events; the job goes on untraced and counts what was lost");
    } else {
      __atomic_store_n(&g_stall_beat, beat, __ATOMIC_RELAXED);
      __atomic_fetch_or(&g_hdr->flags, SW_FLAG_STALLED, __ATOMIC_RELEASE); /* after g_stall_beat */
      sw_warn_once(&said_stalled, "the daemon stopped reading events for 2 s; the job goes on untraced, counts "
                                  "what is lost, and is traced again once the daemon reads");
    }
    errno = olderr;
    return 0;
  }
  unsigned doublings = size >= BIG_RECORD ? (*spins - 65) / 4 : 0;
  struct timespec pause = {0, doublings >= 5 ? 1000000 : 50000L << doublings};
  nanosleep(&pause, NULL);
  return 1;
}

static void count_drop(uint32_t size) {
  __atomic_fetch_add(&g_hdr->dropped_events, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&g_hdr->dropped_bytes, size, __ATOMIC_RELAXED);
}

/* Reserves `size` bytes if the ring has room now, whatever the flags say;
 * NULL when it has none. */
static struct sw_record *reserve_if_room(uint32_t size, uint64_t *pos) {
  const uint64_t cap = g_mask + 1;
  uint64_t head = __atomic_load_n(&g_hdr->head, __ATOMIC_RELAXED);
  for (;;) {
    uint64_t off = head & g_mask;
    uint64_t pad = off + size > cap ? cap - off : 0;
    if (head + pad + size - __atomic_load_n(&g_hdr->tail, __ATOMIC_ACQUIRE) > cap) return NULL;
    if (!__atomic_compare_exchange_n(&g_hdr->head, &head, head + pad + size, 1, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      continue;
    if (pad) {
      struct sw_record *p = (struct sw_record *)(g_data + off);
      p->type = SW_REC_PAD;
      p->size = (uint32_t)pad;
      __atomic_store_n(&p->stamp, SW_STAMP(head), __ATOMIC_RELEASE);
      head += pad;
    }
    *pos = head;
    return (struct sw_record *)(g_data + (head & g_mask));
  }
}

/* Passing through, on a record's way to being dropped: once the daemon's
 * heartbeat has moved and the ring has room, publishes the GAP record (so
 * the daemon learns what was lost before it reads anything newer) and ends
 * the pass-through; returns 1 then. While the daemon stays silent this is
 * one load of a cache line nobody writes, cheaper than the record it
 * replaces. */
static int try_resume(void) {
  uint64_t beat = __atomic_load_n(&g_hdr->heartbeat_ns, __ATOMIC_ACQUIRE);
  uint64_t stale = __atomic_load_n(&g_stall_beat, __ATOMIC_RELAXED);
  if (beat == stale) return 0;
  if (__atomic_exchange_n(&g_resuming, 1, __ATOMIC_ACQUIRE)) {
    /* Another thread is writing the GAP record, a few stores: wait for it
     * (boundedly: it may be this thread, in a signal handler) rather than
     * count a loss its record would not tell of. */
    for (int i = 0; i < 1000 && __atomic_load_n(&g_resuming, __ATOMIC_ACQUIRE); i++) sched_yield();
    return !(__atomic_load_n(&g_hdr->flags, __ATOMIC_ACQUIRE) & SW_FLAG_STALLED);
  }
  int resumed = !(__atomic_load_n(&g_hdr->flags, __ATOMIC_ACQUIRE) & SW_FLAG_STALLED);
  if (!resumed) {
    uint32_t tid = sw_tid_of(&sw_self);
    uint64_t ts = sw_event_ns(), pos;
    struct sw_record *r = reserve_if_room(sizeof(struct sw_record), &pos);
    if (r) {
      /* Reserved before the flag clears: no record of after the gap comes
       * before it in the ring. The totals are read after, to take in what
       * the other threads counted meanwhile. */
      __atomic_fetch_and(&g_hdr->flags, ~SW_FLAG_STALLED, __ATOMIC_RELEASE);
      memset((uint8_t *)r + sizeof r->stamp, 0, sizeof *r - sizeof r->stamp);
      r->type = SW_REC_GAP;
      r->size = sizeof(struct sw_record);
      r->tid = tid;
      r->ts_ns = ts;
      r->device = -1;
      r->addr = __atomic_load_n(&g_hdr->dropped_events, __ATOMIC_RELAXED);
      r->id = __atomic_load_n(&g_hdr->dropped_bytes, __ATOMIC_RELAXED);
      r->len = beat > stale ? beat - stale : 0;
      sw_commit(r, pos);
      resumed = 1;
    }
  }
  __atomic_store_n(&g_resuming, 0, __ATOMIC_RELEASE);
  return resumed;
}

/* Everything sw_reserve's first try does not cover: padding at the end of
 * the data area, a full ring, a lost race, a consumer gone or stalled. */
__attribute__((noinline)) static struct sw_record *reserve_slow(uint32_t size, uint64_t *pos) {
  const uint64_t cap = g_mask + 1;
  unsigned spins = 0;
  uint64_t head = __atomic_load_n(&g_hdr->head, __ATOMIC_RELAXED);
  for (;;) {
    uint32_t flags = __atomic_load_n(&g_hdr->flags, __ATOMIC_ACQUIRE);
    if ((flags & SW_FLAG_CONSUMER_GONE) || ((flags & SW_FLAG_STALLED) && !try_resume())) {
      count_drop(size);
      return NULL;
    }
    if (flags & SW_FLAG_STALLED) { /* resumed just now */
      spins = 0;
      head = __atomic_load_n(&g_hdr->head, __ATOMIC_RELAXED);
      continue;
    }
    uint64_t off = head & g_mask;
    uint64_t pad = off + size > cap ? cap - off : 0;
    uint64_t tail = __atomic_load_n(&g_tail_seen, __ATOMIC_ACQUIRE);
    if (head + pad + size - tail > cap) {
      uint64_t fresh = __atomic_load_n(&g_hdr->tail, __ATOMIC_ACQUIRE);
      if (fresh != tail) {
        __atomic_store_n(&g_tail_seen, fresh, __ATOMIC_RELEASE); /* a stale store only makes the check stricter */
        continue;
      }
      if (!wait_for_consumer(&spins, size)) {
        count_drop(size);
        return NULL;
      }
      head = __atomic_load_n(&g_hdr->head, __ATOMIC_RELAXED);
      continue;
    }
    if (!__atomic_compare_exchange_n(&g_hdr->head, &head, head + pad + size, 1, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
      continue;
    if (pad) {
      struct sw_record *p = (struct sw_record *)(g_data + off);
      p->type = SW_REC_PAD;
      p->size = (uint32_t)pad;
      __atomic_store_n(&p->stamp, SW_STAMP(head), __ATOMIC_RELEASE);
      head += pad;
    }
    *pos = head;
    return (struct sw_record *)(g_data + (head & g_mask));
  }
}

/* The common case first, small enough to inline into the op launch path:
 * room without wrapping, as far as the cached tail knows, and the CAS won. */
static inline struct sw_record *reserve(uint32_t size, uint64_t *pos) {
  uint64_t head = __atomic_load_n(&g_hdr->head, __ATOMIC_RELAXED);
  uint64_t off = head & g_mask;
  uint64_t tail = __atomic_load_n(&g_tail_seen, __ATOMIC_ACQUIRE);
  if (SW_LIKELY(off + size <= g_mask + 1 && head + size - tail <= g_mask + 1 &&
                !(__atomic_load_n(&g_hdr->flags, __ATOMIC_RELAXED) & PASS_THROUGH) &&
                __atomic_compare_exchange_n(&g_hdr->head, &head, head + size, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))) {
    *pos = head;
    return (struct sw_record *)(g_data + off);
  }
  return reserve_slow(size, pos);
}

struct sw_record *sw_reserve(uint32_t size, uint64_t *pos) { return reserve(size, pos); }

void sw_commit(struct sw_record *rec, uint64_t pos) { __atomic_store_n(&rec->stamp, SW_STAMP(pos), __ATOMIC_RELEASE); }

/* The length of a name, by hand: on VMs whose CPUs run with IBRS every
 * indirect jump (strnlen through the PLT) costs more than this loop does
 * for an op type's few bytes. (The Makefile keeps GCC from turning these
 * loops back into libc calls.) */
static inline uint32_t name_length(const char *name) {
  uint32_t n = 0;
  if (name)
    while (n < SW_NAME_MAX && name[n]) n++;
  return n;
}

/* Copies 8 bytes at a time (plain moves), then the rest. */
static inline void copy_name(uint8_t *to, const char *from, uint32_t n) {
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) __builtin_memcpy(to + i, from + i, 8);
  for (; i < n; i++) to[i] = (uint8_t)from[i];
}

/* Writes one record: the one place its fields are filled. Inlined into
 * both emitters, so the op launch's call, with its constants, loses the
 * branches it does not need. Everything that may call into the runtime or
 * calibrate the clock (tid, device, the first stamp) is asked before the
 * record is reserved: the daemon waits at an unpublished record for as long
 * as that takes. */
static inline void emit_record(struct sw_thread *self, uint64_t ts_ns, uint16_t type, uint16_t flags,
                               int32_t device, int32_t result, uint64_t addr, uint64_t len, uint64_t id,
                               uint32_t aux, const char *name, const void *payload, uint32_t payload_len) {
  if (SW_UNLIKELY(!sw_producer_ready())) return;
  if (SW_UNLIKELY(__atomic_load_n(&stompwatch_host_pending, __ATOMIC_RELAXED))) sw_host_flush();
  uint32_t name_len = name_length(name);
  uint32_t size = (uint32_t)SW_ALIGN_RECORD(sizeof(struct sw_record) + SW_ALIGN8(name_len) + payload_len);
  if (size > (g_mask + 1) / 4) return; /* never: names are capped and payloads small */
  uint32_t tid = sw_tid_of(self);
  if (!ts_ns) ts_ns = sw_event_ns();
  uint64_t pos;
  struct sw_record *r = reserve(size, &pos);
  if (!r) return;
  r->type = type;
  r->flags = flags;
  r->size = size;
  r->tid = tid;
  r->ts_ns = ts_ns;
  r->device = device;
  r->result = result;
  r->addr = addr;
  r->len = len;
  r->id = id;
  r->name_len = name_len;
  r->aux = aux;
  uint8_t *p = (uint8_t *)(r + 1);
  copy_name(p, name, name_len);
  if (payload_len) memcpy(p + SW_ALIGN8(name_len), payload, payload_len);
  sw_commit(r, pos);
}

void sw_emit(uint16_t type, uint16_t flags, int32_t device, int32_t result, uint64_t addr, uint64_t len,
             uint64_t id, uint32_t aux, const char *name, const void *payload, uint32_t payload_len) {
  emit_record(&sw_self, 0, type, flags, device, result, addr, len, id, aux, name, payload, payload_len);
}

void sw_emit_at(uint64_t ts_ns, uint16_t type, uint16_t flags, int32_t device, int32_t result, uint64_t addr,
                uint64_t len, uint64_t id, uint32_t aux, const char *name, const void *payload,
                uint32_t payload_len) {
  emit_record(&sw_self, ts_ns, type, flags, device, result, addr, len, id, aux, name, payload, payload_len);
}

void sw_emit_for(uint32_t tid, uint64_t ts_ns, uint16_t type, int32_t device, uint64_t addr, uint64_t len,
                 uint32_t aux, const char *name) {
  struct sw_thread other = sw_self;
  other.tid = tid;
  emit_record(&other, ts_ns, type, 0, device, 0, addr, len, 0, aux, name, NULL, 0);
}

void sw_emit_op(struct sw_thread *self, uint64_t ts_ns, const char *op_type, int32_t result) {
  emit_record(self, ts_ns, SW_REC_OP, 0, sw_device_of(self), result, 0, 0, 0, 0, op_type, NULL, 0);
}

/* ---- the producer API other producers call (the Python client, via ctypes) ---- */

/* Record types another producer may write: not padding, not the process's
 * start and exit (a stray one would end its log), not the hook's own
 * samples and their data, not its gap reports. */
static int external_type(int type) {
  return type > SW_REC_PROC_EXIT && type <= SW_REC_ACCESS && type != SW_REC_DUMP && type != SW_REC_DUMP_DATA &&
         type != SW_REC_GAP;
}

/* Emits one event into this process's ring; returns 0, or -1 when the
 * process is not traced (no STOMPWATCH_RING_DIR) or the daemon is gone or
 * stalled (the event is counted as lost). */
SW_EXPORT int stompwatch_emit(int type, int device, int result, uint64_t addr, uint64_t len, uint64_t id,
                              uint32_t aux, const char *name) {
  if (!sw_producer_ready()) return -1;
  if (!external_type(type)) return -1;
  sw_emit((uint16_t)type, 0, device, result, addr, len, id, aux, name, NULL, 0);
  return (__atomic_load_n(&g_hdr->flags, __ATOMIC_RELAXED) & PASS_THROUGH) ? -1 : 0;
}

/* Whether this process has a live ring to the daemon. */
SW_EXPORT int stompwatch_attached(void) { return sw_producer_ready(); }

/* A batch of events gathered by a framework and handed over in one call
 * (the Python client records tensor storages this way: one ctypes call per
 * storage would cost more than the op that made it). Each event is four
 * words: { type | aux << 8 | (device + 1) << 16 | has_name << 32, stamp (ns,
 * CLOCK_REALTIME; 0 = now), addr, len }; events with has_name take the next
 * NUL-terminated string of the `names_len` bytes at `names`, in order.
 * Types as stompwatch_emit
 * takes them. Returns the events written, or -1 when the process is not
 * traced or the daemon is gone. */
SW_EXPORT int stompwatch_emit_batch(const uint64_t *events, uint32_t n, const char *names, size_t names_len) {
  if (!sw_producer_ready() || !events) return -1;
  const char *name = names, *end = names ? names + names_len : NULL;
  int written = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint64_t *e = events + 4 * (size_t)i;
    uint32_t type = (uint32_t)(e[0] & 0xff), aux = (uint32_t)((e[0] >> 8) & 0xff);
    int32_t device = (int32_t)((e[0] >> 16) & 0xffff) - 1;
    const char *this_name = NULL;
    if ((e[0] >> 32) & 1) {
      if (!name || name >= end) break; /* fewer names than events say: stop where they end */
      size_t len = strnlen(name, (size_t)(end - name));
      if (name + len == end) break; /* not NUL-terminated inside the buffer */
      this_name = name;
      name += len + 1;
    }
    if (!external_type((int)type)) continue;
    sw_emit_at(e[1], (uint16_t)type, 0, device, 0, e[2], e[3], 0, aux, this_name, NULL, 0);
    written++;
  }
  return (__atomic_load_n(&g_hdr->flags, __ATOMIC_RELAXED) & SW_FLAG_CONSUMER_GONE) ? -1 : written;
}

/* Waits until the daemon has read every event this process published
 * before the call and has begun a later round, so those events are in its
 * files (the daemon writes a round's rows before it starts the next, and
 * stamps the heartbeat at the start of a round). For a framework that
 * reads the daemon's event log from inside the job (check_leaks).
 * Returns 0, or -1 when not traced or after `timeout_ms`. */
SW_EXPORT int stompwatch_wait_consumed(uint32_t timeout_ms) {
  if (!sw_producer_ready()) return -1;
  const uint64_t target = __atomic_load_n(&g_hdr->head, __ATOMIC_ACQUIRE);
  const uint64_t deadline = sw_now_ns() + (uint64_t)timeout_ms * 1000000u;
  struct timespec pause = {0, 200000};
  while (__atomic_load_n(&g_hdr->tail, __ATOMIC_ACQUIRE) < target) {
    if (sw_now_ns() > deadline) return -1;
    nanosleep(&pause, NULL);
  }
  const uint64_t caught_up = sw_now_ns();
  while (__atomic_load_n(&g_hdr->heartbeat_ns, __ATOMIC_ACQUIRE) <= caught_up) {
    if (sw_now_ns() > deadline) return -1;
    nanosleep(&pause, NULL);
  }
  return 0;
}
