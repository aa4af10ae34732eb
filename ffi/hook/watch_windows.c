/*
 * watch_windows.c: decides, around each op launch, which watched blocks to
 * sample, and samples them. Watches come from two places: the daemon's table
 * in the ring (POST /watch), and the job's own --watch spec
 * (STOMPWATCH_WATCH, `[start[:outid]],end[,full-content]`, read with the
 * grammar in common/watch_spec.c that `run` checks it with), which opens a
 * window on output `outid` at each call of `start` and closes it after the
 * next call of `end`. A sample synchronises the device, copies the block to
 * the host in chunks, the copy of each overlapping the hashing of the one
 * before (staged_copy.c; serially with aclrtMemcpy where the runtime cannot),
 * and either checksums it here or ships the bytes through the ring
 * (full-content), each chunk copied straight into its ring record.
 *
 * The lock below is taken only when something is or may be watched; with
 * nothing watched an op launch costs a few atomic loads here
 * (sw_watch_may_sample) and the hooks around the op are skipped.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook_internal.h"
#include "staged_copy.h"

#define MAX_LOCAL ((int)(2 * SW_WATCH_MAX))
/* Each checksum staging buffer, one chunk; the SW_STAGED_AHEAD + 1 buffers
 * take 4 MiB of page-locked memory. Where the copy engine is a core of the
 * host (the test runtime), the hasher reads what it wrote from that core's
 * cache: on the 2-vCPU Xeon VM of 2026-11-27 (a test program doing the
 * hook's loop, 256 MiB, median of 15 against a memcpy of the block in the
 * same round) four buffers of 1 MiB sampled at 0.87-0.91x memcpy, of
 * 256 KiB at 0.78-0.84x, of 512 KiB at 0.84x, of 2 or 4 MiB at 0.83-0.85x;
 * the bench's 256 MiB row, nine samples a run, two runs each: 0.88x and
 * 0.89x in 1 MiB chunks, 0.73x and 0.82x in 256 KiB ones. On the Zen 3 VM
 * of 2026-11-25, 128 KiB to 1 MiB sampled alike (staged_copy.h). */
#define STAGING_BYTES (1024u << 10)
/* A chunk of a copy through the framework's copier (calls into Python,
 * tens of microseconds each before any byte moves). On an H100 (2026-11-26,
 * bench/cuda_watch.py, 256 MiB and 1 GiB, two rounds) a pipelined sample
 * ran at 14.8-15.2 GiB/s in 2 MiB chunks, 13.1-15.9 in 4 MiB, 11.1-15.3 in
 * 8 MiB and 9.0-10.6 in 16 MiB: the hasher reads a small chunk from cache.
 * The SW_STAGED_AHEAD + 1 buffers take 8 MiB of the copier's page-locked
 * memory per sampling thread. */
#define COPIER_CHUNK_BYTES (2u << 20)

/* A closed API watch keeps its slot until the daemon drops it from the
 * table, so the next table read does not start it again. */
enum { W_FREE = 0, W_WAITING, W_OPEN, W_CLOSED };

struct local_watch {
  uint32_t id;
  uint32_t flags;
  uint64_t addr, len;
  int64_t dump_nums, taken;
  uint32_t outid;
  int state;
  char start_op[SW_OP_NAME_MAX], end_op[SW_OP_NAME_MAX];
};

