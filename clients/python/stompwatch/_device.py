"""Device tensors the hook cannot copy itself: a CUDA tensor (or any
device PyTorch has but the Ascend runtime does not) is copied to the host
here, when the hook asks, through a copier it calls back.

The path is the simple fallback (synchronise, copy the watched bytes to
the host); a checksum computed on the device is not done. The suite drives
it with CPU tensors posing as device memory (``STOMPWATCH_TEST_DEVICE_COPY=1``);
test/gpu/prove_cuda.sh runs it on CUDA tensors where a GPU is.
"""

import ctypes
import os

import torch

from ._client import CLIENT

_COPIER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64)
_registered = None


def pretend() -> bool:
    """Whether tests asked CPU tensors to be watched as device memory."""
    return os.environ.get("STOMPWATCH_TEST_DEVICE_COPY") == "1"


def _storage_holding(addr: int, n: int):
    for _, _, keep in CLIENT.watches.values():
        if not hasattr(keep, "nbytes"):
            continue  # None, or a HookPin: a CPU block the hook reads in place
        if keep.data_ptr() <= addr and addr + n <= keep.data_ptr() + keep.nbytes():
            return keep
    return None


def _copy(dst: int, src: int, n: int) -> int:
    try:
        storage = _storage_holding(src, n)
        if storage is None:
            return -1
        if storage.device.type == "cuda":
            torch.cuda.synchronize(storage.device)
        view = torch.empty(0, dtype=torch.uint8, device=storage.device)
        view.set_(storage, src - storage.data_ptr(), (n,))
        # Straight into the hook's buffer: no host tensor made and copied
        # again for each chunk.
        torch.frombuffer((ctypes.c_char * n).from_address(dst), dtype=torch.uint8).copy_(view)
        return 0
    except Exception:  # the hook marks the sample failed; never the job's problem
        return -1


def register(hook) -> None:
    """Gives the hook the copier, once."""
    global _registered
    if _registered is None:
        _registered = _COPIER(_copy)
        hook.set_copier(_registered)
