"""Test job: a watched block of several chunks of the copier's copies
(2 MiB in the hook), which an op may write only in part. The op's output
straddles a chunk boundary (at 16 MiB); its first call writes only the output
(allowed), its second also the element past the output's end, in the next
chunk (a stomp). Run with STOMPWATCH_TEST_DEVICE_COPY=1 on the CPU.

It also prints how many of the copier's copies were queued and not yet
waited for at most: the hook pipelines them, SW_STAGED_AHEAD (3) ahead, into
staging the copier made; a hook that fell back to serial copies had 1."""

import torch
from _test_device import DEVICE

import stompwatch
from stompwatch import _device, watcher

in_flight = [0, 0]  # now, at most


def counted(copier_call, step):
    def call(*args):
        rc = copier_call(*args)
        if rc == 0:
            in_flight[0] += step
            in_flight[1] = max(in_flight)
        return rc

    return call


_device._queue = counted(_device._queue, 1)
_device._wait = counted(_device._wait, -1)

lib = torch.library.Library("swchunks", "DEF")
lib.define("fill_into(Tensor(a!) out, float value) -> ()")
calls = [0]


def fill_into(out, value):
    calls[0] += 1
    out.fill_(value)
    if calls[0] == 2:
        flat = out.as_strided((out.numel() + 1,), (1,), out.storage_offset())
        flat[out.numel()] = value


lib.impl("fill_into", fill_into, DEVICE.upper())

block = torch.zeros(12 << 20, device=DEVICE)  # 48 MiB of float32
boundary = (16 << 20) // 4  # the element at byte 16 MiB
out = block[boundary - 16 : boundary + 16]
watcher.watch(block, name="big")
torch.ops.swchunks.fill_into(out, 1.0)
torch.ops.swchunks.fill_into(out, 2.0)
watcher.remove(block)
print(f"copies in flight at most: {in_flight[1]}")
print("done")