struct cli_spec {
  int on, has_start, full;
  uint32_t outid;
  char start[SW_OP_NAME_MAX], end[SW_OP_NAME_MAX];
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct local_watch g_w[MAX_LOCAL];
static struct sw_watch_entry g_table_copy[SW_WATCH_MAX];
static uint32_t g_seen_seq;
static int g_live; /* watches waiting or open; read without the lock */
static struct cli_spec g_cli;
static pthread_once_t g_cli_once = PTHREAD_ONCE_INIT;
static int g_cli_parsed; /* set after parse_cli: every op checks it, pthread_once is a call */
static uint32_t g_cli_windows;
static uint64_t g_dump_seq;

/* Copies n device bytes at src to dst, serially: the runtime's aclrtMemcpy,
 * else the framework's copier, queued and waited for at once. */
static int device_copy(const struct sw_real *real, void *dst, const void *src, uint64_t n) {
  if (sw_runtime_copies(real)) return real->aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_HOST);
  sw_copier copier = sw_copier_get();
  aclError err = sw_copier_queue(copier, 0, dst, src, n);
  return err == ACL_SUCCESS ? sw_copier_wait(copier, 0) : err;
}

/* What a thread needs while it samples, on the heap from its first sampled
 * op: thread-locals this size would keep the hook out of the static TLS
 * block, and the op launch path reads its one thread-local from there. */
struct sampling {
  /* The watches sampled before the current op, to pair the after. */
  int n;
  int slot[MAX_LOCAL];
  uint32_t id[MAX_LOCAL];
  struct sw_hasher hasher;
  uint8_t *staging; /* serial checksum copies, staging_len bytes */
  uint64_t staging_len;
  struct sw_stager *stager; /* pipelined copies */
  /* Around a framework op (framework_ops.c): the byte extents it may write,
   * n_allowed >= 0; -1 around runtime op launches. A block they cover in
   * part is then also checksummed outside them, host or device memory
   * alike, so the daemon can tell a change the op was allowed to make from
   * one beside it in the same block. */
  int n_allowed;
  const uint64_t *allowed;
  /* The framework said the extents are host memory (CPU tensors): a
   * --watch window opened on one is read in place. */
  int allowed_host;
  /* The sample in progress: the parts of its block the op may write, as
   * [from, to) offsets into the block sorted by from (they may overlap),
   * and whether the bytes outside them are being hashed. */
  int outside_on;
  int n_cuts;
  uint64_t cuts[SW_MAX_EXTENTS][2];
  struct sw_hasher outside;
};
static __thread struct sampling *t_sampling;
static pthread_key_t g_sampling_key;
static pthread_once_t g_sampling_once = PTHREAD_ONCE_INIT;

/* Runs on the exiting thread. Another key's destructor may still launch an
 * op after it: that op then finds no state and starts afresh. */
static void free_sampling(void *p) {
  struct sampling *s = p;
  if (t_sampling == s) t_sampling = NULL;
  free(s->staging);
  sw_stager_free(s->stager);
  sw_hasher_free(&s->hasher);
  sw_hasher_free(&s->outside);
  free(s);
}

static void make_sampling_key(void) {
  if (pthread_key_create(&g_sampling_key, free_sampling) != 0) g_sampling_key = (pthread_key_t)-1;
}

/* This thread's sampling state; NULL when there is no memory for it. */
static struct sampling *thread_sampling(void) {
  if (SW_LIKELY(t_sampling != NULL)) return t_sampling;
  pthread_once(&g_sampling_once, make_sampling_key);
  struct sampling *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->n_allowed = -1;
  if (g_sampling_key != (pthread_key_t)-1) pthread_setspecific(g_sampling_key, s); /* freed at thread exit */
  return t_sampling = s;
}

/* Reads STOMPWATCH_WATCH with the grammar `run` checked it with
 * (common/watch_spec.c). A bad value here means the job was started by
 * hand: say what is wrong and watch nothing from the CLI. */
