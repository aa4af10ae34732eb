"""Test job for `run --watch=START,END` on Aten ops whose window's block is
freed before END: the samples after the free cannot be read (run with
STOMPWATCH_TEST_DEVICE_COPY=1, where the client's copier finds the block
no more), and the verdict says so rather than "unchanged" alone.
Device-neutral (_test_device.py)."""

import torch
from _test_device import DEVICE

a = torch.zeros(1024, device=DEVICE)
a.add_(1)  # START: the window opens on a
del a
b = torch.ones(4, device=DEVICE)
b.mul_(torch.tensor(2.0))  # END
print("done")
