"""Tensor memory as the event log sees it: a storage an op creates is a
MALLOC row (pool HOST for CPU tensors, PTA for device ones) and its release a
FREE row. The free is exact: a weak reference to the untyped storage, whose
Python object lives exactly as long as the storage from torch 2.1 on. Each
storage is reported once, however many tensors view it.

When the hook sees PyTorch's CPU allocator (``_ring.HostRecorder``), CPU
storages made by ops are recorded there instead, at their allocation and
free, and ``_hook_blocks`` is that recorder once it has recorded any: the
lookups below then ask it too.

Events are stamped when they happen and handed to the hook in batches
(``stompwatch_emit_batch``): one ctypes call per storage would cost more than
the op that made it. Everything else the client writes (marks, watches,
access rows, framework ops) flushes the batch first, so the ring keeps the
order the job did things in.
"""

import array
import os
import sys
import threading
import time
import weakref

from . import _ring
from ._client import CLIENT

BATCH = 256
_NAMED = 1 << 32

# data_ptr -> weak reference to the storage recorded there.
_live = {}
# The hook's recorder of CPU storages once it has recorded any, else None.
_hook_blocks = None
_closing = False
_SKIP = os.path.dirname(os.path.abspath(__file__)) + os.sep
_events = array.array("Q")
_names = []
# Storages are freed on any thread (a weak reference's callback runs where
# the last reference went), and flush() lets go of the GIL in its call into
# the hook: events are added and taken under _adding (re-entrant: a
# callback may fire while this thread adds), and batches go to the hook one
# at a time, in order, under _flushing.
_adding = threading.RLock()
_flushing = threading.Lock()
_in_flush = threading.local()
_now = time.time_ns


class _Ref(weakref.ref):
    __slots__ = ("addr", "word")


def _code(rec: int, device: int, pool: int) -> int:
    return rec | pool << 8 | (device + 1) << 16


# The words of the common case, a CPU storage, worked out once.
HOST_ALLOC = _code(_ring.REC_ALLOC, -1, _ring.POOL_HOST) | _NAMED
HOST_FREE = _code(_ring.REC_FREE, -1, _ring.POOL_HOST)


def record_host(storage, addr: int, name: bytes) -> None:
    """:func:`record` for a CPU storage at ``addr`` not recorded yet: the
    dispatch mode's path for the common case."""
    size = storage.nbytes()
    if not addr or not size:
        return
    ref = _Ref(storage, _freed)
    ref.addr = addr
    ref.word = HOST_FREE
    _live[addr] = ref
    _add((HOST_ALLOC, _now(), addr, size), name)


def _add(words, name=None) -> None:
    """Batches events (4 words each), with the name of the first."""
    with _adding:
        _events.extend(words)
        if name is not None:
            _names.append(name)
        full = len(_events) >= 4 * BATCH
    if full:
        flush()


def flush() -> None:
    """Hands the batched events to the hook, and has it write the rows it
    holds back (see ffi/hook/host_memory.c)."""
    global _events, _names
    if getattr(_in_flush, "on", False):
        return  # a callback that fired inside flush(): its events go next time
    _in_flush.on = True
    try:
        with _flushing:
            if _hook_blocks is not None:
                _hook_blocks.flush()
            with _adding:
                events, names = _events, _names
                _events, _names = array.array("Q"), []
            n = len(events) // 4
            hook = CLIENT.hook(required=False) if n else None
            if hook is not None:
                blob = b"\0".join(names) + b"\0" if names else b""
                hook.emit_batch(events.buffer_info()[0], n, blob, len(blob))
    finally:
        _in_flush.on = False


def _freed(ref) -> None:
    if not ref.word:
        return  # recorded by the parent of this forked process
    addr = ref.addr
    if _live.get(addr) is ref:
        del _live[addr]
    if not _closing:
        _add((ref.word, _now(), addr, 0))
        # While the hook records CPU storages as they happen, its row for
        # a new block at this address must not overtake this one.
        if _hook_blocks is not None and ref.word == HOST_FREE:
            flush()


