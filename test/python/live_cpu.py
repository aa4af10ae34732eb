"""Test job: a CPU script that never marks (so its host rows have no device
log yet) keeps three tensors and idles until the test's gate file appears."""

import os
import sys
import time

import torch

kept = [torch.randn(1000) for _ in range(3)]
print("ready", os.getpid(), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
