"""Test job: a training script that never imports stompwatch keeps a few
tensors and then asks for more CPU memory than there is."""

import torch

kept = [torch.randn(1000) for _ in range(3)]
torch.empty(1 << 50, dtype=torch.uint8)