static void parse_cli(void) {
  static int said;
  const char *s = getenv("STOMPWATCH_WATCH");
  if (!s || !*s) return;
  struct sw_watch_spec spec;
  if (sw_watch_spec_parse(s, strlen(s), &spec) != SW_SPEC_OK) {
    char msg[200];
    snprintf(msg, sizeof msg, "ignoring STOMPWATCH_WATCH: %s (form: [start[:outid]],end[,full-content])",
             sw_watch_spec_reason(spec.error));
    sw_warn_once(&said, msg);
    return;
  }
  /* The grammar caps names at SW_OP_NAME_MAX - 1 bytes: they fit. */
  memcpy(g_cli.start, s + spec.start_at, spec.start_len);
  g_cli.start[spec.start_len] = '\0';
  memcpy(g_cli.end, s + spec.end_at, spec.end_len);
  g_cli.end[spec.end_len] = '\0';
  g_cli.outid = spec.outid;
  g_cli.full = (int)spec.full_content;
  g_cli.has_start = spec.start_len != 0;
  g_cli.on = 1;
}

static struct local_watch *find_id(uint32_t id) {
  for (int i = 0; i < MAX_LOCAL; i++)
    if (g_w[i].state != W_FREE && g_w[i].id == id) return &g_w[i];
  return NULL;
}

static struct local_watch *new_slot(void) {
  static int said;
  for (int i = 0; i < MAX_LOCAL; i++)
    if (g_w[i].state == W_FREE) return &g_w[i];
  sw_warn_once(&said, "too many watches open at once; new ones are ignored until some close");
  return NULL;
}

static void recount(void) {
  int live = 0;
  for (int i = 0; i < MAX_LOCAL; i++) live += g_w[i].state == W_WAITING || g_w[i].state == W_OPEN;
  __atomic_store_n(&g_live, live, __ATOMIC_RELEASE);
}

/* Reads the daemon's table under its seqlock and merges it into ours:
 * new ids start, ids gone from the table were removed by the daemon. */
static void sync_table(struct sw_ring_header *hdr) {
  const struct sw_watch_entry *table = (const void *)((const uint8_t *)hdr + SW_TABLE_OFFSET);
  uint32_t seq, count;
  do {
    seq = __atomic_load_n(&hdr->table_seq, __ATOMIC_ACQUIRE);
    if (seq & 1) continue;
    count = __atomic_load_n(&hdr->table_count, __ATOMIC_RELAXED);
    if (count > SW_WATCH_MAX) count = SW_WATCH_MAX;
    memcpy(g_table_copy, table, count * sizeof *table);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
  } while ((seq & 1) || seq != __atomic_load_n(&hdr->table_seq, __ATOMIC_RELAXED));
  g_seen_seq = seq;

  for (int i = 0; i < MAX_LOCAL; i++) {
    struct local_watch *w = &g_w[i];
    if (w->state == W_FREE || (w->id & SW_CLI_WATCH_BIT)) continue;
    int present = 0;
    for (uint32_t k = 0; k < count && !present; k++) present = g_table_copy[k].id == w->id;
    if (!present) w->state = W_FREE;
  }
  for (uint32_t k = 0; k < count; k++) {
    const struct sw_watch_entry *e = &g_table_copy[k];
    if (e->id == 0 || find_id(e->id)) continue;
    struct local_watch *w = new_slot();
    if (!w) break;
    memset(w, 0, sizeof *w);
    w->id = e->id;
    w->flags = e->flags;
    w->addr = e->addr;
    w->len = e->len;
    w->dump_nums = e->dump_nums;
    memcpy(w->start_op, e->start_op, SW_OP_NAME_MAX);
    memcpy(w->end_op, e->end_op, SW_OP_NAME_MAX);
    w->start_op[SW_OP_NAME_MAX - 1] = w->end_op[SW_OP_NAME_MAX - 1] = '\0';
    w->state = w->start_op[0] ? W_WAITING : W_OPEN;
  }
  recount();
}

static void close_watch(struct local_watch *w) {
  w->state = (w->id & SW_CLI_WATCH_BIT) ? W_FREE : W_CLOSED;
  sw_emit(SW_REC_WATCH_CLOSED, 0, sw_current_device(), 0, w->addr, w->len, 0, w->id, NULL, NULL, 0);
}

