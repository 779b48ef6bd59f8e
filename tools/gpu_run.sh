#!/usr/bin/env bash
# The GPU part of the Multi30k recipe in one command, on a bare CUDA machine whose python3 has
# PyTorch (and sacrebleu, tokenizers, tqdm, matplotlib, numpy):
#
#   bash tools/gpu_run.sh --out OUT                     # every stage (about 30 minutes on an H100)
#   bash tools/gpu_run.sh --out OUT --stages small base # some (see python -m aiayn.experiments.gpu -h)
#   bash tools/gpu_run.sh --out OUT --stages small --compile  # compiled: multi30k-small_compiled_seed0.json
#   bash tools/gpu_run.sh --out OUT --stages notebook-en --notebook-deadline 540  # hands back a partial run
#
# Measured on an H100 (2026-11-26): machine + bench took 67 s with the wheels' install; a training
# step takes about 50 ms for both multi30k-small and multi30k-gpu (results/gpu/bench_*.json; 46 ms
# on real batches once warm). `small` took 8.8 minutes (8,000 updates in 480 s, 60 ms each with
# start-up, evaluations and checkpoints, then decoding; results/gpu/multi30k-small_seed0.json) and
# the whole command 9.4. Each notebook (which trains multi30k-small on a GPU, then decodes twice and
# draws attention maps) executed in 362 s on 2026-11-27 (commit 407db38; training 332 s, 91,600
# target tokens/s), the command 395 s with the wheels' install, 370 s on a warm machine: both
# notebooks fit one session one after the other. `base` should train for 4-5 minutes (estimated
# from its step time at ddc9f65: it has not run).
# `compile` needs more than 4: its compiled half had not finished after 2.8 minutes.
# Where a command may run 10 minutes, give each stage its own: three of them side by side on the
# one GPU (small, notebook-en, notebook-zh) had not finished training after 8 minutes.
#
# It writes results/gpu/*.json and executes chapters/{en,zh}/training_multi30k.ipynb in place,
# and copies both to OUT. Executing notebooks needs nbclient, ipykernel and myst-nb, and the
# Chinese plots need the font WenQuanYi Micro Hei. A machine that cannot download them gets
# them from runs/, filled beforehand on a machine that can (with the data, from $AIAYN_DATA):
#
#   bash tools/gpu_run.sh --prepare    # runs/wheels (Python 3.12 wheels), runs/fonts, runs/data
#
# then carry runs/wheels, runs/fonts and runs/data along (together about 45 MB).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
notebook_packages=(nbclient==0.11.0 ipykernel==7.4.0 nbformat myst-nb==1.4.0)

if [ "${1:-}" = "--prepare" ]; then
  version="${GPU_PYTHON_VERSION:-3.12}"  # the GPU machines' python3, as seen there (2026-11)
  rm -rf runs/wheels && mkdir -p runs/wheels runs/fonts runs/data
  "$python" -m pip download -q --only-binary=:all: --python-version "$version" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --platform any \
    -d runs/wheels "${notebook_packages[@]}"
  font="$(fc-match -f '%{file}' 'WenQuanYi Micro Hei' 2>/dev/null || true)"
  case "$font" in *wqy-microhei*) cp "$font" runs/fonts/ ;; *) echo "font WenQuanYi Micro Hei not found: run tools/setup.sh first" >&2; exit 2 ;; esac
  data="${AIAYN_DATA:-$root/../shared/data}"
  if [ ! -d "$data/multi30k" ]; then echo "no Multi30k in $data/multi30k: set AIAYN_DATA" >&2; exit 2; fi
  cp -r "$data/multi30k" runs/data/
  du -sh runs/wheels runs/fonts runs/data
  exit 0
fi

if ! "$python" -c "import nbclient, ipykernel, myst_nb" 2>/dev/null; then
  if [ -d runs/wheels ]; then  # offline: what --prepare downloaded; installed packages are kept
    "$python" -m pip install -q --no-index --find-links runs/wheels "${notebook_packages[@]}"
  else
    "$python" -m pip install -q "${notebook_packages[@]}"
  fi
fi
if [ -d runs/fonts ] && ! fc-list 2>/dev/null | grep -qi "wqy"; then
  mkdir -p "$HOME/.local/share/fonts" && cp runs/fonts/* "$HOME/.local/share/fonts/"
  rm -rf "$("$python" -c 'import matplotlib; print(matplotlib.get_cachedir())')"  # rescan fonts
fi
if [ -z "${AIAYN_DATA:-}" ] && [ -d runs/data/multi30k ]; then
  export AIAYN_DATA="$root/runs/data"
fi
# The course package from this checkout (the notebooks' kernels inherit the path).
export PYTHONPATH="$root/code${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
"$python" -c "import torch; print('torch', torch.__version__, 'CUDA:', torch.cuda.is_available())"
exec "$python" -m aiayn.experiments.gpu "$@"
