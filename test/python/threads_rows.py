"""Test job: tensors made by ops on the main thread are freed by another
thread while the main thread runs more ops, and a third thread (without the
dispatch mode) allocates and frees all the while."""

import queue
import threading

import torch

from stompwatch import mstx

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
