"""Test job (a): a small training loop (Linear + MSELoss + SGD) with a
custom op that, on its 3rd call only, writes one element past the end of its
output into a neighbouring watched tensor of the same storage. The weight,
watched too, changes only through SGD's in-place update."""

import torch
from _test_device import DEVICE

import stompwatch
from stompwatch import mstx, watcher

lib = torch.library.Library("swtest", "DEF")
lib.define("scale_into(Tensor x, Tensor(a!) out) -> ()")
calls = [0]


def scale_into(x, out):
    calls[0] += 1
    n = out.numel()
    out.copy_(x[:n] * 2)
    if calls[0] == 3:
        # The bug: one element past the end of `out`, inside its storage.
        flat = out.as_strided((n + 1,), (1,), out.storage_offset())
        flat[n] = 42.0


lib.impl("scale_into", scale_into, DEVICE.upper())

torch.manual_seed(0)
model = torch.nn.Linear(8, 4).to(DEVICE)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 8, device=DEVICE)
y = torch.randn(16, 4, device=DEVICE)
buffer = torch.zeros(32, device=DEVICE)
scratch, neighbour = buffer[:16], buffer[16:]
# Overlaps the op's output: only the byte past its end may not change.
straddle = buffer[8:24]
watcher.watch(model.weight, name="weight", dump_nums=-1)
watcher.watch(neighbour, name="neighbour")
watcher.watch(straddle.data_ptr(), length=straddle.nbytes, name="straddle")
for step in range(4):
    mstx.mark("step")
    torch.ops.swtest.scale_into(x.flatten()[:16], scratch)
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
watcher.remove(model.weight)
watcher.remove(neighbour)
watcher.remove(straddle.data_ptr(), length=straddle.nbytes)
print("done", neighbour[0].item())
