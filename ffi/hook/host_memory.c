/*
 * host_memory.c: CPU tensor storages recorded where they are allocated.
 *
 * PyTorch's CPU allocator (c10::alloc_cpu) takes each storage from
 * posix_memalign and gives it back with free. Only calls made from that
 * function are storages: the kernels' own libraries (oneDNN, MKL) take
 * caches and scratch from posix_memalign too, so the caller is told apart
 * by its return address. The Python client's dispatch mode names the Aten op it
 * is running in one word of this library (stompwatch_host_op, written from
 * Python through a memoryview: a store, not a call); while that word is set
 * and recording is on, every posix_memalign that succeeds is a MALLOC row
 * (pool HOST) carrying the op's name, and the block's free is its FREE row.
 * Doing this here rather than per op in Python (a storage, a weak reference
 * and a finalizer each) is what keeps recording within a few hundred ns of
 * an empty dispatch mode.
 *
 * Only blocks allocated while the word was set are recorded, so the job's
 * other allocations cost a load and a compare. The word holds the op's name
 * id in its low 16 bits and a count of ops above them, so that each call of
 * an op is told apart from the next call of the same op.
 *
 * A block an op allocates and frees before it returns (a scalar wrapped in
 * a tensor, a kernel's scratch) is not a storage the op created: it makes no
 * row. So a block's MALLOC row waits in a short pending list until the op
 * that made it is seen to be over: at the next recorded allocation or free
 * made under another word, or before any other record this process writes
 * (emit_record flushes the list first, so marks and watches keep their
 * place after the rows). A pending block freed while its op's word is still
 * set is dropped without a row. Rows keep the time of the allocation.
 *
 * free() checks a table of the live recorded blocks: open addressing, read
 * without a lock (a free of a block not in it, the common case, probes a
 * slot or two and leaves), written under a mutex. A table that grows is
 * replaced and the old one kept (never unmapped), so a reader still probing
 * it stays in mapped memory. The tables come from mmap: taking them from
 * malloc would free through ourselves.
 *
 * The real posix_memalign and free are the next ones in the lookup order
 * (a jemalloc or tcmalloc preloaded after us is honoured). A free reached
 * while they are being looked up cannot be passed on: it leaks that block,
 * once, at start-up.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hook_internal.h"

/* The op the Python client is running: a name id from
 * stompwatch_host_op_name in the low 16 bits, a count of ops above; 0
 * outside ops. */
SW_EXPORT uint64_t stompwatch_host_op;

#define OP_NAMES_MAX 65536u
#define OP_NAME_ID(word) ((word) & (OP_NAMES_MAX - 1))
static const char *g_op_names[OP_NAMES_MAX];

/* The code of c10::alloc_cpu: posix_memalign calls returning into it are
 * storages. Found when recording starts (torch is loaded by then). */
static uintptr_t g_storage_lo, g_storage_hi;

static int (*g_real_memalign)(void **, size_t, size_t);
static void (*g_real_free)(void *);
static int g_recording;
/* Teardown: frees are no longer rows (the Python client's rule at exit). */
static int g_closing;

struct block {
  uint64_t addr; /* 0: empty, 1: removed */
  uint64_t size;
};
struct table {
  uint64_t mask;
  uint64_t used; /* live + removed slots */
  uint64_t live;
  struct block slots[];
};
#define REMOVED 1u

static struct table *g_table; /* read without the lock (acquire) */
static uint64_t g_live;       /* blocks recorded and not freed: free()'s first test */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* MALLOC rows not written yet: their op may still free the block. */
struct pending {
  uint64_t addr, size, ts_ns, op;
};
#define PENDING_MAX 64
static struct pending g_pending[PENDING_MAX];
/* Read unlocked by emit_record (sw_host_pending) to decide whether to flush. */
uint32_t sw_host_pending_count;

static void resolve(void) {
  static __thread int resolving;
  if (resolving) return;
  resolving = 1;
  void *m = dlsym(RTLD_NEXT, "posix_memalign");
  void *f = dlsym(RTLD_NEXT, "free");
  __atomic_store_n((void **)&g_real_memalign, m, __ATOMIC_RELEASE);
  __atomic_store_n((void **)&g_real_free, f, __ATOMIC_RELEASE);
  resolving = 0;
}

__attribute__((constructor)) static void resolve_at_load(void) { resolve(); }

