"""Test job: tensors made by ops on the main thread are freed by another
thread while the main thread runs more ops, and a third thread (without the
dispatch mode) allocates and frees all the while. Then the same with owner
tags (the client records the storages and their frees come from three
threads' weak-reference callbacks) and a mark every 50 tensors."""

import queue
import threading

import torch

from stompwatch import describe, mstx

torch.set_num_threads(1)
mstx.mark("start")  # the log of device 0, where the marks are
handed = queue.Queue()
stop = threading.Event()


def churn():
    while not stop.is_set():
        x = [torch.empty(100) for _ in range(10)]
        del x


def consume():
    n = 0
    while handed.get() is not None:
        n += 1
    print("handed over", n, flush=True)


threads = [threading.Thread(target=churn), threading.Thread(target=consume)]
for t in threads:
    t.start()
for i in range(3000):
    handed.put(torch.ones(64) * i)  # freed on the consumer thread
handed.put(None)
threads[1].join()
stop.set()
threads[0].join()

tagged = queue.Queue(maxsize=64)


def drop():
    while tagged.get() is not None:
        pass


droppers = [threading.Thread(target=drop) for _ in range(3)]
for t in droppers:
    t.start()
for i in range(3000):
    with describe.describer(owner="data"):
        tagged.put(torch.empty(16 + i % 7))
    if i % 50 == 0:
        mstx.mark("step")
for t in droppers:
    tagged.put(None)
for t in droppers:
    t.join()
mstx.mark("step")
print("tagged", 3000)
