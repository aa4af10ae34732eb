"""Test job (b) and (d): a loop that keeps one tensor per step alive by
mistake (appended to a list), among temporaries that are freed; the model is
built under nested owner tags."""

import torch

import stompwatch
from stompwatch import describe, mstx

torch.manual_seed(0)
with describe.describer(owner="model"):
    with describe.describer(owner="encoder"):
        weight = torch.randn(64, 64)
    bias = torch.zeros(64)


@describe.describer(owner="loss")
def loss_of(y):
    return (y * y).mean()


kept = []
for step in range(5):
    mstx.mark("step")
    x = torch.randn(32, 64)
    y = x @ weight + bias
    loss = loss_of(y)
    kept.append(torch.full((777,), float(step)))  # the leak: 3108 bytes a step
mstx.mark("step")
print("kept", [t.data_ptr() for t in kept])
