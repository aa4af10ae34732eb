"""Test job: BatchNorm's running statistics, written in training by an op
whose schema does not say so, watched; then a tensor made from a Python
list (its storage made outside any op) recorded and watched by address."""

import torch

from stompwatch import mstx, watcher

bn = torch.nn.BatchNorm1d(8)
watcher.watch(bn.running_mean, name="running_mean")
for _ in range(3):
    bn(torch.randn(16, 8))
watcher.remove(bn.running_mean)
mstx.mark("literal")
kept = torch.tensor([1.0, 2.0, 3.0])
print("kept", hex(kept.data_ptr()))
watcher.watch(kept.data_ptr(), length=12, name="literal")
watcher.remove(kept.data_ptr(), length=12)
