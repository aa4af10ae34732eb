"""The hook library already in this process, through ctypes: the producer
API that writes events into the process's ring to the daemon.

The hook is preloaded by ``./stompwatch run`` (or by the environment that
``./stompwatch env`` prints). We only ever look it up with ``RTLD_NOLOAD``:
a second copy would make a second ring. ``connect()`` may load it into a
process started without it, because the hook makes its ring on first use
from ``STOMPWATCH_RING_DIR``, which ``connect()`` sets first.
"""

import ctypes
import os

HOOK_NAME = "libstompwatch_hook.so"

# Record types and pools, from ffi/include/stompwatch_ring.h.
REC_ALLOC = 4
REC_FREE = 5
POOL_HAL = 0
POOL_HOST = 1
POOL_PTA = 2

_u64 = ctypes.c_uint64


class Hook:
    """The producer functions of one loaded hook library."""

    def __init__(self, lib: ctypes.CDLL, path: str) -> None:
        self.path = path
        self.emit = lib.stompwatch_emit
        self.emit.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, _u64, _u64, _u64, ctypes.c_uint32,
                              ctypes.c_char_p]
        self.emit.restype = ctypes.c_int
        self.attached = lib.stompwatch_attached
        self.attached.argtypes = []
        self.attached.restype = ctypes.c_int
        self.op_begin = lib.stompwatch_op_begin
        self.op_begin.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
        self.op_begin.restype = _u64
        self.op_end = lib.stompwatch_op_end
        self.op_end.argtypes = [ctypes.c_char_p, _u64, ctypes.c_int, ctypes.c_char_p]
        self.op_end.restype = None
        self.emit_batch = lib.stompwatch_emit_batch
        self.emit_batch.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
        self.emit_batch.restype = ctypes.c_int
        self.wait_consumed = lib.stompwatch_wait_consumed
        self.wait_consumed.argtypes = [ctypes.c_uint32]
        self.wait_consumed.restype = ctypes.c_int
        self.cli_start = lib.stompwatch_cli_start
        self.cli_start.argtypes = []
        self.cli_start.restype = ctypes.c_char_p
        self.set_copier = lib.stompwatch_set_copier
        self.set_copier.argtypes = [ctypes.c_void_p]
        self.set_copier.restype = None
        self.alloc_failed = lib.stompwatch_alloc_failed
        self.alloc_failed.argtypes = [ctypes.c_int, ctypes.c_int, _u64, _u64, ctypes.c_char_p]
        self.alloc_failed.restype = None
        self.may_sample = lib.stompwatch_may_sample
        self.may_sample.argtypes = []
        self.may_sample.restype = ctypes.c_int
        # The hook's own mstx entry points: they record and forward to a
        # real mstx library when one is loaded.
        self.mark = lib.mstxMarkA
        self.mark.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        self.mark.restype = None
        self.range_start = lib.mstxRangeStartA
        self.range_start.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        self.range_start.restype = _u64
        self.range_end = lib.mstxRangeEnd
        self.range_end.argtypes = [_u64]
        self.range_end.restype = None
        self._lib = lib
        self._host = False

    def host_recorder(self):
        """The hook's recorder of CPU storages, when it can be one (asked
        once torch is imported: it looks for PyTorch's allocator); None
        otherwise."""
        if self._host is False:
            self._host = _host_recorder(self._lib)
        return self._host


class HostRecorder:
    """The hook's own recording of CPU storages (ffi/hook/host_memory.c):
    it sees PyTorch's CPU allocator directly, told the running op by one
    word written through a memoryview (a store per op, not a call)."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.op_word = memoryview(ctypes.c_uint64.in_dll(lib, "stompwatch_host_op")).cast("B").cast("Q")
        # MALLOC rows the hook holds back until their op is over.
        self.pending = memoryview(ctypes.c_uint32.in_dll(lib, "stompwatch_host_pending")).cast("B").cast("I")
        self.intercepting = _fn(lib.stompwatch_host_intercepting, [], ctypes.c_int)
        self.name_op = _fn(lib.stompwatch_host_op_name, [ctypes.c_uint32, ctypes.c_char_p], ctypes.c_int)
        self.recording = _fn(lib.stompwatch_host_recording, [ctypes.c_int, ctypes.c_int], None)
        self.write_held_rows = _fn(lib.stompwatch_host_flush, [], None)
        self.recorded = _fn(lib.stompwatch_host_recorded, [_u64], ctypes.c_int)
        self.unpin = _fn(lib.stompwatch_host_unpin, [_u64], None)
        self._block = _fn(lib.stompwatch_host_block,
                          [_u64, _u64, ctypes.c_int, ctypes.POINTER(_u64), ctypes.POINTER(_u64)], ctypes.c_int)

    def flush(self) -> None:
        """Has the hook write the rows it holds back, if it holds any."""
        if self.pending[0]:
            self.write_held_rows()

    def block(self, addr: int, length: int, pin: bool = False):
        """(start, size) of the live block it recorded that holds
        [addr, addr+length), or None. ``pin``: the block stays mapped, even
        once the job frees it, until :meth:`unpin` (a watch reads it in
        place)."""
        start, size = _u64(), _u64()
        if self._block(addr, length, int(pin), ctypes.byref(start), ctypes.byref(size)):
            return start.value, size.value
        return None


def _fn(fn, argtypes, restype):
    fn.argtypes = argtypes
    fn.restype = restype
    return fn


def _host_recorder(lib: ctypes.CDLL):
    """The hook's CPU storage recorder when it sees the allocator (the hook
    was preloaded ahead of any other allocator), else None: the client then
    records storages itself."""
    try:
        host = HostRecorder(lib)
    except (AttributeError, ValueError):  # a hook built before it had one
        return None
    return host if host.intercepting() else None


def _candidates() -> list:
    paths = []
    for entry in os.environ.get("LD_PRELOAD", "").replace(" ", ":").split(":"):
        if entry.endswith(HOOK_NAME):
            paths.append(entry)
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ")[-1]
                if path.endswith(HOOK_NAME) and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    return paths


def loaded_hook():
    """The hook already loaded in this process, or None."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:
            continue
        return Hook(lib, path)
    return None


def load_hook(path: str, ring_dir: str) -> Hook:
    """Loads the hook at ``path`` into a process started without it, reporting
    to the daemon whose ring directory is ``ring_dir``."""
    os.environ["STOMPWATCH_RING_DIR"] = ring_dir
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except OSError as e:
        raise RuntimeError(f"Cannot load the stompwatch hook: {path}: {e}; "
                           "build it with make -C ffi, or start the job with ./stompwatch run") from None
    return Hook(lib, path)
