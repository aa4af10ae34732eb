"""Benchmark: the Python client's cost per Aten op and per training step,
each beside its baseline measured in the same process and run.

Per op: torch.add on 16-element CPU tensors, in alternating blocks: no mode
(baseline), an empty TorchDispatchMode (the floor any mode pays), stompwatch
with recording on, and stompwatch with nothing to do (no mode installed).
Each block is timed on this thread's CPU clock (what the mode costs the
job's own thread) and on the wall clock: on a machine of two cores shared
with the daemon and whatever else runs, the wall clock also counts time the
job waited for a core.
Per step: a 4-layer MLP (width 2048, batch 256, SGD) plain, with recording,
and with one watched 4 MiB tensor in checksum mode. Prints one JSON line.
"""

import json
import sys
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import stompwatch
from stompwatch import _dispatch, watcher

torch.set_num_threads(1)
OPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 6


class Empty(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


a, b = torch.randn(16), torch.randn(16)


def per_op():
    """(thread CPU, wall) µs per op."""
    cpu, wall = time.thread_time(), time.perf_counter()
    for _ in range(OPS):
        torch.add(a, b)
    return (time.thread_time() - cpu) / OPS * 1e6, (time.perf_counter() - wall) / OPS * 1e6


def stompwatch_off():
    stompwatch.config(events="launch")
    assert not _dispatch.installed()


def stompwatch_on():
    stompwatch.config(events="alloc,free,launch")
    assert _dispatch.installed()


def best_of(setups, rounds=5):
    """Alternates the setups round by round; the best (least disturbed) figure of each."""
    cpu = {name: float("inf") for name in setups}
    wall = dict(cpu)
    for _ in range(rounds):
        for name, (enter, leave) in setups.items():
            enter()
            per_op()  # warm
            c, w = per_op()
            cpu[name], wall[name] = min(cpu[name], c), min(wall[name], w)
            leave()
    return cpu, wall


empty = Empty()
stompwatch_off()
ops, ops_wall = best_of({
    "plain": (lambda: None, lambda: None),
    "empty_mode": (empty.__enter__, lambda: empty.__exit__(None, None, None)),
    "recording": (stompwatch_on, stompwatch_off),
    "idle": (stompwatch_off, lambda: None),
})

model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(4)])
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x, y = torch.randn(256, 2048), torch.randn(256, 2048)
watched = torch.randn(1 << 20)  # 4 MiB


def train_step():
    loss = torch.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def per_step() -> float:
    train_step()
    t = time.perf_counter()
    for _ in range(STEPS):
        train_step()
    return (time.perf_counter() - t) / STEPS * 1e3


def watch_on():
    stompwatch_on()
    watcher.watch(watched, name="bench4mib")


def watch_off():
    watcher.remove(watched)
    stompwatch_off()


steps = {name: float("inf") for name in ("plain", "recording", "watched_4mib")}
for _ in range(3):
    for name, (enter, leave) in {"plain": (lambda: None, lambda: None),
                                 "recording": (stompwatch_on, stompwatch_off),
                                 "watched_4mib": (watch_on, watch_off)}.items():
        enter()
        steps[name] = min(steps[name], per_step())
        leave()
print(json.dumps({"op_us": ops, "op_wall_us": ops_wall, "step_ms": steps, "torch": torch.__version__}))
