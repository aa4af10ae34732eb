"""The device the device-neutral test jobs put their tensors on: the CPU
in the suite, ``cuda`` when a GPU machine proves the CUDA path
(STOMPWATCH_TEST_TORCH_DEVICE=cuda, test/gpu/prove_cuda.sh)."""

import os

DEVICE = os.environ.get("STOMPWATCH_TEST_TORCH_DEVICE", "cpu")