/* Feeds the sample's hashers the block's bytes [off, off + n), held at
 * `bytes`; chunks come in order. The outside hasher takes those of them
 * that no extent of the op covers. */
static void hash_chunk(struct sampling *t, uint64_t off, const uint8_t *bytes, uint64_t n) {
  sw_hasher_update(&t->hasher, bytes, n);
  if (!t->outside_on) return;
  uint64_t at = off;
  const uint64_t end = off + n;
  for (int k = 0; k < t->n_cuts && at < end; k++) {
    const uint64_t from = t->cuts[k][0], to = t->cuts[k][1];
    if (from > at) sw_hasher_update(&t->outside, bytes + (at - off), (from < end ? from : end) - at);
    if (to > at) at = to;
  }
  if (at < end) sw_hasher_update(&t->outside, bytes + (at - off), end - at);
}

/* A staged copy's chunks: staging buffers for a checksum, DUMP_DATA
 * records for full content. */
struct staged_sample {
  struct sampling *t;
  const struct local_watch *w;
  uint64_t dump_seq;
};

/* The runtime's copies take small chunks (STAGING_BYTES), the copier's large ones. */
static uint64_t staging_bytes(const struct sw_real *real) {
  return sw_runtime_copies(real) ? STAGING_BYTES : COPIER_CHUNK_BYTES;
}

static int place_in_staging(void *ctx, struct sw_chunk *c) {
  struct staged_sample *s = ctx;
  const uint64_t bytes = staging_bytes(sw_real());
  c->dst = sw_stager_buffer(s->t->stager, (int)(c->off / bytes % (SW_STAGED_AHEAD + 1)), bytes);
  return c->dst == NULL;
}

static void hash_staging(void *ctx, const struct sw_chunk *c, aclError err) {
  (void)err;
  struct staged_sample *s = ctx;
  hash_chunk(s->t, c->off, c->dst, c->n);
}

static int place_in_record(void *ctx, struct sw_chunk *c) {
  (void)ctx;
  uint32_t size = (uint32_t)SW_ALIGN_RECORD(sizeof(struct sw_record) + c->n);
  struct sw_record *r = sw_reserve(size, &c->pos);
  if (!r) return 1;
  r->size = size;
  c->rec = r;
  c->dst = (uint8_t *)(r + 1);
  return 0;
}

static void fill_record(struct sw_record *r, const struct local_watch *w, uint64_t dump_seq, uint64_t off,
                        uint64_t n, aclError err) {
  r->type = SW_REC_DUMP_DATA;
  r->flags = 0;
  r->tid = sw_tid();
  r->ts_ns = 0;
  r->device = sw_current_device();
  r->result = err;
  r->addr = off;
  r->len = n;
  r->id = dump_seq;
  r->name_len = 0;
  r->aux = w->id;
}

static void commit_record(void *ctx, const struct sw_chunk *c, aclError err) {
  struct staged_sample *s = ctx;
  struct sw_record *r = c->rec;
  hash_chunk(s->t, c->off, c->dst, c->n);
  fill_record(r, s->w, s->dump_seq, c->off, c->n, err);
  sw_commit(r, c->pos);
}

/* The staged copy of a device block; SW_STAGED_SERIAL when it cannot be. */
static enum sw_staged staged_out(struct sampling *t, struct local_watch *w, int content, uint64_t chunk_max,
                                 uint64_t dump_seq) {
  if (!t->stager) t->stager = sw_stager_new();
  if (!t->stager) return SW_STAGED_SERIAL;
  struct staged_sample s = {t, w, dump_seq};
  const void *src = (const void *)(uintptr_t)w->addr;
  if (!content) {
    const uint64_t bytes = staging_bytes(sw_real());
    /* Every buffer exists before the first copy, or none is used. */
    if (!sw_stager_buffer(t->stager, 0, bytes)) return SW_STAGED_SERIAL;
    return sw_staged_copy(t->stager, src, w->len, bytes, SW_STAGED_AHEAD, place_in_staging, hash_staging, &s);
  }
  sw_stager_lock_ring();
  /* One ahead: a record placed holds the daemon's reading at it until it
   * is taken, and records are up to a quarter of the ring. */
  return sw_staged_copy(t->stager, src, w->len, chunk_max, 1, place_in_record, commit_record, &s);
}

