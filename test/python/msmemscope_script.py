"""Test job (g): written for msMemScope's API only, run unchanged under
./stompwatch run --as-msmemscope."""

import torch

import msmemscope
import msmemscope.describe as describe

msmemscope.config(events="alloc,free", call_stack="python:4", level="op")
test_tensor = torch.randn(2, 3)
msmemscope.watcher.watch(test_tensor, name="test", dump_nums=2)
test_tensor.mul_(2)
test_tensor.add_(1)
test_tensor.sub_(1)  # beyond dump_nums: not sampled
msmemscope.watcher.remove(test_tensor)

with describe.describer(owner="test2"):
    kept = torch.ones(64)


@describe.describer(owner="test1")
def train1():
    return torch.zeros(32)


made = train1()
describe.describer(owner="test3").__enter__()
third = torch.ones(16)
describe.describer(owner="test3").__exit__()
msmemscope.step()
msmemscope.step()
print("analyzers", msmemscope.list_analyzers())
print("ok")
