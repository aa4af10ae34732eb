"""Device tensors the hook cannot copy itself: a CUDA tensor (or any
device PyTorch has but the Ascend runtime does not) is copied to the host
here, when the hook asks, through a copier it calls back.

The copier works as a device's copy engine does (ffi/hook/staged_copy.h,
``sw_copier_op``): the hook queues the copy of each chunk of a block into a
slot and waits for that slot before it hashes the chunk, so on CUDA the
copy of the next chunks (on a stream of the copier's own, into page-locked
staging) overlaps the hashing of this one. A checksum computed on the
device is not done. Other devices, and the suite's CPU tensors posing as
device memory (``STOMPWATCH_TEST_DEVICE_COPY=1``), copy when the slot is
waited for: the latest a copy engine may finish, so the suite sees a hook
that reads a chunk before its wait. test/gpu/prove_cuda.sh runs the CUDA
path where a GPU is.
"""

import ctypes
import os
import sys
import threading
import weakref

import torch

from ._client import CLIENT

_COPIER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64)
# enum sw_copier_op, ffi/hook/staged_copy.h. Prefixed: a bare _STAGING once
# named both the op and the buffers' table below, and the table, defined
# later, won: no staging was ever made, and every CUDA sample fell back to
# serial copies at a fifth of the speed.
_OP_BEGIN, _OP_QUEUE, _OP_WAIT, _OP_STAGING, _OP_END = 0, 1, 2, 3, 4
_registered = None
# A Ctrl-C that reached the copier, which runs inside a call of the hook and
# cannot raise into the job: the thread it interrupted (0: none), which
# raises it again once its op is over (take_interrupt).
_interrupted = 0


def pretend() -> bool:
    """Whether tests asked CPU tensors to be watched as device memory."""
    return os.environ.get("STOMPWATCH_TEST_DEVICE_COPY") == "1"


class _Copies(threading.local):
    """A sampling thread's copies in flight: the hook samples on the thread
    that runs the op and calls back on it, all within one call."""

    def __init__(self) -> None:
        self.streams = {}  # CUDA device -> this thread's copy stream on it
        self.events = {}  # (CUDA device, slot) -> the event recorded after each copy in that slot
        self.done = {}  # slot -> a CUDA event, or the copy still to make
        # The sample's storage as one flat byte tensor, from BEGIN to END:
        # each chunk is a slice of it, not a tensor made anew (and the
        # storage looked up) for every chunk.
        self.block = None


_STATE = _Copies()

# The hook's staging buffers, by OS thread: the hook keeps their addresses
# for the thread's life, which a threading.local would not outlive (a pool
# thread that runs Python only now and then gets a new thread state, and a
# new local, each time). Entries of threads gone are dropped as others come.
_STAGING = {}
_STAGING_LOCK = threading.Lock()


# A `run --watch=START,END` window opens on an output of START, which no
# watch of the client's holds: the storages START writes are kept here,
# weakly (the job frees them as it would), for the copier to find. Ops run
# on several threads (autograd's, TorchScript's): the lock keeps the table
# whole.
_cli_start = None  # START as the hook parsed it; b"" when there is none
_windows = {}  # storage address -> weak reference to the storage
_windows_lock = threading.Lock()


def written(hook, op: bytes, tensors) -> None:
    """The op named `op` is about to write these tensors, some of them
    device memory: the hook may sample them (a `run --watch` window opening
    on them), so it gets the copier. Never raises: the op's extents are
    already known, and this must not lose them."""
    global _cli_start
    try:
        if _registered is None:
            register(hook)
        if _cli_start is None:
            _cli_start = hook.cli_start() or b""
        if not _cli_start or op != _cli_start:
            return
        storages = [t.untyped_storage() for t in tensors]
        with _windows_lock:
            for addr in [a for a, ref in _windows.items() if ref() is None]:
                del _windows[addr]
            for storage in storages:
                _windows[storage.data_ptr()] = weakref.ref(storage)
    except Exception:  # the window's samples are then unread, and counted so
        pass


def _holds(storage, addr: int, n: int) -> bool:
    return storage.data_ptr() <= addr and addr + n <= storage.data_ptr() + storage.nbytes()


def _storage_holding(addr: int, n: int):
    """The watched storage (or `run --watch` window's) holding the bytes,
    looked up at each call: the copier keeps no storage alive past a
    sample."""
    for _, _, keep in CLIENT.watches.values():
        if not hasattr(keep, "nbytes"):
            continue  # None, or a HookPin: a CPU block the hook reads in place
        if _holds(keep, addr, n):
            return keep
    with _windows_lock:
        refs = list(_windows.values())
    for ref in refs:
        storage = ref()
        if storage is not None and _holds(storage, addr, n):
            return storage
    return None


