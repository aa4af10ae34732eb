"""stompwatch for PyTorch jobs: watch tensors across Aten ops, mark steps,
tag owners and record tensor memory, in msMemScope's API.

>>> import stompwatch
>>> from stompwatch import watcher, mstx, describe
>>> watcher.watch(w, name="w", dump_nums=8)  # doctest: +SKIP
"""

from . import describe, mstx, watcher
from ._control import config, connect, start, step, stop
from ._leaks import check_leaks
from . import _startup

__all__ = ["watcher", "mstx", "describe", "check_leaks", "step", "start", "stop", "config", "connect"]

_startup.begin()