static uint64_t slot_of(uint64_t addr, uint64_t mask) {
  /* Allocator blocks are 16-byte aligned or more: mix before masking. */
  return ((addr >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

static struct table *table_new(uint64_t slots) {
  size_t bytes = sizeof(struct table) + slots * sizeof(struct block);
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  struct table *t = p;
  t->mask = slots - 1;
  return t;
}

static void put(struct table *t, uint64_t addr, uint64_t size) {
  uint64_t i = slot_of(addr, t->mask);
  while (t->slots[i].addr > REMOVED) i = (i + 1) & t->mask;
  if (t->slots[i].addr == 0) t->used++;
  t->slots[i].size = size;
  __atomic_store_n(&t->slots[i].addr, addr, __ATOMIC_RELEASE);
  t->live++;
}

/* Under g_lock: room for one more block, or 0 when none can be had. */
static int make_room(void) {
  struct table *t = g_table;
  if (t && (t->used + 1) * 2 <= t->mask + 1) return 1;
  uint64_t slots = 1024;
  while (t && slots < (t->live + 1) * 4) slots *= 2;
  struct table *grown = table_new(slots);
  if (!grown) return 0;
  if (t)
    for (uint64_t i = 0; i <= t->mask; i++)
      if (t->slots[i].addr > REMOVED) put(grown, t->slots[i].addr, t->slots[i].size);
  /* The old table stays mapped: a free may still be probing it. */
  __atomic_store_n(&g_table, grown, __ATOMIC_RELEASE);
  return 1;
}

/* The slot holding addr in t, or NULL. */
static struct block *find(struct table *t, uint64_t addr) {
  if (!t) return NULL;
  for (uint64_t i = slot_of(addr, t->mask);; i = (i + 1) & t->mask) {
    uint64_t a = __atomic_load_n(&t->slots[i].addr, __ATOMIC_ACQUIRE);
    if (a == addr) return &t->slots[i];
    if (a == 0) return NULL;
  }
}

/* Under g_lock: moves the pending rows of ops other than the running one
 * (`op`; 0: every row), the oldest ones, to `out` (room for PENDING_MAX)
 * and returns how many. The running op's rows are the newest: an
 * allocation under another word takes the older ones out first. */
static uint32_t take_finished(struct pending *out, uint64_t op) {
  uint32_t k = sw_host_pending_count, n = 0;
  while (n < k && (!op || g_pending[n].op != op)) n++;
  memcpy(out, g_pending, n * sizeof *out);
  memmove(g_pending, g_pending + n, (k - n) * sizeof *out);
  __atomic_store_n(&sw_host_pending_count, k - n, __ATOMIC_RELAXED);
  return n;
}

/* Writes taken rows. The records they make must not flush the list again
 * (emit_record would, finding rows still pending): the thread says it is
 * writing them. */
static void write_rows(const struct pending *rows, uint32_t n) {
  sw_self.writing_host_rows = 1;
  for (uint32_t i = 0; i < n; i++) {
    const char *name = __atomic_load_n(&g_op_names[OP_NAME_ID(rows[i].op)], __ATOMIC_ACQUIRE);
    sw_emit_at(rows[i].ts_ns, SW_REC_ALLOC, 0, -1, 0, rows[i].addr, rows[i].size, 0, SW_POOL_HOST, name, NULL, 0);
  }
  sw_self.writing_host_rows = 0;
}

void sw_host_flush(void) {
  if (sw_self.writing_host_rows) return;
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  /* Unlocked look first: while an op runs, its own rows stay (a stale
   * read only delays a flush to the next record). */
  if (op && __atomic_load_n(&g_pending[0].op, __ATOMIC_RELAXED) == op) return;
  struct pending rows[PENDING_MAX];
  pthread_mutex_lock(&g_lock);
  uint32_t n = take_finished(rows, op);
  pthread_mutex_unlock(&g_lock);
  write_rows(rows, n);
}

static void record_alloc(void *p, size_t size, uint64_t op) {
  struct pending rows[PENDING_MAX];
  uint32_t n = 0;
  uint64_t ts = sw_event_ns();
  pthread_mutex_lock(&g_lock);
  int room = make_room();
  if (room) {
    put(g_table, (uint64_t)p, size);
    __atomic_store_n(&g_live, g_table->live, __ATOMIC_RELEASE);
    n = take_finished(rows, sw_host_pending_count == PENDING_MAX ? 0 : op);
    uint32_t k = sw_host_pending_count;
    g_pending[k] = (struct pending){(uint64_t)p, size, ts, op};
    __atomic_store_n(&sw_host_pending_count, k + 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&g_lock);
  write_rows(rows, n);
  if (!room) {
    static int said;
    sw_warn_once(&said, "cannot map the table of recorded CPU storages; later ones are not recorded");
  }
}

/* PyTorch could not have a CPU storage of `size` bytes: a failed ALLOC
 * record (an OOM snapshot, when the job asked for one), with what memory
 * the machine had left. */
static void storage_failed(size_t size, uint64_t op) {
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t left = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  const char *name = op ? __atomic_load_n(&g_op_names[OP_NAME_ID(op)], __ATOMIC_ACQUIRE) : NULL;
  sw_emit(SW_REC_ALLOC, SW_REC_FLAG_FAILED, -1, ACL_ERROR_RT_MEMORY_ALLOCATION, left, size, 0, SW_POOL_HOST, name,
          NULL, 0);
}

/* The block freed was recorded: forget it and say so, unless its op is
 * still running (then it never had a row). */
static void record_free(void *p) {
  struct pending rows[PENDING_MAX];
  uint32_t n = 0;
  int row = 0;
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  pthread_mutex_lock(&g_lock);
  struct block *b = find(g_table, (uint64_t)p);
  if (b) {
    __atomic_store_n(&b->addr, REMOVED, __ATOMIC_RELEASE);
    g_table->live--;
    __atomic_store_n(&g_live, g_table->live, __ATOMIC_RELEASE);
    row = 1;
    uint32_t k = sw_host_pending_count, i = 0;
    while (i < k && g_pending[i].addr != (uint64_t)p) i++;
    if (i < k && op && g_pending[i].op == op) {
      /* Made and given back by the running op: never a storage. */
      memmove(&g_pending[i], &g_pending[i + 1], (k - i - 1) * sizeof g_pending[0]);
      __atomic_store_n(&sw_host_pending_count, k - 1, __ATOMIC_RELAXED);
      row = 0;
    } else {
      /* Every row held back is older than this FREE: they go first. */
      n = take_finished(rows, 0);
    }
  }
  pthread_mutex_unlock(&g_lock);
  write_rows(rows, n);
  if (row && !__atomic_load_n(&g_closing, __ATOMIC_RELAXED))
    sw_emit(SW_REC_FREE, 0, -1, 0, (uint64_t)p, 0, 0, SW_POOL_HOST, NULL, NULL, 0);
}

SW_EXPORT int posix_memalign(void **out, size_t alignment, size_t size) {
  int (*real)(void **, size_t, size_t) = __atomic_load_n(&g_real_memalign, __ATOMIC_ACQUIRE);
  if (SW_UNLIKELY(!real)) {
    resolve();
    real = __atomic_load_n(&g_real_memalign, __ATOMIC_ACQUIRE);
    if (!real) return ENOMEM;
  }
  int r = real(out, alignment, size);
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  if (SW_UNLIKELY(op) && r == 0 && size && __atomic_load_n(&g_recording, __ATOMIC_RELAXED)) {
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    if (from - g_storage_lo < g_storage_hi - g_storage_lo) record_alloc(*out, size, op);
  } else if (SW_UNLIKELY(r != 0)) {
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    if (from - g_storage_lo < g_storage_hi - g_storage_lo) storage_failed(size, op);
  }
  return r;
}

SW_EXPORT void free(void *p) {
  if (SW_UNLIKELY(__atomic_load_n(&g_live, __ATOMIC_RELAXED)) && p &&
      find(__atomic_load_n(&g_table, __ATOMIC_ACQUIRE), (uint64_t)p))
    record_free(p);
  void (*real)(void *) = __atomic_load_n(&g_real_free, __ATOMIC_ACQUIRE);
  if (SW_LIKELY(real)) real(p);
  /* else: called while the real free is being looked up; see the top. */
}

/* ---- the API the Python client calls (ctypes) ---- */

static int find_libc10(struct dl_phdr_info *info, size_t size, void *path) {
  (void)size;
  const char *name = info->dlpi_name, *base = strrchr(name, '/');
  if (strcmp(base ? base + 1 : name, "libc10.so") != 0) return 0;
  *(const char **)path = name;
  return 1;
}

/* Finds c10::alloc_cpu's code in the loaded libc10.so; 0 when not loaded. */
static int find_storage_allocator(void) {
  if (g_storage_hi) return 1;
  const char *path = NULL;
  dl_iterate_phdr(find_libc10, &path);
  void *lib = path ? dlopen(path, RTLD_NOLOAD | RTLD_LAZY) : NULL;
  if (!lib) return 0;
  void *fn = dlsym(lib, "_ZN3c109alloc_cpuEm");
  Dl_info info;
  const ElfW(Sym) *sym = NULL;
  int found = fn && dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size;
  if (found) {
    g_storage_lo = (uintptr_t)fn;
    __atomic_store_n(&g_storage_hi, (uintptr_t)fn + sym->st_size, __ATOMIC_RELEASE);
  }
  dlclose(lib);
  return found;
}

/* Whether this library can record the process's CPU storages: its
 * posix_memalign and free are the ones the process calls (it was
 * preloaded, ahead of any other allocator) and PyTorch's CPU allocator is
 * loaded. Call once torch is imported. */
SW_EXPORT int stompwatch_host_intercepting(void) {
  return dlsym(RTLD_DEFAULT, "posix_memalign") == (void *)posix_memalign &&
         dlsym(RTLD_DEFAULT, "free") == (void *)free && g_real_memalign && g_real_free && find_storage_allocator();
}

/* Names op id `id` (1 .. 65535) for the MALLOC rows made while the low
 * 16 bits of stompwatch_host_op hold it. Returns 0, or -1 for an id out of range. */
SW_EXPORT int stompwatch_host_op_name(uint32_t id, const char *name) {
  if (id == 0 || id >= OP_NAMES_MAX || !name) return -1;
  char *copy = strdup(name);
  if (!copy) return -1;
  const char *old = __atomic_exchange_n(&g_op_names[id], copy, __ATOMIC_ACQ_REL);
  (void)old; /* a MALLOC row may be reading it: an id is named once in practice */
  return 0;
}

/* Writes the MALLOC rows of ops that are over now, for a framework about
 * to ask the daemon about them (a watch on a new tensor). */
SW_EXPORT void stompwatch_host_flush(void) { sw_host_flush(); }

/* Recording on or off; blocks recorded stay tracked until freed either way,
 * so their FREE rows are exact. `closing`: the interpreter is tearing down,
 * frees are no longer rows. */
SW_EXPORT void stompwatch_host_recording(int on, int closing) {
  __atomic_store_n(&g_recording, on, __ATOMIC_RELAXED);
  __atomic_store_n(&g_closing, closing, __ATOMIC_RELAXED);
}

/* Whether a live block it recorded starts at addr (one probe, no lock). */
SW_EXPORT int stompwatch_host_recorded(uint64_t addr) {
  return addr > REMOVED && find(__atomic_load_n(&g_table, __ATOMIC_ACQUIRE), addr) != NULL;
}

/* The recorded live block that holds [addr, addr + len): its start and
 * size through the pointers, 1; or 0. A scan: for describer(addr) and
 * watch(addr), never per op. */
SW_EXPORT int stompwatch_host_block(uint64_t addr, uint64_t len, uint64_t *start, uint64_t *size) {
  int found = 0;
  pthread_mutex_lock(&g_lock);
  struct table *t = g_table;
  for (uint64_t i = 0; t && i <= t->mask && !found; i++) {
    struct block *b = &t->slots[i];
    if (b->addr > REMOVED && b->addr <= addr && addr + len <= b->addr + b->size) {
      *start = b->addr;
      *size = b->size;
      found = 1;
    }
  }
  pthread_mutex_unlock(&g_lock);
  return found;
}

/* A forked child has none of its parent's blocks (nor its ring). */
static void before_fork(void) { pthread_mutex_lock(&g_lock); }
static void after_fork_in_parent(void) { pthread_mutex_unlock(&g_lock); }
static void after_fork_in_child(void) {
  pthread_mutex_init(&g_lock, NULL);
  __atomic_store_n(&g_live, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&g_table, NULL, __ATOMIC_RELEASE);
  __atomic_store_n(&sw_host_pending_count, 0, __ATOMIC_RELAXED);
  stompwatch_host_op = 0;
}

__attribute__((constructor)) static void register_fork_handlers(void) {
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
