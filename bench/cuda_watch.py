"""By hand, on a machine with an NVIDIA GPU (not part of ./stompwatch bench,
which runs where there is none): what a checksum watch of a CUDA tensor
costs per sample, next to copying the same bytes to the host in the same
run. Run it under the daemon:

    ./stompwatch run -- python3 bench/cuda_watch.py [MiB ...]

Each figure is the best of 5 runs. A watched op is sampled twice (before
and after), so a sample costs half the op's extra time."""

import sys
import time

import torch

from stompwatch import watcher


def best(f, reps=5):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        f()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return min(times)


print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
for mib in [int(a) for a in sys.argv[1:]] or [16, 256]:
    n = mib << 20
    gib = n / 2**30
    t = torch.zeros(n // 4, device="cuda")
    view = t.view(torch.uint8)
    pageable = torch.empty(n, dtype=torch.uint8)
    pinned = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    copy_pageable = best(lambda: pageable.copy_(view))
    copy_pinned = best(lambda: pinned.copy_(view))
    plain = best(lambda: t.add_(1))
    watcher.watch(t, name=f"w{mib}", dump_nums=-1)
    watched = best(lambda: t.add_(1))
    watcher.remove(t)
    sample = (watched - plain) / 2
    print(
        f"{mib} MiB: checksum sample {sample * 1e3:.2f} ms ({gib / sample:.2f} GiB/s); "
        f"copy to pageable host memory {gib / copy_pageable:.2f} GiB/s, to pinned {gib / copy_pinned:.2f} GiB/s; "
        f"ratio to the pageable copy {copy_pageable / sample:.2f}x, to the pinned {copy_pinned / sample:.2f}x"
    )
