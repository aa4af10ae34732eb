"""Test job: a custom Aten op whose kernel launches a runtime op (the test
device runtime's Fill, through the hook) that writes a watched device block
the Aten op was not given. The block is sampled around the Aten op as a
whole: the change is the Aten op's, and a stomp."""

import ctypes
import os
import sys

import torch

from stompwatch import watcher

here = os.path.dirname(os.path.abspath(__file__))
ctypes.CDLL(os.path.join(here, "..", "..", "ffi", "build", "testing", "libascendcl.so"), mode=ctypes.RTLD_GLOBAL)
acl = ctypes.CDLL(None)  # the global namespace: the preloaded hook's entry points first
vp, i64 = ctypes.c_void_p, ctypes.c_int64
acl.aclrtMalloc.argtypes = [ctypes.POINTER(vp), ctypes.c_size_t, ctypes.c_int]
acl.aclCreateDataBuffer.argtypes = [vp, ctypes.c_size_t]
acl.aclCreateDataBuffer.restype = vp
acl.aclCreateTensorDesc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(i64), ctypes.c_int]
acl.aclCreateTensorDesc.restype = vp
acl.aclrtMemcpy.argtypes = [vp, ctypes.c_size_t, vp, ctypes.c_size_t, ctypes.c_int]
acl.aclopExecuteV2.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(vp), ctypes.POINTER(vp), ctypes.c_int,
                               ctypes.POINTER(vp), ctypes.POINTER(vp), vp, vp]
assert acl.aclInit(None) == 0 and acl.aclrtSetDevice(0) == 0


def device_floats(n: int, value: float):
    ptr = vp()
    assert acl.aclrtMalloc(ctypes.byref(ptr), n * 4, 0) == 0
    host = (ctypes.c_float * n)(*([value] * n))
    assert acl.aclrtMemcpy(ptr, n * 4, host, n * 4, 1) == 0
    dims = (i64 * 1)(n)
    return ptr.value, acl.aclCreateTensorDesc(0, 1, dims, 2), acl.aclCreateDataBuffer(ptr, n * 4)


block, block_desc, block_buf = device_floats(64, 0.0)
one, one_desc, one_buf = device_floats(1, 1.0)

lib = torch.library.Library("swnest", "DEF")
lib.define("launch_fill(Tensor x) -> Tensor")


def launch_fill(x):
    ins, in_bufs = (vp * 1)(one_desc), (vp * 1)(one_buf)
    outs, out_bufs = (vp * 1)(block_desc), (vp * 1)(block_buf)
    assert acl.aclopExecuteV2(b"Fill", 1, ins, in_bufs, 1, outs, out_bufs, None, None) == 0
    return x * 2


lib.impl("launch_fill", launch_fill, "CPU")
watcher.watch(block, length=64 * 4, name="device_block")
torch.ops.swnest.launch_fill(torch.ones(4))
watcher.remove(block, length=64 * 4)
print("done")
sys.stdout.flush()
