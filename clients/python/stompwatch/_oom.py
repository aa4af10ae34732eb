"""An out-of-memory error PyTorch raised in an op, told to the daemon as a
failed allocation (``stompwatch_alloc_failed``), as a runtime allocation
that fails is: the daemon then writes the OOM snapshot the job asked for
(``OOM_SNAPSHOT_ENABLE``) while the error goes on up to the job.

Device memory fails with ``torch.OutOfMemoryError`` (``torch.cuda``'s before
torch 2.5). CPU memory fails with a plain ``RuntimeError`` from the CPU
allocator: the hook reports it itself when it was told the op (the dispatch
mode's hook path, ffi/hook/host_memory.c); otherwise it is recognised here by
its message.
"""

import re

import torch

from . import _memory, _ring

_CPU_FAILURE = "DefaultCPUAllocator: can't allocate memory"
_SIZE = re.compile(r"(?:you tried to allocate|Tried to allocate) ([\d.]+) ?(bytes|B|KiB|MiB|GiB|TiB)?")
_UNITS = {None: 1, "bytes": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_GPU = re.compile(r"GPU (\d+)")
_DEVICE_OOM = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", ())


def _size(message: str) -> int:
    m = _SIZE.search(message)
    return int(float(m.group(1)) * _UNITS[m.group(2)]) if m else 0


def _device(args, kwargs, message: str):
    """The device the op allocated on: the one the message names, else its
    device argument, else its first device tensor's, else the current one."""
    m = _GPU.search(message)
    if m:
        return torch.device("cuda", int(m.group(1)))
    device = kwargs.get("device")
    if device is None:
        for v in (*args, *kwargs.values()):
            for t in (v if isinstance(v, (list, tuple)) else (v,)):
                if isinstance(t, torch.Tensor) and not t.is_cpu:
                    device = t.device
                    break
            if device is not None:
                break
    if device is None:
        return None
    device = torch.device(device)
    if device.index is None and device.type != "cpu":
        module = getattr(torch, device.type, None)
        index = module.current_device() if module is not None and hasattr(module, "current_device") else 0
        device = torch.device(device.type, index)
    return device


def _free_bytes(device) -> int:
    try:
        if device.type == "cuda":
            return torch.cuda.mem_get_info(device)[0]
        mem_get_info = getattr(getattr(torch, device.type, None), "mem_get_info", None)
        return mem_get_info(device)[0] if mem_get_info else 0
    except Exception:  # the figure is a courtesy; the record is what matters
        return 0


def seen(hook, op: bytes, args, kwargs, error: RuntimeError, hook_saw_cpu: bool) -> None:
    """Reports ``error`` if it is an out-of-memory error of ``op``;
    ``hook_saw_cpu``: the hook was told the op, and reports a CPU failure
    itself. Never raises: the job's own error is what goes on up."""
    if hook is None:
        return
    try:
        message = str(error)
        if isinstance(error, _DEVICE_OOM):
            device = _device(args, kwargs or {}, message)
            if device is None or device.type == "cpu":
                return
            _memory.flush()
            hook.alloc_failed(device.index, _ring.POOL_PTA, _size(message), _free_bytes(device), op)
        elif _CPU_FAILURE in message and not hook_saw_cpu:
            _memory.flush()
            hook.alloc_failed(-1, _ring.POOL_HOST, _size(message), 0, op)
    except Exception:  # telling the daemon is a courtesy; the job's error comes first
        pass
