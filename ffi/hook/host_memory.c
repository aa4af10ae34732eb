/*
 * host_memory.c: CPU tensor storages recorded where they are allocated.
 *
 * PyTorch's CPU allocator (c10::alloc_cpu) takes each storage from
 * posix_memalign and gives it back with free. Only calls made from that
 * function are storages: the kernels' own libraries (oneDNN, MKL) take
 * caches and scratch from posix_memalign too, so the caller is told apart
 * by its return address. The Python client's dispatch mode names the Aten
 * op it is running in one word of this library (stompwatch_host_op, written
 * through a memoryview: a store, not a call); while that word is set and
 * recording is on, a storage allocated is a MALLOC row (pool HOST) carrying
 * the op's name, and its free is its FREE row. The word holds the op's name
 * id in its low 16 bits and a count of ops above them, so that each call of
 * an op is told apart from the next call of the same op. Doing this here
 * rather than per op in Python (a storage, a weak reference and a finalizer
 * each) keeps recording within a few hundred ns of an empty dispatch mode.
 *
 * A block an op allocates and frees before it returns (a scalar wrapped in
 * a tensor, a kernel's scratch) is not a storage the op created: it makes no
 * row. So a block's MALLOC row waits in a short pending list until the op
 * that made it is seen to be over: at the next recorded allocation or free
 * made under another word, or before any other record this process writes
 * (emit_record flushes the list first, so marks and watches keep their
 * place after the rows). A pending block freed while its op's word is still
 * set is dropped without a row. FREE rows wait in the same list, behind the
 * rows before them, and the list is written when full. Rows keep the time
 * and thread of the event, and are written under sw_host_lock, so that a
 * FREE row never overtakes its block's MALLOC row from another thread.
 *
 * The live blocks are in host_blocks.c's table. A watch reads a CPU block in
 * place, so a watched block is pinned: freed by the job, it gets its FREE row
 * but stays mapped until the watch lets go.
 *
 * The real posix_memalign and free are the next ones in the lookup order
 * (a jemalloc or tcmalloc preloaded after us is honoured), looked up by the
 * first call that needs them. A free reached while they are being looked
 * up (dlsym may free) cannot be passed on: that block leaks.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hook_internal.h"

/* The op the Python client is running (see the top); 0 outside ops. */
SW_EXPORT uint64_t stompwatch_host_op;
SW_EXPORT uint32_t stompwatch_host_pending __attribute__((aligned(64)));

#define OP_NAMES_MAX 65536u
#define OP_NAME_ID(word) ((word) & (OP_NAMES_MAX - 1))
static const char *g_op_names[OP_NAMES_MAX];

/* The code of c10::alloc_cpu: posix_memalign calls returning into it are
 * storages. Found when the client asks (torch is loaded by then). */
static uintptr_t g_storage_lo, g_storage_hi;

static int (*g_real_memalign)(void **, size_t, size_t);
static void (*g_real_free)(void *);
static int g_recording;
/* Teardown: frees are no longer rows (the Python client's rule at exit). */
static int g_closing;

/* Rows not written yet: MALLOC rows whose op may still free the block,
 * and the FREE rows behind them, written in bursts (a record at a time
 * would have the daemon's reads of the ring bounce the job's cache lines
 * once per row). */
struct pending {
  uint64_t addr, size, ts_ns, op;
  uint32_t tid;
  uint16_t type; /* SW_REC_ALLOC or SW_REC_FREE */
};
#define PENDING_MAX 64
static struct pending g_pending[PENDING_MAX];

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

static int from_storage_allocator(uintptr_t from) { return from - g_storage_lo < g_storage_hi - g_storage_lo; }

static const char *op_name(uint64_t op) {
  return __atomic_load_n(&g_op_names[OP_NAME_ID(op)], __ATOMIC_ACQUIRE);
}

/* ---- pending rows: all under sw_host_lock ---- */

/* Writes the pending rows of ops other than the running one (`op`; 0:
 * every row), the oldest ones. The running op's rows are the newest: an
 * allocation under another word writes the older ones first. The records
 * they make must not flush the list again (emit_record would, finding rows
 * still pending): the thread says it is writing them. */
static void write_finished(uint64_t op) {
  uint32_t k = stompwatch_host_pending, n = 0;
  while (n < k && (!op || g_pending[n].op != op)) n++;
  if (!n) return;
  sw_self.writing_host_rows = 1;
  for (uint32_t i = 0; i < n; i++) {
    const struct pending *r = &g_pending[i];
    sw_emit_for(r->tid, r->ts_ns, r->type, -1, r->addr, r->size, SW_POOL_HOST,
                r->type == SW_REC_ALLOC ? op_name(r->op) : NULL);
  }
  sw_self.writing_host_rows = 0;
  memmove(g_pending, g_pending + n, (k - n) * sizeof g_pending[0]);
  __atomic_store_n(&stompwatch_host_pending, k - n, __ATOMIC_RELAXED);
}

