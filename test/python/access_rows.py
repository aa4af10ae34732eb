"""Test job (e) and part 6: ACCESS rows for an op with a written argument,
and no dispatch mode at all while nothing needs one."""

import torch

import stompwatch
from stompwatch import _dispatch, watcher
from torch.utils._python_dispatch import _get_current_dispatch_mode_stack


def installed() -> bool:
    return len(_get_current_dispatch_mode_stack()) > 0


# Started with --events launch: no recording, no access rows, nothing watched.
print("idle", installed())
a = torch.ones(4, 3)
b = torch.full((4, 3), 2.0)
watcher.watch(a, name="a")
print("watching", installed())
watcher.remove(a)
print("removed", installed())
stompwatch.config(events="access")
stompwatch.stop()
print("stopped", installed())
stompwatch.start()
print("access", installed())
a.add_(b)  # writes a, reads b
c = torch.mul(a, b)  # reads a and b, writes c
stompwatch.config(events="alloc,free")
# Tensors without strided memory (sparse, meta) make no rows and no errors.
sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1], [1, 0]]), torch.tensor([1.0, 2.0]), (2, 2),
                                 check_invariants=True)
dense = (sparse + sparse).to_dense()
meta = torch.empty(3, device="meta") + 1
stompwatch.config(events="launch")
print("off", installed())
a.add_(b)  # no rows
print("ptrs", a.data_ptr(), b.data_ptr(), c.data_ptr())