def python_stack(depth: int) -> str:
    """The caller's Python frames, innermost first, ours and torch's left out."""
    frames = []
    f = sys._getframe(1)
    while f is not None and len(frames) < depth:
        path = f.f_code.co_filename
        if not (path.startswith(_SKIP) or "/torch/" in path):
            frames.append(f"{path}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return ";".join(frames)


def label(op: bytes, owners=None) -> bytes:
    """The name an ALLOC record carries: op, tab, owners, tab, stack."""
    owners = CLIENT.owners if owners is None else owners
    depth = CLIENT.call_stack
    if not owners and not depth:
        return op
    stack = python_stack(depth).encode() if depth else b""
    return op + b"\t" + "@".join(owners).encode() + b"\t" + stack


def device_of(t):
    """(device id, pool) of a tensor: -1 and HOST for CPU tensors."""
    if t.is_cpu:
        return -1, _ring.POOL_HOST
    d = t.device
    return (d.index if d.index is not None else 0), _ring.POOL_PTA


def _natively_recorded(addr: int, device: int) -> bool:
    return _hook_blocks is not None and device < 0 and bool(_hook_blocks.recorded(addr))


def record(storage, device: int, pool: int, name: bytes) -> None:
    """Reports ``storage`` as allocated by what ``name`` says (see
    :func:`label`), unless it was already."""
    addr = storage.data_ptr()
    if not addr or addr in _live or _natively_recorded(addr, device):
        return
    size = storage.nbytes()
    if not size:
        return
    ref = _Ref(storage, _freed)
    ref.addr = addr
    ref.word = _code(_ring.REC_FREE, device, pool)
    _live[addr] = ref
    _add((_code(_ring.REC_ALLOC, device, pool) | _NAMED, _now(), addr, size), name)


def ensure_recorded(tensor, as_device: bool = False) -> None:
    """Reports a tensor's storage made before recording began (so the
    daemon can validate a watch on it); ``as_device``: a CPU tensor posing
    as device memory, for tests of the device copy."""
    device, pool = (0, _ring.POOL_PTA) if as_device else device_of(tensor)
    record(tensor.untyped_storage(), device, pool, b"")
    flush()


def storage_holding(addr: int, length: int):
    """The live storage this module recorded that holds [addr, addr+length), or None."""
    for start, ref in _live.items():
        st = ref()
        if st is not None and start <= addr and addr + length <= start + st.nbytes():
            return st
    return None


def _block_holding(addr: int):
    """(start, size, FREE word) of the recorded live block holding ``addr``,
    by this module or by the hook; None if neither recorded one."""
    st = storage_holding(addr, 1)
    if st is not None:
        start = st.data_ptr()
        return start, st.nbytes(), _live[start].word
    found = _hook_blocks.block(addr, 1) if _hook_blocks is not None else None
    return (found[0], found[1], HOST_FREE) if found else None


def _retag(addr: int, size: int, word: int, owner: str) -> None:
    # A row already written cannot be amended: the block's row is closed and
    # a new one, carrying the owner, opens at the same address.
    free_word = word
    alloc_word = (word & ~0xff) | _ring.REC_ALLOC | _NAMED
    now = _now()
    _add((free_word, now, addr, 0, alloc_word, now, addr, size), label(b"describe", [*CLIENT.owners, owner]))
    flush()


def tag(tensor, owner: str) -> None:
    """Tags a tensor's storage with ``owner`` (``describer(t, owner=...)``)."""
    device, pool = device_of(tensor)
    storage = tensor.untyped_storage()
    addr = storage.data_ptr()
    if not addr or not storage.nbytes():
        raise ValueError("Cannot describe: the tensor has no memory (0 bytes)")
    if addr in _live:
        _retag(addr, storage.nbytes(), _live[addr].word, owner)
    elif _natively_recorded(addr, device):
        _retag(addr, storage.nbytes(), HOST_FREE, owner)
    else:
        record(storage, device, pool, label(b"describe", [*CLIENT.owners, owner]))
        flush()


def tag_address(addr: int, owner: str) -> None:
    """Tags the recorded storage that holds ``addr``."""
    block = _block_holding(addr)
    if block is None:
        raise ValueError(f"Cannot describe: {hex(addr)} is not inside a tensor storage this process recorded; "
                         "tag the tensor itself: describer(t, owner=...)")
    _retag(*block, owner)


def use_native(recorder) -> None:
    """Says that the hook records CPU storages too (ask it of their blocks)."""
    global _hook_blocks
    flush()
    _hook_blocks = recorder
    _start_writer()


_writer_pid = None
WRITE_HELD_EVERY_S = 0.2


def _start_writer() -> None:
    """A thread that has the hook write the rows it holds back while the
    job is idle (they go out with the job's next record otherwise), so the
    daemon's live view (GET /snapshot, /blocks) is never more than a moment
    behind. One per process: a forked child starts its own."""
    global _writer_pid
    if _writer_pid == os.getpid():
        return
    _writer_pid = os.getpid()

    def write_held() -> None:
        while not _closing:
            time.sleep(WRITE_HELD_EVERY_S)
            recorder = _hook_blocks
            if recorder is not None:
                recorder.flush()

    threading.Thread(target=write_held, name="stompwatch-rows", daemon=True).start()


class HookPin:
    """Keeps a block the hook recorded mapped while a watch reads it in
    place (the hook holds it back from the allocator if the job frees it);
    let go when the watch is removed or this object dies."""

    def __init__(self, recorder, start: int) -> None:
        self._recorder = recorder
        self.start = start

    def release(self) -> None:
        if self._recorder is not None:
            self._recorder.unpin(self.start)
            self._recorder = None

    def __del__(self) -> None:
        self.release()


def pin_block(addr: int, length: int):
    """A :class:`HookPin` on the hook-recorded block holding [addr,
    addr+length), or None."""
    if _hook_blocks is None:
        return None
    found = _hook_blocks.block(addr, length, pin=True)
    return HookPin(_hook_blocks, found[0]) if found else None


def _after_fork_in_child() -> None:
    # The child has a ring of its own (the hook starts one) and none of the
    # parent's rows: forget what the parent recorded and had not sent.
    global _events, _names, _adding, _flushing
    for ref in _live.values():
        ref.word = 0
    _live.clear()
    _events, _names = array.array("Q"), []
    # A lock another thread of the parent held is held for ever here.
    _adding, _flushing = threading.RLock(), threading.Lock()
    if _hook_blocks is not None:
        _start_writer()  # threads do not survive fork


os.register_at_fork(after_in_child=_after_fork_in_child)


def close() -> None:
    """At interpreter exit: what is batched goes out; storages freed during
    teardown are not reported."""
    global _closing
    flush()
    _closing = True
    if _hook_blocks is not None:
        _hook_blocks.recording(0, 1)
