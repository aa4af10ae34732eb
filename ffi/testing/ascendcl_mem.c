/*
 * ascendcl_mem.c: device memory of the test device runtime. Each device is
 * one contiguous host mapping (the arena) carved first-fit in address order,
 * with the real allocator's rounding: aclrtMalloc gives round_up(size, 32)
 * plus 32 bytes of padding, so consecutive blocks are adjacent and an op that
 * writes past its output lands in the padding and then in the next block,
 * as it does on an NPU.
 *
 * Capacity per device: STOMPWATCH_TEST_DEVICE_BYTES (default 256 MiB).
 * Block records live outside the arena so they never shift addresses; one
 * mutex guards everything (this is test code, not the hook's hot path).
 * Host memory from aclrtMallocHost, or registered with aclrtHostRegister,
 * is "page-locked": the runtime keeps a list of those blocks, since
 * asynchronous copies are asynchronous only there (ascendcl_stream.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "acl/acl.h"
#include "ascendcl_internal.h"

#define ALIGN 32u
#define PADDING 32u
#define DEFAULT_CAPACITY (256u << 20)

struct block {
  size_t offset, size; /* size includes rounding and padding */
  bool used;
  struct block *prev, *next;
};

struct arena {
  char *base; /* NULL until the device's first allocation */
  size_t capacity, used;
  struct block *blocks; /* every byte of the arena, in address order */
};

static struct arena g_arenas[SWT_MAX_DEVICES];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t round_up(size_t n) { return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1); }

static size_t configured_capacity(void) {
  const char *text = getenv("STOMPWATCH_TEST_DEVICE_BYTES");
  if (text == NULL || text[0] == '\0') return DEFAULT_CAPACITY;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(text, &end, 10);
  size_t capacity = (size_t)n & ~(size_t)(ALIGN - 1);
  if (errno != 0 || *end != '\0' || text[0] == '-' || capacity == 0) {
    fprintf(stderr, "ascendcl(test): ignoring STOMPWATCH_TEST_DEVICE_BYTES=%s: not a byte count >= %u\n", text,
            ALIGN);
    return DEFAULT_CAPACITY;
  }
  return capacity;
}