/* Copies `len` bytes at device address `src` to the host and feeds the
 * hasher; with `content`, the bytes go straight into DUMP_DATA records.
 * 0, -1 when nothing can be reported (no memory, no daemon), -2 when some
 * copy failed. */
static int copy_out(const struct sw_real *real, struct sampling *t, struct local_watch *w, int content,
                    uint64_t dump_seq) {
  uint64_t cap = sw_producer_header()->capacity;
  uint64_t chunk_max = cap / 4 < SW_CHUNK_MAX ? cap / 4 : SW_CHUNK_MAX;
  const int host = (w->flags & SW_WATCH_HOST) != 0;
  if (!host) {
    enum sw_staged rc = staged_out(t, w, content, chunk_max, dump_seq);
    if (rc == SW_STAGED_OK) return 0;
    if (rc == SW_STAGED_FAILED) return -2;
    if (rc == SW_STAGED_STOPPED) return -1;
  }
  if (host && !content) { /* host memory is read where it lies: no copy */
    hash_chunk(t, 0, (const uint8_t *)(uintptr_t)w->addr, w->len);
    return 0;
  }
  if (!content) {
    const uint64_t want = staging_bytes(real);
    if (t->staging_len < want) {
      free(t->staging);
      t->staging = malloc(want);
      t->staging_len = t->staging ? want : 0;
    }
    if (!t->staging) return -1;
    chunk_max = want;
  }
  int failed = 0;
  for (uint64_t off = 0; off < w->len; off += chunk_max) {
    uint64_t n = w->len - off < chunk_max ? w->len - off : chunk_max;
    void *src = (void *)(uintptr_t)(w->addr + off);
    if (!content) {
      failed |= device_copy(real, t->staging, src, n) != ACL_SUCCESS;
      hash_chunk(t, off, t->staging, n);
      continue;
    }
    uint64_t pos;
    uint32_t size = (uint32_t)SW_ALIGN_RECORD(sizeof(struct sw_record) + n);
    struct sw_record *r = sw_reserve(size, &pos);
    if (!r) return -1;
    aclError err = ACL_SUCCESS;
    if (host) memcpy(r + 1, src, n);
    else err = device_copy(real, r + 1, src, n);
    failed |= err != ACL_SUCCESS;
    hash_chunk(t, off, (const uint8_t *)(r + 1), n);
    r->size = size;
    fill_record(r, w, dump_seq, off, n, err);
    sw_commit(r, pos);
  }
  return failed ? -2 : 0;
}

/* Plans the outside checksum of block w for the current framework op:
 * the extents it may write, cut to the block and sorted (they are few: a
 * sort by hand). Off, computing nothing, when no extent overlaps the block
 * or the extents cover it whole: the daemon's overlap test then says it
 * all. */
static void plan_outside(struct sampling *t, const struct local_watch *w, uint32_t algo) {
  const uint64_t lo = w->addr, hi = w->addr + w->len;
  int n = 0;
  t->outside_on = 0;
  for (int i = 0; i < t->n_allowed && n < SW_MAX_EXTENTS; i++) {
    uint64_t a = t->allowed[2 * i], b = a + t->allowed[2 * i + 1];
    if (b <= lo || a >= hi) continue;
    t->cuts[n][0] = (a < lo ? lo : a) - lo;
    t->cuts[n][1] = (b > hi ? hi : b) - lo;
    for (int k = n++; k > 0 && t->cuts[k][0] < t->cuts[k - 1][0]; k--) {
      uint64_t s0 = t->cuts[k][0], s1 = t->cuts[k][1];
      t->cuts[k][0] = t->cuts[k - 1][0], t->cuts[k][1] = t->cuts[k - 1][1];
      t->cuts[k - 1][0] = s0, t->cuts[k - 1][1] = s1;
    }
  }
  uint64_t covered = 0;
  for (int k = 0; k < n && t->cuts[k][0] <= covered; k++)
    if (t->cuts[k][1] > covered) covered = t->cuts[k][1];
  if (n == 0 || covered >= w->len) return;
  t->n_cuts = n;
  t->outside_on = 1;
  sw_hasher_reset(&t->outside, algo);
}

