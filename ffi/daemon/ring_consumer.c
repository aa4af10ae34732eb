/*
 * ring_consumer.c: the daemon's side of the ring, called through Deno FFI
 * (ffi/bindings.ts). The daemon maps a ring, reads records in place, and
 * calls back here only for what needs ordering guarantees: advancing the
 * tail, the heartbeat, and publishing the watch table under its seqlock.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stompwatch_ring.h"
#include "sw_common.h"

/* Maps a ring file; returns its base, or NULL if it is not a ring of ours.
 * Its size goes to *size_out. */
SW_EXPORT void *stompwatch_ring_attach(const char *path, uint64_t *size_out) {
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  void *base = MAP_FAILED;
  /* Populated now: otherwise the daemon takes a page fault per page of the
   * ring's first lap, while the job is running. */
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= SW_DATA_OFFSET)
    base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return NULL;
  struct sw_ring_header *h = base;
  if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SW_RING_MAGIC || h->version != SW_RING_VERSION ||
      SW_DATA_OFFSET + h->capacity != (uint64_t)st.st_size) {
    munmap(base, (size_t)st.st_size);
    return NULL;
  }
  __atomic_store_n(&h->consumer_pid, getpid(), __ATOMIC_RELEASE);
  __atomic_store_n(&h->heartbeat_ns, sw_now_ns(), __ATOMIC_RELEASE);
  *size_out = (uint64_t)st.st_size;
  return base;
}

SW_EXPORT void stompwatch_ring_detach(void *base, uint64_t size) {
  if (base) munmap(base, (size_t)size);
}

/* Frees everything before `tail` for the producers. */
SW_EXPORT void stompwatch_ring_advance(void *base, uint64_t tail) {
  struct sw_ring_header *h = base;
  __atomic_store_n(&h->tail, tail, __ATOMIC_RELEASE);
}

SW_EXPORT uint64_t stompwatch_ring_head(void *base) {
  struct sw_ring_header *h = base;
  return __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
}

SW_EXPORT void stompwatch_ring_heartbeat(void *base) {
  struct sw_ring_header *h = base;
  __atomic_store_n(&h->heartbeat_ns, sw_now_ns(), __ATOMIC_RELEASE);
}

/* Replaces the watch table: `count` packed struct sw_watch_entry. */
SW_EXPORT int stompwatch_table_publish(void *base, const void *entries, uint32_t count) {
  if (count > SW_WATCH_MAX) return -1;
  struct sw_ring_header *h = base;
  uint8_t *table = (uint8_t *)base + SW_TABLE_OFFSET;
  uint32_t seq = __atomic_load_n(&h->table_seq, __ATOMIC_RELAXED);
  __atomic_store_n(&h->table_seq, seq + 1, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy(table, entries, (size_t)count * sizeof(struct sw_watch_entry));
  __atomic_store_n(&h->table_count, count, __ATOMIC_RELAXED);
  __atomic_store_n(&h->table_seq, seq + 2, __ATOMIC_RELEASE);
  return 0;
}
