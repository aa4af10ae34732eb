/*
 * late_runtime: a job that loads the device runtime late, as frameworks do
 * (torch_npu dlopens it, RTLD_LOCAL, after the interpreter has started):
 * it makes an mstx mark first, while no runtime is loaded, then dlopens
 * libascendcl.so and calls aclrtSetDevice, aclrtMalloc and aclrtFree by
 * their global names, which a preloaded hook interposes.
 *
 * Linked without libascendcl (only the mstx library), so nothing loads the
 * runtime before the dlopen. Prints `NAME CODE` per call and `done`.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "acl/acl.h"
#include "ms_tools_ext.h"

typedef aclError (*set_device_fn)(int32_t);
typedef aclError (*malloc_fn)(void **, size_t, aclrtMemMallocPolicy);
typedef aclError (*free_fn)(void *);

int main(void) {
  mstxMarkA("before the runtime", NULL);
  if (!dlopen("libascendcl.so", RTLD_NOW | RTLD_LOCAL)) {
    fprintf(stderr, "late_runtime: %s\n", dlerror());
    return 1;
  }
  /* The global names: the hook's when it is preloaded, else missing (the
   * runtime was loaded RTLD_LOCAL). */
  set_device_fn set_device = (set_device_fn)dlsym(RTLD_DEFAULT, "aclrtSetDevice");
  malloc_fn dev_malloc = (malloc_fn)dlsym(RTLD_DEFAULT, "aclrtMalloc");
  free_fn dev_free = (free_fn)dlsym(RTLD_DEFAULT, "aclrtFree");
  if (!set_device || !dev_malloc || !dev_free) {
    fprintf(stderr, "late_runtime: no global aclrtSetDevice/aclrtMalloc/aclrtFree (is the hook preloaded?)\n");
    return 1;
  }
  void *p = NULL;
  aclError set = set_device(0), got = dev_malloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST);
  aclError freed = p ? dev_free(p) : -1;
  printf("aclrtSetDevice %d\naclrtMalloc %d\naclrtFree %d\ndone\n", set, got, freed);
  return 0;
}