/* Appends a row to the pending list, which has room. */
static void hold(const struct pending *row) {
  g_pending[stompwatch_host_pending] = *row;
  __atomic_store_n(&stompwatch_host_pending, stompwatch_host_pending + 1, __ATOMIC_RELAXED);
}

/* Drops pending row i: its block was given back by the op that made it. */
static void drop_pending(uint32_t i) {
  uint32_t k = stompwatch_host_pending;
  memmove(&g_pending[i], &g_pending[i + 1], (k - i - 1) * sizeof g_pending[0]);
  __atomic_store_n(&stompwatch_host_pending, k - 1, __ATOMIC_RELAXED);
}

void sw_host_flush(void) {
  if (sw_self.writing_host_rows || !__atomic_load_n(&stompwatch_host_pending, __ATOMIC_RELAXED)) return;
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  /* Unlocked look first: while an op runs, its own rows stay (a stale
   * read only delays a flush to the next record). */
  if (op && __atomic_load_n(&g_pending[0].op, __ATOMIC_RELAXED) == op) return;
  pthread_mutex_lock(&sw_host_lock);
  write_finished(op);
  pthread_mutex_unlock(&sw_host_lock);
}

static void record_alloc(void *p, size_t size, uint64_t op) {
  uint64_t ts = sw_event_ns();
  uint32_t tid = sw_tid();
  pthread_mutex_lock(&sw_host_lock);
  int added = sw_host_blocks_add((uint64_t)p, size) != NULL;
  if (added) {
    if (stompwatch_host_pending == PENDING_MAX) write_finished(0);
    hold(&(struct pending){(uint64_t)p, size, ts, op, tid, SW_REC_ALLOC});
  }
  pthread_mutex_unlock(&sw_host_lock);
  if (!added) {
    static int said;
    sw_warn_once(&said, "cannot map the table of recorded CPU storages; later ones are not recorded");
  }
}

/* A recorded block is freed: its FREE row, unless its op is still running
 * (then it never had a row). Returns whether the memory may go back to the
 * allocator now (not while a watch pins it). */
static int record_free(void *p) {
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  int give_back = 1;
  pthread_mutex_lock(&sw_host_lock);
  struct sw_host_block *b = sw_host_blocks_find((uint64_t)p);
  if (b && b->freed) {
    give_back = 0; /* freed twice while pinned: the pin still holds it */
  } else if (b) {
    /* The newest row of this address: an earlier block there may have
     * rows in the list too. */
    uint32_t i = stompwatch_host_pending;
    while (i && g_pending[i - 1].addr != (uint64_t)p) i--;
    if (i && g_pending[i - 1].type == SW_REC_ALLOC && op && g_pending[i - 1].op == op) {
      drop_pending(i - 1); /* made and given back by the running op: never a storage */
    } else if (!__atomic_load_n(&g_closing, __ATOMIC_RELAXED)) {
      /* Behind every row held: they are all older. */
      if (stompwatch_host_pending == PENDING_MAX) write_finished(0);
      hold(&(struct pending){(uint64_t)p, 0, sw_event_ns(), op, sw_tid(), SW_REC_FREE});
    }
    if (b->pins) {
      b->freed = 1;
      give_back = 0;
    } else {
      sw_host_blocks_remove(b);
    }
  }
  pthread_mutex_unlock(&sw_host_lock);
  return give_back;
}

/* PyTorch could not have a CPU storage of `size` bytes while the client
 * had told the hook its op (else the client reports it, see _oom.py): a
 * failed ALLOC record (the daemon's OOM snapshot, when the job asked for
 * one), with what memory the machine had left. */
static void storage_failed(size_t size, uint64_t op) {
  /* The rows before the failure, the running op's too, go first: the
   * snapshot is of the memory at the failure. */
  pthread_mutex_lock(&sw_host_lock);
  write_finished(0);
  pthread_mutex_unlock(&sw_host_lock);
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t left = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
  sw_emit(SW_REC_ALLOC, SW_REC_FLAG_FAILED, -1, ACL_ERROR_RT_MEMORY_ALLOCATION, left, size, 0, SW_POOL_HOST,
          op_name(op), NULL, 0);
}

/* ---- the interposers ---- */

SW_EXPORT int posix_memalign(void **out, size_t alignment, size_t size) {
  int (*real)(void **, size_t, size_t) = __atomic_load_n(&g_real_memalign, __ATOMIC_ACQUIRE);
  if (SW_UNLIKELY(!real)) {
    resolve();
    real = __atomic_load_n(&g_real_memalign, __ATOMIC_ACQUIRE);
    if (!real) return ENOMEM;
  }
  int r = real(out, alignment, size);
  uint64_t op = __atomic_load_n(&stompwatch_host_op, __ATOMIC_RELAXED);
  if (SW_UNLIKELY(op) && __atomic_load_n(&g_recording, __ATOMIC_RELAXED) &&
      from_storage_allocator((uintptr_t)__builtin_return_address(0))) {
    if (r == 0 && size) record_alloc(*out, size, op);
    else if (r != 0) storage_failed(size, op);
  }
  return r;
}

