"""Test job: a block the client's copier copies (STOMPWATCH_TEST_DEVICE_COPY=1
on the CPU), written by ops TorchScript runs on its inter-op threads
(torch.jit.fork). Such a thread runs Python only during each op, with a new
thread state each time, while the hook keeps its staging buffers for the
thread's life: the copier must keep them as long. Device-neutral
(_test_device.py): on cuda each such thread also gets its own copy stream."""

import torch
from _test_device import DEVICE

import stompwatch
from stompwatch import watcher


@torch.jit.script
def bump(t: torch.Tensor) -> torch.Tensor:
    return t.add_(1)


@torch.jit.script
def forked(t: torch.Tensor) -> torch.Tensor:
    return torch.jit.wait(torch.jit.fork(bump, t))


t = torch.zeros(9 << 20, dtype=torch.uint8, device=DEVICE)  # several chunks of the copier's
watcher.watch(t, name="forked")
for _ in range(4):
    forked(t)
watcher.remove(t)
print("done")