def _begin(addr: int, n: int) -> int:
    _STATE.block = None
    storage = _storage_holding(addr, n)
    if storage is None:
        return -1
    if storage.device.type == "cuda":
        torch.cuda.synchronize(storage.device)
    block = torch.empty(0, dtype=torch.uint8, device=storage.device)
    _STATE.block = block.set_(storage)
    return 0


def _end() -> int:
    # The sample is over: the storage is not kept past it.
    _STATE.block = None
    _STATE.done.clear()
    return 0


def _device_bytes(src: int, n: int):
    """The n device bytes at src as a byte tensor, a slice of the sample's
    block (the hook copies only between BEGIN and END); None outside it."""
    flat = _STATE.block
    if flat is None or not (flat.data_ptr() <= src and src + n <= flat.data_ptr() + flat.numel()):
        return None
    at = src - flat.data_ptr()
    return flat[at : at + n]


def _host(addr: int, n: int):
    for tensor in _STAGING.get(threading.get_native_id(), {}).values():
        if tensor.data_ptr() == addr and tensor.nbytes >= n:
            return tensor[:n]
    # A ring record (full content): straight into it, no host tensor made
    # and copied again.
    return torch.frombuffer((ctypes.c_char * n).from_address(addr), dtype=torch.uint8)


def _queue(slot: int, host: int, src: int, n: int) -> int:
    view = _device_bytes(src, n)
    if view is None:
        return -1
    dst = _host(host, n)
    device = view.device
    if device.type != "cuda":
        _STATE.done[slot] = (dst, view)
        return 0
    stream = _STATE.streams.get(device)
    if stream is None:
        stream = _STATE.streams[device] = torch.cuda.Stream(device)
    # A slot's copy is waited for before the slot is queued again: its
    # event is recorded anew each time.
    done = _STATE.events.get((device, slot))
    if done is None:
        done = _STATE.events[(device, slot)] = torch.cuda.Event()
    with torch.cuda.stream(stream):
        dst.copy_(view, non_blocking=True)
        done.record(stream)
    _STATE.done[slot] = done
    return 0


def _wait(slot: int) -> int:
    done = _STATE.done.pop(slot)
    if isinstance(done, tuple):
        dst, view = done
        dst.copy_(view)
    else:
        done.synchronize()
    return 0


def _staging(k: int, out: int, n: int) -> int:
    # Page-locked where the job uses CUDA (the copy engine needs it to run
    # on its own); a thread's buffers are made once, at its first sample.
    pin = torch.cuda.is_available() and torch.cuda.is_initialized()
    tensor = torch.empty(n, dtype=torch.uint8, pin_memory=pin)
    with _STAGING_LOCK:
        for tid in [t for t in _STAGING if not os.path.exists(f"/proc/self/task/{t}")]:
            del _STAGING[tid]
        _STAGING.setdefault(threading.get_native_id(), {})[k] = tensor
    ctypes.c_void_p.from_address(out).value = tensor.data_ptr()
    return 0


def _copier(op: int, slot: int, host: int, device: int, n: int) -> int:
    try:
        if op == _OP_BEGIN:
            return _begin(device, n)
        if op == _OP_QUEUE:
            return _queue(slot, host, device, n)
        if op == _OP_WAIT:
            return _wait(slot)
        if op == _OP_STAGING:
            return _staging(slot, host, n)
        if op == _OP_END:
            return _end()
        return -1
    except KeyboardInterrupt:
        _note_interrupt()
        return -1
    except Exception:  # the hook marks the sample failed; never the job's problem
        return -1


def _after_fork_in_child() -> None:
    # Only the forking thread lives on in the child: a lock another thread
    # held at the fork would stay held there for good.
    global _STAGING_LOCK, _windows_lock
    _STAGING_LOCK = threading.Lock()
    _windows_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _note_interrupt() -> None:
    global _interrupted
    _interrupted = threading.get_ident()


def take_interrupt() -> bool:
    """Whether a Ctrl-C reached the copier on this thread since the last
    call; the op it came in is over, so the caller raises it."""
    global _interrupted
    if _interrupted != threading.get_ident():
        return False
    _interrupted = 0
    return True


def _unraisable_hook(previous):
    def hook(info) -> None:
        # A Ctrl-C that came before the copier's try (its first line):
        # ctypes reports it here instead of raising it.
        if info.object is _copier and info.exc_type is not None and issubclass(info.exc_type, KeyboardInterrupt):
            _note_interrupt()
            return
        previous(info)
    return hook


def register(hook) -> None:
    """Gives the hook the copier, once."""
    global _registered
    if _registered is None:
        sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
        _registered = _COPIER(_copier)
        hook.set_copier(_registered)
