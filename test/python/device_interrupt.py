"""Test job: a Ctrl-C that reaches the client's copier (run with
STOMPWATCH_TEST_DEVICE_COPY=1), inside a call of the hook, where it cannot
be raised: the job gets it once the op is over, and the op has run. The
first is raised in the copier's handler, the second before its first line
(seen by sys.unraisablehook)."""

import sys
from types import SimpleNamespace

import torch

import stompwatch
from stompwatch import _device, watcher

t = torch.zeros(1 << 20)
watcher.watch(t, name="dev", dump_nums=-1)
real_begin, real_copier = _device._begin, _device._copier


def interrupted_begin(addr, n):
    _device._begin = real_begin
    raise KeyboardInterrupt


for round in (1, 2):
    if round == 1:
        _device._begin = interrupted_begin
    else:
        # As if the signal came before the copier's try: the exception
        # leaves the callback, and ctypes reports it as unraisable.
        sys.unraisablehook(SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(),
                                           exc_traceback=None, err_msg=None, object=real_copier))
    try:
        t.add_(1)
        print("round", round, "not interrupted")
    except KeyboardInterrupt:
        print("round", round, "interrupted, t[0] =", t[0].item())
t.add_(1)
watcher.remove(t)
print("done, t[0] =", t[0].item())
