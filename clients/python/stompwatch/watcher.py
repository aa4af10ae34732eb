"""Watch a tensor, or a block by address, across every op until removed.

>>> from stompwatch import watcher
>>> watcher.watch(w, name="w", dump_nums=8)          # doctest: +SKIP
>>> watcher.watch(w.data_ptr(), length=w.nbytes, name="w")  # doctest: +SKIP
>>> watcher.remove(w)                                  # doctest: +SKIP
"""

import os
from typing import Any, Optional

from . import _checks, _daemon
from ._client import CLIENT

__all__ = ["watch", "remove"]


def _fail(status: int, answer: dict, what: str):
    message = answer.get("error") or f"the daemon answered {status}"
    if status in (400, 404, 409, 422):
        raise ValueError(message)
    raise RuntimeError(f"Cannot {what}: {message}")


def _block(obj, length, what: str):
    if _checks.is_tensor(obj):
        if length is not None:
            raise TypeError(f"Cannot {what}: length is only for an address; a tensor gives its own")
        from . import _dispatch
        span = _dispatch.extent(obj)
        if span is None:
            raise ValueError(f"Cannot {what}: the tensor is empty (0 bytes)")
        return span[0], span[1], obj
    if isinstance(obj, int) and not isinstance(obj, bool):
        if length is None:
            raise TypeError(f"Cannot {what}: length is required with an address, e.g. "
                            f"watcher.{what.split()[0]}(t.data_ptr(), length=t.nbytes, ...)")
        _checks.check_int(f"Cannot {what}: the address", obj, 1)
        _checks.check_int(f"Cannot {what}: length", length, 1)
        return obj, length, None
    raise TypeError(f"Cannot {what}: expected a tensor or an int address, got {type(obj).__name__}")


def watch(obj: Any, length: Optional[int] = None, name: Optional[str] = None, dump_nums: int = -1) -> None:
    """Starts watching a tensor, or ``length`` bytes at address ``obj``:
    before and after every op until :func:`remove`, the block is checksummed
    (or written whole with ``config(watch="full-content")``); the daemon
    names the op that changed it and whether that op was allowed to.

    >>> watcher.watch(t, name="t", dump_nums=2)  # doctest: +SKIP
    """
    addr, length, tensor = _block(obj, length, "watch")
    name = _checks.check_name(name)
    dump_nums = _checks.check_dump_nums(dump_nums)
    if name in CLIENT.watches:
        raise ValueError(f"Cannot watch: a watch named {name} is already open; remove it first or pick another name")
    CLIENT.hook()
    from . import _memory
    if tensor is not None:
        from . import _device
        if not tensor.is_cpu or _device.pretend():
            _device.register(CLIENT.hook())
        _memory.ensure_recorded(tensor, as_device=_device.pretend())
        keep = tensor.untyped_storage()
    else:
        keep = _memory.storage_holding(addr, length) or _memory.pin_block(addr, length)
    _memory.flush()
    body = {"pid": os.getpid(), "name": name, "addr": hex(addr), "length": length, "dump_nums": dump_nums}
    if CLIENT.full_content:
        body["full_content"] = True
    if CLIENT.watch_start:
        body["start"] = CLIENT.watch_start
    if CLIENT.watch_end:
        body["end"] = CLIENT.watch_end
    status, answer = _daemon.request("POST", "/watch", body, sock=CLIENT.socket)
    if status >= 300:
        _fail(status, answer, "watch")
    # The storage stays alive while watched: the hook reads host blocks in place.
    CLIENT.watches[name] = (addr, length, keep)
    CLIENT.changed()


def remove(obj: Any, length: Optional[int] = None) -> None:
    """Stops watching a tensor, or the block at ``obj`` of ``length`` bytes.

    >>> watcher.remove(t)  # doctest: +SKIP
    >>> watcher.remove(addr, length=1000)  # doctest: +SKIP
    """
    addr, length, _ = _block(obj, length, "remove watch")
    # The watch of exactly that block; failing that, every one overlapping it.
    names = [n for n, (a, size, _) in CLIENT.watches.items() if a == addr and size == length] or \
        [n for n, (a, size, _) in CLIENT.watches.items() if a < addr + length and addr < a + size]
    if not names:
        raise ValueError(f"Cannot remove watch: no open watch overlaps {hex(addr)} (+{length} bytes)")
    CLIENT.hook()
    from . import _memory
    _memory.flush()
    failed = None
    for n in names:
        status, answer = _daemon.request("POST", "/remove", {"pid": os.getpid(), "name": n}, sock=CLIENT.socket)
        keep = CLIENT.watches.pop(n)[2]
        if isinstance(keep, _memory.HookPin):
            keep.release()  # the block may go back to the allocator once the hook stops reading it
        # 404: the hook had closed it already (dump_nums ran out, its end op ran).
        if status >= 300 and status != 404:
            failed = failed or (status, answer)
    CLIENT.changed()
    if failed:
        _fail(failed[0], failed[1], "remove watch")
