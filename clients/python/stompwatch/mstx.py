"""mstx marks and ranges, as msMemScope's and torch_npu's ``mstx`` take them.
They go through the hook's own ``mstxMarkA``/``mstxRangeStartA``/
``mstxRangeEnd``, so a real mstx library, when loaded, sees them too.

>>> from stompwatch import mstx
>>> mstx.mark("step")                    # doctest: +SKIP
>>> rid = mstx.range_start("step start")  # doctest: +SKIP
>>> mstx.range_end(rid)                  # doctest: +SKIP
"""

from typing import Any

from . import _checks, _memory
from ._client import CLIENT

__all__ = ["mark", "range_start", "range_end"]


def _stream(stream):
    if stream is None or isinstance(stream, int):
        return stream
    return getattr(stream, "npu_stream", None) or getattr(stream, "cuda_stream", None)


def mark(msg: str, stream: Any = None) -> None:
    """Writes an MSTX Mark row named ``msg`` (1 to 156 bytes)."""
    data = _checks.check_message("mark", msg)
    _checks.check_stream("mark", stream)
    hook = CLIENT.hook()
    _memory.flush()
    hook.mark(data, _stream(stream))


def range_start(msg: str, stream: Any = None) -> int:
    """Opens a range named ``msg``; returns its id for :func:`range_end`."""
    data = _checks.check_message("start a range", msg)
    _checks.check_stream("start a range", stream)
    hook = CLIENT.hook()
    _memory.flush()
    return int(hook.range_start(data, _stream(stream)))


def range_end(range_id: int) -> None:
    """Closes the range ``range_start`` returned ``range_id`` for."""
    _checks.check_int("Cannot end a range: the range id", range_id, 1)
    hook = CLIENT.hook()
    _memory.flush()
    hook.range_end(range_id)
