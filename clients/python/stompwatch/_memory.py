"""Tensor memory as the event log sees it: a storage an op creates is a
MALLOC row (pool HOST for CPU tensors, PTA for device ones) and its release a
FREE row. The free is exact: a weak reference to the untyped storage, whose
Python object lives exactly as long as the storage from torch 2.1 on. Each
storage is reported once, however many tensors view it.
"""

import os
import sys
import weakref

from . import _ring
from ._client import CLIENT

# data_ptr -> weak reference to the storage recorded there.
_live = {}
_closing = False
_SKIP = os.path.dirname(os.path.abspath(__file__)) + os.sep


class _Ref(weakref.ref):
    __slots__ = ("device", "pool")


def _freed(ref, hook=None, device=-1, pool=_ring.POOL_HOST, addr=0):
    if _live.get(addr) is ref:
        del _live[addr]
    if not _closing:
        hook.emit(_ring.REC_FREE, device, 0, addr, 0, 0, pool, None)


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
    d = t.device
    if d.type == "cpu":
        return -1, _ring.POOL_HOST
    return (d.index if d.index is not None else 0), _ring.POOL_PTA


def record(hook, storage, device: int, pool: int, label: bytes) -> None:
    """Reports ``storage`` as allocated by the op in ``label`` (op name, tab,
    owners), unless it was already."""
    addr = storage.data_ptr()
    if not addr or addr in _live:
        return
    size = storage.nbytes()
    if not size:
        return
    ref = _Ref(storage, lambda r, h=hook, d=device, p=pool, a=addr: _freed(r, h, d, p, a))
    ref.device, ref.pool = device, pool
    _live[addr] = ref
    hook.emit(_ring.REC_ALLOC, device, 0, addr, size, 0, pool, label)


def ensure_recorded(hook, tensor, label: bytes = b"") -> None:
    """Reports a tensor's storage made before recording began (so the
    daemon can validate a watch on it)."""
    device, pool = device_of(tensor)
    record(hook, tensor.untyped_storage(), device, pool, label)


def storage_holding(addr: int, length: int):
    """The live recorded storage that holds [addr, addr+length), or None."""
    for start, ref in _live.items():
        st = ref()
        if st is not None and start <= addr and addr + length <= start + st.nbytes():
            return st
    return None


def close() -> None:
    """At interpreter exit: storages freed during teardown are not reported."""
    global _closing
    _closing = True


def _retag(hook, addr: int, size: int, device: int, pool: int, owner: str) -> None:
    # A row already written cannot be amended: the block's row is closed and
    # a new one, carrying the owner, opens at the same address.
    hook.emit(_ring.REC_FREE, device, 0, addr, 0, 0, pool, None)
    hook.emit(_ring.REC_ALLOC, device, 0, addr, size, 0, pool, label(b"describe", [*CLIENT.owners, owner]))


def tag(hook, tensor, owner: str) -> None:
    """Tags a tensor's storage with ``owner`` (``describer(t, owner=...)``)."""
    device, pool = device_of(tensor)
    storage = tensor.untyped_storage()
    addr = storage.data_ptr()
    if not addr or not storage.nbytes():
        raise ValueError("Cannot describe: the tensor has no memory (0 bytes)")
    if addr not in _live:
        record(hook, storage, device, pool, label(b"describe", [*CLIENT.owners, owner]))
        return
    _retag(hook, addr, storage.nbytes(), device, pool, owner)


def tag_address(hook, addr: int, owner: str) -> None:
    """Tags the recorded storage that holds ``addr``."""
    storage = storage_holding(addr, 1)
    if storage is None:
        raise ValueError(f"Cannot describe: {hex(addr)} is not inside a tensor storage this process recorded; "
                         "tag the tensor itself: describer(t, owner=...)")
    start = storage.data_ptr()
    ref = _live[start]
    device, pool = ref.device, ref.pool
    _retag(hook, start, storage.nbytes(), device, pool, owner)
