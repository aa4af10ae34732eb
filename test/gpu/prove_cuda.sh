#!/usr/bin/env bash
# Proves the Python client's CUDA path on a machine with an NVIDIA GPU. It is
# never part of the suite or CI (no GPU there): run it by hand where torch
# sees a GPU. The device-neutral jobs of test/python/ (_test_device.py) put
# their tensors on cuda and must pass the same tests as on the CPU: a
# custom CUDA op's stomp named at its call, a CUDA tensor copied to the host
# by the client's copier and checksummed, a block of several copier chunks
# stomped past its op's output (its copies pipelined), TorchScript's
# inter-op threads sampling through the copier, a full-content dump of a
# CUDA tensor, a `run --watch` window on a CUDA op's output, OOM snapshots
# of a CUDA OOM.
set -euo pipefail
cd "${BASH_SOURCE[0]%/*}/../.."
export STOMPWATCH_TEST_TORCH_DEVICE="${STOMPWATCH_TEST_TORCH_DEVICE:-cuda}"
if [ "$STOMPWATCH_TEST_TORCH_DEVICE" = cuda ]; then
  python3 -c 'import torch; assert torch.cuda.is_available(), "torch sees no CUDA device"; print("torch", torch.__version__, "on", torch.cuda.get_device_name())'
fi
./stompwatch help >/dev/null # first use: installs Deno, builds the hook
export PATH="$PWD/.deno/node_modules/.bin:$PATH" DENO_DIR="${DENO_DIR:-$PWD/.deno/cache}"
mkdir -p /dev/shm/stompwatch-tests
STOMPWATCH_SHM_DIR=/dev/shm/stompwatch-tests deno test --allow-all \
  --filter '/custom op writing past its output|device memory the runtime cannot copy|several copier chunks|TorchScript runs on its inter-op threads|full content of device memory|run --watch on Aten ops opens a window|could not be read|out-of-memory error in a PyTorch op|its OOM gets snapshots/' \
  test/e2e/python_client_test.ts test/e2e/python_oom_test.ts
