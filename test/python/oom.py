"""Test job: PyTorch runs out of the test device's memory in an op; the job catches the
error, says so and goes on. OOM_SNAPSHOT_ENABLE comes from the test."""

import torch
from _test_device import DEVICE

from stompwatch import mstx

kept = [torch.randn(1000, device=DEVICE) for _ in range(3)]  # 3 x 4000 bytes live at the OOM
mstx.mark("before")
try:
    torch.empty(1 << 50, dtype=torch.uint8, device=DEVICE)  # 1 PiB
except RuntimeError as e:
    print("oom:", str(e).splitlines()[0][:120])
print("after the oom", sum(t.numel() for t in kept))
