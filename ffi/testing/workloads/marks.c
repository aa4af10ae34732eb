/*
 * marks: mstx marks and ranges around device allocations, for the hook's
 * mstx injection and for check_leaks (SPEC sections 3 and 5).
 *
 * Four steps, each a range "step start" holding one mark "step" and a
 * temporary block freed within the step. The block allocated in step 1
 * (between marks 0 and 1) is freed only after the last mark: check_leaks
 * with start index 0 reports it. Prints `marks: leaked=0x%016llx`.
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

int main(void) {
  CHECK(aclInit(NULL));
  CHECK(aclrtSetDevice(0));
  void *leaked = NULL;
  for (int step = 0; step < STEPS; step++) {
    mstxRangeId range = mstxRangeStartA("step start", NULL);
    void *temp;
    CHECK(aclrtMalloc(&temp, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    mstxMarkA("step", NULL);
    if (step == 0) CHECK(aclrtMalloc(&leaked, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(temp));
    mstxRangeEnd(range);
  }
  printf("marks: leaked=0x%016llx\n", (unsigned long long)(uintptr_t)leaked);
  CHECK(aclrtFree(leaked));
  CHECK(aclFinalize());
  return 0;
}
