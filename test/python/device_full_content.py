"""Test job: full content of a watched block the client's copier copies
(STOMPWATCH_TEST_DEVICE_COPY=1 on the CPU): each chunk goes straight into
its ring record, and the .bin files hold the block's exact bytes. The block
spans several ring records and ends in a ragged one."""

import torch
from _test_device import DEVICE

import stompwatch
from stompwatch import watcher

stompwatch.config(watch="full-content")
t = torch.arange((5 << 20) + 3, dtype=torch.int32, device=DEVICE).view(torch.uint8)
watcher.watch(t, name="dev", dump_nums=2)
t.add_(1)
watcher.remove(t)
print("done")