/* Called with g_lock held. NORESERVE: an untouched arena costs no memory. */
static struct arena *arena_of_device(int32_t device) {
  struct arena *a = &g_arenas[device];
  if (a->base != NULL) return a;
  size_t capacity = configured_capacity();
  struct block *all = calloc(1, sizeof *all);
  void *base = mmap(NULL, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (all == NULL || base == MAP_FAILED) {
    fprintf(stderr, "ascendcl(test): cannot map %zu bytes for device %d\n", capacity, (int)device);
    free(all);
    if (base != MAP_FAILED) munmap(base, capacity);
    return NULL;
  }
  all->size = capacity;
  *a = (struct arena){.base = base, .capacity = capacity, .blocks = all};
  return a;
}

/* Called with g_lock held: the arena whose mapping holds [p, p + n), if any. */
static struct arena *arena_holding(const void *p, size_t n) {
  uintptr_t addr = (uintptr_t)p;
  for (int d = 0; d < SWT_MAX_DEVICES; d++) {
    struct arena *a = &g_arenas[d];
    uintptr_t base = (uintptr_t)a->base;
    if (a->base != NULL && addr >= base && addr - base <= a->capacity && n <= a->capacity - (addr - base))
      return a;
  }
  return NULL;
}

static void *arena_alloc(struct arena *a, size_t need) {
  for (struct block *b = a->blocks; b != NULL; b = b->next) {
    if (b->used || b->size < need) continue;
    if (b->size > need) {
      struct block *rest = malloc(sizeof *rest);
      if (rest == NULL) return NULL;
      *rest = (struct block){.offset = b->offset + need, .size = b->size - need, .prev = b, .next = b->next};
      if (b->next != NULL) b->next->prev = rest;
      b->next = rest;
      b->size = need;
    }
    b->used = true;
    a->used += need;
    return a->base + b->offset;
  }
  return NULL;
}

/* Merges b's successor into b. */
static void absorb_next(struct block *b) {
  struct block *n = b->next;
  b->size += n->size;
  b->next = n->next;
  if (n->next != NULL) n->next->prev = b;
  free(n);
}

static bool arena_free(struct arena *a, const void *p) {
  size_t offset = (size_t)((const char *)p - a->base);
  struct block *b = a->blocks;
  while (b != NULL && b->offset < offset) b = b->next;
  if (b == NULL || b->offset != offset || !b->used) return false;
  b->used = false;
  a->used -= b->size;
  if (b->next != NULL && !b->next->used) absorb_next(b);
  if (b->prev != NULL && !b->prev->used) absorb_next(b->prev);
  return true;
}

static aclError device_malloc(void **devPtr, size_t size, size_t padding) {
  if (devPtr == NULL) return ACL_ERROR_INVALID_PARAM;
  *devPtr = NULL;
  if (size == 0) return ACL_ERROR_INVALID_PARAM;
  if (size > SIZE_MAX / 2) return ACL_ERROR_RT_MEMORY_ALLOCATION;
  size_t need = round_up(size) + padding;
  pthread_mutex_lock(&g_lock);
  struct arena *a = arena_of_device(swt_current_device());
  void *p = a != NULL ? arena_alloc(a, need) : NULL;
  pthread_mutex_unlock(&g_lock);
  if (p == NULL) return ACL_ERROR_RT_MEMORY_ALLOCATION;
  *devPtr = p;
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy; /* one kind of memory here */
  return device_malloc(devPtr, size, PADDING);
}

aclError aclrtMallocCached(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  return device_malloc(devPtr, size, PADDING);
}

/* Every block is 32-byte aligned already (page-aligned arena, sizes in
 * multiples of 32): what sets Align32 apart is that it adds no padding. */
aclError aclrtMallocAlign32(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  return device_malloc(devPtr, size, 0);
}

aclError aclrtFree(void *devPtr) {
  if (devPtr == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&g_lock);
  struct arena *a = arena_holding(devPtr, 0);
  bool freed = a != NULL && arena_free(a, devPtr);
  pthread_mutex_unlock(&g_lock);
  return freed ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

/* Page-locked host blocks, newest first. */
struct host_block {
  const char *base;
  size_t size;
  bool registered; /* the caller's memory (aclrtHostRegister), not ours to free */
  struct host_block *next;
};
static struct host_block *g_host_blocks;

/* 64-byte aligned, as the runtime promises. */
aclError aclrtMallocHost(void **hostPtr, size_t size) {
  if (hostPtr == NULL || size == 0) return ACL_ERROR_INVALID_PARAM;
  *hostPtr = NULL;
  struct host_block *b = malloc(sizeof *b);
  void *p = NULL;
  if (b == NULL || posix_memalign(&p, 64, size) != 0) {
    free(b);
    return ACL_ERROR_BAD_ALLOC;
  }
  pthread_mutex_lock(&g_lock);
  *b = (struct host_block){.base = p, .size = size, .next = g_host_blocks};
  g_host_blocks = b;
  pthread_mutex_unlock(&g_lock);
  *hostPtr = p;
  return ACL_SUCCESS;
}

/* Takes the block starting at p, of the kind asked, off the list. */
static struct host_block *unlist_host(const void *p, bool registered) {
  pthread_mutex_lock(&g_lock);
  struct host_block **at = &g_host_blocks;
  while (*at != NULL && ((*at)->base != p || (*at)->registered != registered)) at = &(*at)->next;
  struct host_block *b = *at;
  if (b != NULL) *at = b->next;
  pthread_mutex_unlock(&g_lock);
  return b;
}

aclError aclrtFreeHost(void *hostPtr) {
  if (hostPtr == NULL) return ACL_ERROR_INVALID_PARAM;
  struct host_block *b = unlist_host(hostPtr, false);
  if (b == NULL) return ACL_ERROR_INVALID_PARAM; /* not from aclrtMallocHost */
  free(hostPtr);
  free(b);
  return ACL_SUCCESS;
}

/* Host and device share memory here: the device address is the host one. */
aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr) {
  if (ptr == NULL || size == 0 || devPtr == NULL || type != ACL_HOST_REGISTER_MAPPED) return ACL_ERROR_INVALID_PARAM;
  struct host_block *b = malloc(sizeof *b);
  if (b == NULL) return ACL_ERROR_BAD_ALLOC;
  pthread_mutex_lock(&g_lock);
  *b = (struct host_block){.base = ptr, .size = size, .registered = true, .next = g_host_blocks};
  g_host_blocks = b;
  pthread_mutex_unlock(&g_lock);
  *devPtr = ptr;
  return ACL_SUCCESS;
}

aclError aclrtHostUnregister(void *ptr) {
  struct host_block *b = ptr != NULL ? unlist_host(ptr, true) : NULL;
  if (b == NULL) return ACL_ERROR_INVALID_PARAM;
  free(b);
  return ACL_SUCCESS;
}

int swt_page_locked(const void *p, size_t n) {
  const char *at = p;
  int inside = 0;
  pthread_mutex_lock(&g_lock);
  for (struct host_block *b = g_host_blocks; b != NULL && !inside; b = b->next)
    inside = at >= b->base && (size_t)(at - b->base) <= b->size && n <= b->size - (size_t)(at - b->base);
  pthread_mutex_unlock(&g_lock);
  return inside;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeBytes, size_t *totalBytes) {
  (void)attr;
  if (freeBytes == NULL || totalBytes == NULL) return ACL_ERROR_INVALID_PARAM;
  pthread_mutex_lock(&g_lock);
  struct arena *a = arena_of_device(swt_current_device());
  if (a != NULL) *freeBytes = a->capacity - a->used, *totalBytes = a->capacity;
  pthread_mutex_unlock(&g_lock);
  return a != NULL ? ACL_SUCCESS : ACL_ERROR_RT_MEMORY_ALLOCATION;
}

/* Device-side pointers must lie inside some device's mapping (not
 * necessarily a live block: hardware does not check that either), so a host
 * pointer passed where a device one belongs fails as it would on an NPU. */
static bool on_device(const void *p, size_t n) {
  pthread_mutex_lock(&g_lock);
  bool inside = arena_holding(p, n) != NULL;
  pthread_mutex_unlock(&g_lock);
  return inside;
}

aclError swt_check_copy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
  if (dst == NULL || src == NULL || count > destMax) return ACL_ERROR_INVALID_PARAM;
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE) return ACL_ERROR_INVALID_PARAM;
  bool dst_device = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  bool src_device = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if ((dst_device && !on_device(dst, count)) || (src_device && !on_device(src, count)))
    return ACL_ERROR_INVALID_PARAM;
  return ACL_SUCCESS;
}

/* Synchronous, on the caller's thread, beside whatever the streams do. */
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind) {
  aclError err = swt_check_copy(dst, destMax, src, count, kind);
  if (err == ACL_SUCCESS) memmove(dst, src, count);
  return err;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
  if (devPtr == NULL || count > maxCount || !on_device(devPtr, count)) return ACL_ERROR_INVALID_PARAM;
  memset(devPtr, value, count);
  return ACL_SUCCESS;
}