SW_EXPORT void free(void *p) {
  if (SW_UNLIKELY(__atomic_load_n(&sw_host_live, __ATOMIC_RELAXED)) && sw_host_blocks_may_hold((uint64_t)p) &&
      !record_free(p))
    return; /* pinned by a watch: given back when the watch lets go */
  void (*real)(void *) = __atomic_load_n(&g_real_free, __ATOMIC_ACQUIRE);
  if (SW_UNLIKELY(!real)) {
    resolve();
    real = __atomic_load_n(&g_real_free, __ATOMIC_ACQUIRE);
    if (!real) return; /* freed while the real free is being looked up: see the top */
  }
  real(p);
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

/* Whether `name` as the process calls it is defined in this library. Our
 * own address of it cannot tell: the compiler reads it through the GOT,
 * which holds whatever the process resolved (libc's, when the hook was
 * loaded late). */
static int ours(const char *name) {
  Dl_info mine, theirs;
  void *fn = dlsym(RTLD_DEFAULT, name);
  return fn && dladdr((void *)resolve, &mine) && dladdr(fn, &theirs) && mine.dli_fbase == theirs.dli_fbase;
}

/* Whether this library can record the process's CPU storages: its
 * posix_memalign and free are the ones the process calls (it was
 * preloaded, ahead of any other allocator) and PyTorch's CPU allocator is
 * loaded. Call once torch is imported. */
SW_EXPORT int stompwatch_host_intercepting(void) {
  if (!g_real_memalign || !g_real_free) resolve();
  return ours("posix_memalign") && ours("free") && g_real_memalign && g_real_free && find_storage_allocator();
}

/* Names op id `id` (1 .. 65535) for the MALLOC rows made while the low
 * 16 bits of stompwatch_host_op hold it. Returns 0, or -1 for an id out of
 * range. */
SW_EXPORT int stompwatch_host_op_name(uint32_t id, const char *name) {
  if (id == 0 || id >= OP_NAMES_MAX || !name) return -1;
  char *copy = strdup(name);
  if (!copy) return -1;
  /* The old copy is not freed: a MALLOC row may be reading it. An id is
   * named again only when recording restarts. */
  __atomic_store_n(&g_op_names[id], copy, __ATOMIC_RELEASE);
  return 0;
}

/* Recording on or off; blocks recorded stay tracked until freed either way,
 * so their FREE rows are exact. `closing`: the interpreter is tearing down,
 * frees are no longer rows. */
SW_EXPORT void stompwatch_host_recording(int on, int closing) {
  __atomic_store_n(&g_recording, on, __ATOMIC_RELAXED);
  __atomic_store_n(&g_closing, closing, __ATOMIC_RELAXED);
}

/* Writes the MALLOC rows of ops that are over now, for a framework about
 * to ask the daemon about them (a watch on a new tensor). */
SW_EXPORT void stompwatch_host_flush(void) { sw_host_flush(); }

/* Whether a live block it recorded starts at addr. */
SW_EXPORT int stompwatch_host_recorded(uint64_t addr) {
  pthread_mutex_lock(&sw_host_lock);
  struct sw_host_block *b = sw_host_blocks_find(addr);
  int live = b && !b->freed;
  pthread_mutex_unlock(&sw_host_lock);
  return live;
}

/* The recorded live block that holds [addr, addr + len): its start and
 * size through the pointers, and 1; or 0. With `pin`, the block is also
 * pinned (see the top) until stompwatch_host_unpin. A scan: for
 * describer(addr) and watch(addr), never per op. */
SW_EXPORT int stompwatch_host_block(uint64_t addr, uint64_t len, int pin, uint64_t *start, uint64_t *size) {
  pthread_mutex_lock(&sw_host_lock);
  struct sw_host_block *b = sw_host_blocks_holding(addr, len);
  if (b) {
    *start = b->addr;
    *size = b->size;
    if (pin) b->pins++;
  }
  pthread_mutex_unlock(&sw_host_lock);
  return b != NULL;
}

/* Lets go of a pin on the block at `start`; a block the job freed while it
 * was pinned goes back to the allocator with the last pin. */
SW_EXPORT void stompwatch_host_unpin(uint64_t start) {
  int give_back = 0;
  pthread_mutex_lock(&sw_host_lock);
  struct sw_host_block *b = sw_host_blocks_find(start);
  if (b && b->pins && !--b->pins && b->freed) {
    sw_host_blocks_remove(b);
    give_back = 1;
  }
  pthread_mutex_unlock(&sw_host_lock);
  if (give_back && g_real_free) g_real_free((void *)start);
}

/* A forked child has none of its parent's blocks, rows or ring. */
static void before_fork(void) { pthread_mutex_lock(&sw_host_lock); }
static void after_fork_in_parent(void) { pthread_mutex_unlock(&sw_host_lock); }
static void after_fork_in_child(void) {
  pthread_mutex_init(&sw_host_lock, NULL);
  sw_host_blocks_forget();
  __atomic_store_n(&stompwatch_host_pending, 0, __ATOMIC_RELAXED);
  stompwatch_host_op = 0;
}

__attribute__((constructor)) static void at_load(void) {
  resolve();
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
}
