"""Test job: CPU storages recorded by the hook where PyTorch allocates them
(ffi/hook/host_memory.c), between marks that name what each part checks."""

import os

import torch

from stompwatch import _dispatch, mstx, watcher

print("hook records", _dispatch._work.native is not None)
x = torch.randn(1000)
mstx.mark("in-place and view")
x.add_(2)  # the scalar 2 becomes a tensor for the op and is freed in it
v = x.view(10, 100)
mstx.mark("temporary")
y = x + 1
print("y", hex(y.data_ptr()))
del y
mstx.mark("resize")
old = x.data_ptr()
x.resize_(5000)
print("x", hex(old), hex(x.data_ptr()))
conv = torch.nn.Conv2d(3, 8, 3)
out = conv(torch.randn(4, 3, 32, 32))  # oneDNN's caches and scratch are not storages
mstx.mark("pinned")
# Watched by address, then freed: the hook reads it in place, so it stays
# mapped (its FREE row is written all the same) until the watch goes.
w = torch.randn(1 << 20)
block = (w.data_ptr(), w.nbytes)
watcher.watch(block[0], length=block[1], name="by address")
del w
for i in range(3):
    torch.ones(10) + i
watcher.remove(block[0], length=block[1])
print("pinned", hex(block[0]))
mstx.mark("from file")
path = os.path.join(os.environ["STOMPWATCH_TEST_TMP"], "floats.bin")
with open(path, "wb") as f:
    f.write(bytes(400))
mapped = torch.from_file(path, shared=False, size=100)  # not the CPU allocator's memory
print("mapped", hex(mapped.data_ptr()))
mstx.mark("fork")
child = os.fork()
if child == 0:
    del x, v  # the parent's block: not the child's to report
    kept = torch.ones(10)
    mstx.mark("child")
    print("child", os.getpid(), hex(kept.data_ptr()), flush=True)
    os._exit(0)
os.waitpid(child, 0)
mstx.mark("end")
