"""Test job: a training script that never imports stompwatch keeps a few
tensors and then asks for more memory than its device has (the CPU, or
the one _test_device.py names)."""

import torch
from _test_device import DEVICE

kept = [torch.randn(1000, device=DEVICE) for _ in range(3)]
torch.empty(1 << 50, dtype=torch.uint8, device=DEVICE)
