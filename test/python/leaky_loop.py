"""Test job (b) and (d): a loop that keeps one tensor per step alive by
mistake (appended to a list), among temporaries that are freed; the model is
built under nested owner tags."""

import glob
import os
import time

import torch

import stompwatch
from stompwatch import describe, mstx

torch.manual_seed(0)
with describe.describer(owner="model"):
    with describe.describer(owner="encoder"):
        weight = torch.randn(64, 64)
    bias = torch.zeros(64)


# Tagged after the fact: a recorded storage's row is reopened with the
# owner; one made outside any op (over a Python buffer) is recorded with it.
describe.describer(bias, owner="bias")
raw = bytearray(400)
outside = torch.frombuffer(raw, dtype=torch.float32)
describe.describer(outside, owner="outside")


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
# Its own log, read from inside the job: every row so far must be in it.
# (The daemon makes the file when the first row for the device arrives.)
out = os.path.dirname(os.environ["STOMPWATCH_SOCKET"])
for _ in range(1000):
    logs = glob.glob(os.path.join(out, "device_0", "memscope_dump_*.csv"))
    if logs:
        break
    time.sleep(0.01)
log = logs[0]
leaks = stompwatch.check_leaks(log, "step", 3, event_type="HOST")
print("own log leaks", [leak["ptr"] for leak in leaks])
