"""One Elman RNN layer (baseline) against one self-attention layer, forward pass, same input.

    .venv/bin/python benchmarks/bench_rnn_vs_attention.py
    .venv/bin/python benchmarks/bench_rnn_vs_attention.py --device cuda --batch-size 32

Prints the machine, the median time of each layer per sequence length T, and the ratio
rnn / attention (above 1: attention was faster). Timings on a shared machine vary from run to
run; the sequential-step count (T for the RNN, 1 for attention) does not.
"""

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # machine.py sits next to this file
from machine import describe  # noqa: E402

from aiayn.lab.rnn_vs_attention import time_layers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128, 256, 512, 1024])
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=1,
                        help="sentences per batch; 1 (default) isolates what the paper calls "
                             "parallelization within training examples")
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads for PyTorch (default: its own choice); 1 is steadier "
                             "when other processes share the cores")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)  # before describe(), which reports the count

    print(describe())
    print(f"device {args.device}; B={args.batch_size}, d_model={args.d_model}, "
          f"{args.heads} heads; forward only, median of {args.repeats} runs after 1 warm-up")
    print(f"{'T':>6} {'RNN ms':>10} {'attention ms':>13} {'RNN / attention':>16}")
    rows = time_layers(args.lengths, args.d_model, args.heads, args.batch_size,
                       repeats=args.repeats, warmup=1, device=args.device)
    for r in rows:
        print(f"{r['T']:>6} {r['rnn_s'] * 1e3:>10.2f} {r['attention_s'] * 1e3:>13.2f} "
              f"{r['ratio']:>15.2f}x")


if __name__ == "__main__":
    main()
