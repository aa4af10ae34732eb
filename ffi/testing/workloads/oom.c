/*
 * oom: exhausts device 0 to exercise the out-of-memory path.
 *
 *   oom [BLOCK_BYTES [abort]]     (default 1 MiB per aclrtMalloc)
 *
 * Allocates until aclrtMalloc fails, prints `oom: count=<blocks> error=<code>`
 * (the expected code is 207001, ACL_ERROR_RT_MEMORY_ALLOCATION), frees
 * everything and exits 0; any other failure exits 1. Shrink the device with
 * STOMPWATCH_TEST_DEVICE_BYTES to make it quick. With `abort` it dies of
 * SIGABRT right after the failed allocation, as a job whose framework
 * aborts on OOM does, leaving its blocks allocated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

int main(int argc, char **argv) {
  size_t block = argc > 1 ? strtoull(argv[1], NULL, 10) : (size_t)1 << 20;
  if (block == 0) {
    fprintf(stderr, "usage: oom [BLOCK_BYTES > 0]\n");
    return 2;
  }
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) return 1;

  void **blocks = NULL;
  size_t count = 0, room = 0;
  aclError err;
  for (;;) {
    if (count == room) {
      room = room ? 2 * room : 256;
      blocks = realloc(blocks, room * sizeof *blocks);
      if (blocks == NULL) return 1;
    }
    void *p = (void *)1;
    err = aclrtMalloc(&p, block, ACL_MEM_MALLOC_HUGE_FIRST);
    if (err != ACL_SUCCESS) {
      if (p != NULL) fprintf(stderr, "oom: a failed aclrtMalloc left *devPtr = %p\n", p);
      break;
    }
    blocks[count++] = p;
  }
  printf("oom: count=%zu error=%d\n", count, err);
  fflush(stdout);
  if (argc > 2 && strcmp(argv[2], "abort") == 0) abort();

  for (size_t i = 0; i < count; i++) {
    if (aclrtFree(blocks[i]) != ACL_SUCCESS) return 1;
  }
  free(blocks);
  aclFinalize();
  return err == ACL_ERROR_RT_MEMORY_ALLOCATION ? 0 : 1;
}
