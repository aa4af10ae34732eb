"""Test job for `run --watch=START,END` on Aten ops: a window opens on the
output of add_ (an in-place op on a CPU tensor) and closes after mul_; a
custom op in between writes into it without being given it. The script
never watches anything itself."""

import torch

lib = torch.library.Library("cliwin", "DEF")
lib.define("sneaky(Tensor x) -> Tensor")
a = torch.zeros(16)


def sneaky(x):
    a[3] = 99.0  # a tensor the op was not given
    return x + 1


lib.impl("sneaky", sneaky, "CPU")
a.add_(1)
torch.ops.cliwin.sneaky(torch.ones(4))
a.mul_(torch.tensor(2.0))
print("a[3] =", a[3].item())