static void sample(struct sampling *t, struct local_watch *w, uint64_t op_seq, int after) {
  const struct sw_real *real = sw_real();
  const int host = (w->flags & SW_WATCH_HOST) != 0;
  /* The copier could not wait for the work before the sample (or finds no
   * watched storage there): its bytes cannot be trusted, the sample fails. */
  int begun = 1;
  sw_copier copier = NULL;
  if (!host) {
    const int runtime = sw_runtime_copies(real);
    copier = runtime ? NULL : sw_copier_get();
    if (!runtime && !copier) return;
    if (real->aclrtSynchronizeDevice) real->aclrtSynchronizeDevice();
    if (copier) begun = copier(SW_COPIER_BEGIN, 0, 0, w->addr, w->len) == 0;
  }
  int content = (w->flags & SW_WATCH_FULL_CONTENT) != 0;
  uint32_t algo = sw_producer_header()->checksum_algo;
  struct sw_dump_payload_outside payload = {
      {0, content ? __atomic_add_fetch(&g_dump_seq, 1, __ATOMIC_RELAXED) : 0}, 0};
  sw_hasher_reset(&t->hasher, algo);
  if (t->n_allowed > 0) plan_outside(t, w, algo); /* else off, as after every sample */
  int rc = begun ? copy_out(real, t, w, content, payload.dump.dump_seq) : -2;
  if (copier) copier(SW_COPIER_END, 0, 0, w->addr, w->len);
  const int outside = t->outside_on;
  t->outside_on = 0;
  if (rc == -1) return; /* daemon gone or no memory: nothing to report */
  payload.dump.checksum = sw_hasher_digest(&t->hasher);
  if (outside) payload.outside = sw_hasher_digest(&t->outside);
  uint16_t flags = (after ? SW_REC_FLAG_AFTER : 0) | (content ? SW_REC_FLAG_CONTENT : 0) |
                   (rc ? SW_REC_FLAG_FAILED : 0) | (outside ? SW_REC_FLAG_OUTSIDE : 0);
  sw_emit(SW_REC_DUMP, flags, sw_current_device(), (int32_t)w->outid, w->addr, w->len, op_seq, w->id, NULL,
          &payload, outside ? sizeof payload : sizeof payload.dump);
}

void sw_watch_allow(const uint64_t *extents, int n, int host) {
  struct sampling *t = thread_sampling();
  if (!t) return;
  t->allowed = extents;
  t->n_allowed = n;
  t->allowed_host = host;
}

static int may_watch(struct sw_ring_header *hdr) {
  return g_cli.on || __atomic_load_n(&g_live, __ATOMIC_ACQUIRE) ||
         __atomic_load_n(&hdr->table_seq, __ATOMIC_ACQUIRE) != __atomic_load_n(&g_seen_seq, __ATOMIC_RELAXED);
}

static void parse_cli_once(void) {
  parse_cli();
  __atomic_store_n(&g_cli_parsed, 1, __ATOMIC_RELEASE);
}

__attribute__((noinline)) static int may_sample_first(struct sw_ring_header *hdr) {
  pthread_once(&g_cli_once, parse_cli_once);
  return may_watch(hdr);
}

/* The op a `run --watch` window opens on, as the hook parsed
 * STOMPWATCH_WATCH; "" when none. The Python client keeps the storages that
 * op writes on a device, for its copier to find the window's block: one
 * grammar, this one. */
