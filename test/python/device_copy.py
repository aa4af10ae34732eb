"""Test job: a watched tensor the hook cannot read in place or copy with
the Ascend runtime (a CUDA tensor, here a CPU tensor posing as one with
STOMPWATCH_TEST_DEVICE_COPY=1) is copied to the host by the client's
copier; the verdict is the same as for host memory. Between samples the
copier holds none of the job's storages: the hook ends each sample."""

import torch
from _test_device import DEVICE

import stompwatch
from stompwatch import _device, watcher

t = torch.zeros(64, device=DEVICE)
other = torch.zeros(64, device=DEVICE)
watcher.watch(t, name="dev", dump_nums=4)
t.add_(1)  # allowed: it writes t
other.add_(1)  # does not touch t
print(f"copier holds a storage: {_device._STATE.block is not None}")
watcher.remove(t)
print("done")
