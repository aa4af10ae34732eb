"""Test job (c): a block watched by address and length, inside a bigger
tensor; an in-place op on a view inside it changes it (allowed), one beside
it does not; addresses outside every live tensor are refused."""

import torch

from stompwatch import watcher

t = torch.arange(64, dtype=torch.float32)
block = t[16:32]
addr, length = block.data_ptr(), block.nbytes
watcher.watch(addr, length=length, name="block", dump_nums=8)
t[20:24].add_(1)  # inside the block, through a view: allowed
t[0:8].mul_(2)  # beside it: no change
watcher.remove(addr, length=length)
for bad_addr, bad_length in ((8, 64), (t.data_ptr(), t.nbytes + 4096)):
    try:
        watcher.watch(bad_addr, length=bad_length, name="nowhere")
    except ValueError as e:
        print("refused:", e)
print("done")
