/* pages.c: see pages.h. */
#define _GNU_SOURCE
#include "pages.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* madvise over the whole pages inside [p, p + bytes), if any. */
static void advise_inside(void *p, size_t bytes, int advice) {
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1), to = ((uintptr_t)p + bytes) & ~(page - 1);
  if (to > from) madvise((void *)from, to - from, advice);
}

void sw_pages_prefer_huge(void *p, size_t bytes) { advise_inside(p, bytes, MADV_HUGEPAGE); }

void *sw_pages_new(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  sw_pages_prefer_huge(p, bytes);
  return p;
}

void sw_pages_free(void *p, size_t bytes) {
  if (p) munmap(p, bytes);
}

void sw_pages_forget(void *p, size_t bytes) { advise_inside(p, bytes, MADV_DONTNEED); }
