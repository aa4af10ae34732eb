"""Test job for `run --watch=START,END` on Aten ops: a window opens on the
output of add_ (an in-place op) and closes after mul_; a custom op in
between writes into it without being given it. The script never watches
anything itself. Device-neutral (_test_device.py)."""

import torch
from _test_device import DEVICE

lib = torch.library.Library("cliwin", "DEF")
lib.define("sneaky(Tensor x) -> Tensor")
a = torch.zeros(16, device=DEVICE)


def sneaky(x):
    a[3] = 99.0  # a tensor the op was not given
    return x + 1


lib.impl("sneaky", sneaky, DEVICE.upper())
a.add_(1)
torch.ops.cliwin.sneaky(torch.ones(4, device=DEVICE))
a.mul_(torch.tensor(2.0))
print("a[3] =", a[3].item())
