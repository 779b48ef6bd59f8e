#!/usr/bin/env bash
# The GPU chapters and the CUDA-only tests, with the course's own set-up: what the GPU job runs
# (.github/workflows/gpu.yml, on a self-hosted runner labelled `gpu`) and what to run by hand on
# a CUDA machine. CI's ordinary job runs on a CPU and skips both.
#
#   bash tools/gpu_check.sh
#
# 1. tools/setup.sh builds .venv from requirements.txt; without CPU-wheel index settings the
#    pinned torch is PyPI's CUDA build.
# 2. It stops (exit 2) unless that torch sees a CUDA device: on a CPU the notebooks would pick
#    the small configuration and nbval would compare CPU outputs with the committed GPU ones.
# 3. The tests that need CUDA (they skip on a CPU), then nbval over the training chapter in both
#    languages, whose committed outputs come from a GPU run (tools/gpu_run.sh --stages
#    notebook-en notebook-zh). Multi30k is read from $AIAYN_DATA, or downloaded into data/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
cd "$root"
export AIAYN_DATA="${AIAYN_DATA:-$root/data}"
if ! .venv/bin/python -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
  echo "gpu_check: this torch sees no CUDA device; run it on a machine with an NVIDIA GPU and its driver" >&2
  exit 2
fi
.venv/bin/python -c "import torch; print('torch', torch.__version__, 'on', torch.cuda.get_device_name(0))"
# -rs lists skipped tests with their reason: on a GPU none may say CUDA.
.venv/bin/python -m pytest -p no:cacheprovider -q -rs tests/test_core_torch_vs_nn.py tests/test_train_trainer.py
.venv/bin/python -m pytest -p no:cacheprovider chapters/en/training_multi30k.ipynb chapters/zh/training_multi30k.ipynb
