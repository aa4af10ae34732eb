/*
 * late_op_compiler: a job that makes ACL calls first and only then dlopens
 * libacl_op_compiler.so, where a real CANN keeps aclopCompileAndExecute (a
 * framework loads it when it first compiles an op). The hook has filled its
 * table by then without the op: its op call must still reach the library.
 *
 * Run against build/testing/lacking (LD_LIBRARY_PATH): a runtime without
 * aclopCompileAndExecute, and the op library beside it. The op is called by
 * its global name, which a preloaded hook interposes. Prints `NAME CODE` per
 * call, whether the Fill reached the memory, then `done`.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "acl/acl.h"

typedef aclError (*compile_fn)(const char *, int, const aclTensorDesc *const[], const aclDataBuffer *const[], int,
                               const aclTensorDesc *const[], aclDataBuffer *const[], const aclopAttr *,
                               aclopEngineType, aclopCompileType, const char *, aclrtStream);

int main(void) {
  void *p = NULL;
  aclError set = aclrtSetDevice(0), got = aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST);
  if (!dlopen("libacl_op_compiler.so", RTLD_NOW | RTLD_LOCAL)) {
    fprintf(stderr, "late_op_compiler: %s\n", dlerror());
    return 1;
  }
  compile_fn compile = (compile_fn)dlsym(RTLD_DEFAULT, "aclopCompileAndExecute");
  if (!compile || !p) {
    fprintf(stderr, "late_op_compiler: no global aclopCompileAndExecute (is the hook preloaded?) or no memory\n");
    return 1;
  }
  float two = 2.0f;
  aclDataBuffer *in = aclCreateDataBuffer(&two, sizeof two);
  aclDataBuffer *out = aclCreateDataBuffer(p, 64);
  const aclDataBuffer *const ins[1] = {in};
  aclDataBuffer *const outs[1] = {out};
  aclError op = compile("Fill", 1, NULL, ins, 1, NULL, outs, NULL, ACL_ENGINE_SYS, ACL_COMPILE_SYS, NULL, NULL);
  float last = ((float *)p)[15];
  aclDestroyDataBuffer(in);
  aclDestroyDataBuffer(out);
  aclError freed = aclrtFree(p);
  printf("aclrtSetDevice %d\naclrtMalloc %d\naclopCompileAndExecute %d\nfilled %d\naclrtFree %d\ndone\n", set, got, op,
         last == 2.0f, freed);
  return 0;
}