SW_EXPORT const char *stompwatch_cli_start(void) {
  pthread_once(&g_cli_once, parse_cli_once);
  return g_cli.on && g_cli.has_start ? g_cli.start : "";
}

/* Kept small, so that the op launch path gets it inlined. */
int sw_watch_may_sample(void) {
  struct sw_ring_header *hdr = sw_producer_header();
  if (!hdr) return 0;
  if (SW_UNLIKELY(!__atomic_load_n(&g_cli_parsed, __ATOMIC_ACQUIRE))) return may_sample_first(hdr);
  return may_watch(hdr);
}

void sw_watch_before_op(const char *op, uint64_t op_seq, const uint64_t *outputs, int n) {
  struct sampling *t = thread_sampling();
  struct sw_ring_header *hdr = sw_producer_header();
  if (!t || !hdr) return;
  t->n = 0;
  pthread_mutex_lock(&g_lock);
  if (__atomic_load_n(&hdr->table_seq, __ATOMIC_ACQUIRE) != g_seen_seq) sync_table(hdr);
  if (g_cli.has_start && op && strcmp(op, g_cli.start) == 0) {
    static int said;
    struct local_watch *w = (int)g_cli.outid < n ? new_slot() : NULL;
    if ((int)g_cli.outid >= n) sw_warn_once(&said, "the --watch start op has no output with that outid; no window opened");
    if (w) {
      memset(w, 0, sizeof *w);
      w->id = SW_CLI_WATCH_BIT | ++g_cli_windows;
      w->flags = (g_cli.full ? SW_WATCH_FULL_CONTENT : 0) | (t->n_allowed >= 0 && t->allowed_host ? SW_WATCH_HOST : 0);
      w->addr = outputs[2 * g_cli.outid];
      w->len = outputs[2 * g_cli.outid + 1];
      w->dump_nums = -1;
      w->outid = g_cli.outid;
      w->state = W_OPEN;
      snprintf(w->end_op, sizeof w->end_op, "%s", g_cli.end);
      sw_emit(SW_REC_WINDOW_OPEN, 0, sw_current_device(), (int32_t)w->outid, w->addr, w->len, op_seq, w->id, op,
              NULL, 0);
      recount();
    }
  }
  for (int i = 0; i < MAX_LOCAL; i++) {
    struct local_watch *w = &g_w[i];
    if (w->state == W_WAITING && op && strcmp(op, w->start_op) == 0) w->state = W_OPEN;
    if (w->state != W_OPEN || w->len == 0) continue;
    sample(t, w, op_seq, 0);
    t->id[t->n] = w->id;
    t->slot[t->n++] = i;
  }
  pthread_mutex_unlock(&g_lock);
}

void sw_watch_after_op(const char *op, uint64_t op_seq) {
  struct sampling *t = t_sampling;
  struct sw_ring_header *hdr = sw_producer_header();
  if (!t || !hdr || !may_watch(hdr)) return;
  pthread_mutex_lock(&g_lock);
  for (int k = 0; k < t->n; k++) {
    struct local_watch *w = &g_w[t->slot[k]];
    if (w->state != W_OPEN || w->id != t->id[k]) continue; /* removed meanwhile */
    sample(t, w, op_seq, 1);
    w->taken++;
    /* API watches with no end op of their own close at the CLI's end op
     * when the CLI gave no start: `--watch=,end` bounds them all. */
    const char *end = w->end_op[0] ? w->end_op : (g_cli.on && !g_cli.has_start ? g_cli.end : "");
    int ended = end[0] && op && strcmp(op, end) == 0;
    if (ended || (w->dump_nums >= 0 && w->taken >= w->dump_nums)) close_watch(w);
  }
  t->n = 0;
  recount();
  pthread_mutex_unlock(&g_lock);
}
