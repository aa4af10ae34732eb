/*
 * marks: mstx marks and ranges around device allocations, for the hook's
 * mstx injection and for check_leaks (SPEC sections 3 and 5).
 *
 * Four steps, each a range "step start" holding one mark "step" and a
 * temporary block freed within the step. One 1 MiB block, allocated in
 * step LEAK_STEP + 1 (default 1, between marks 0 and 1), is freed only after
 * the last step: check_leaks with start index LEAK_STEP reports it, and
 * from LEAK_STEP 1 on so does the daemon's online rule.
 *
 *   marks [LEAK_STEP]      prints `marks: leaked=0x%016llx`
 */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"
#include "ms_tools_ext.h"

#define STEPS 4

#define CHECK(call)                                                                                                  \
  do {                                                                                                               \
    aclError err_ = (call);                                                                                          \
    if (err_ != ACL_SUCCESS) {                                                                                       \
      fprintf(stderr, "marks: %s failed: %d\n", #call, err_);                                                        \
      exit(1);                                                                                                       \
    }                                                                                                                \
  } while (0)

int main(int argc, char **argv) {
  int leak_step = argc > 1 ? atoi(argv[1]) : 0;
  if (leak_step < 0 || leak_step >= STEPS) {
    fprintf(stderr, "usage: marks [LEAK_STEP] (0 to %d)\n", STEPS - 1);
    return 2;
  }
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  void *leaked = NULL;
  for (int step = 0; step < STEPS; step++) {
    mstxRangeId range = mstxRangeStartA("step start", NULL);
    void *temp;
    CHECK(aclrtMalloc(&temp, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    mstxMarkA("step", NULL);
    if (step == leak_step) CHECK(aclrtMalloc(&leaked, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(temp));
    mstxRangeEnd(range);
  }
  printf("marks: leaked=0x%016llx\n", (unsigned long long)(uintptr_t)leaked);
  CHECK(aclrtFree(leaked));
  CHECK(aclFinalize());
  return 0;
}
