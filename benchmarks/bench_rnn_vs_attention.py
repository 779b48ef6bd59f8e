"""One recurrent layer against one self-attention layer, forward pass, the same input.

    .venv/bin/python benchmarks/bench_rnn_vs_attention.py --threads 1
    .venv/bin/python benchmarks/bench_rnn_vs_attention.py --device cuda --batch-size 32

Two recurrent layers, the same arithmetic: the course's Elman RNN (a Python loop over time) and
torch.nn.RNN (the loop in C++). Prints the machine, then per sequence length T each layer's time
as the minimum and the interquartile range over interleaved rounds: CPU time on a CPU (the wall
clock also counts waiting for a core when other jobs share the machine), wall time on a GPU (after
synchronising: kernels run asynchronously). Run it on a quiet machine; the full record with every
layer of Table 1 is ``python -m aiayn.experiments.table1`` (results/table1/cpu.json).
"""

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # machine.py sits next to this file
from machine import describe  # noqa: E402

from aiayn.lab.complexity import Layer  # noqa: E402
from aiayn.lab.layer_timing import spread, time_layers  # noqa: E402

NAMES = {"recurrent": "Elman, Python loop", "torch_rnn": "torch.nn.RNN", "self_attention": "self-attention"}


def synchronised(layer, device: str):
    if not device.startswith("cuda"):
        return layer
    return lambda x: (layer(x), torch.cuda.synchronize())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128, 256, 512, 1024])
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=1,
                        help="sentences per batch; 1 (default) isolates what the paper calls "
                             "parallelization within training examples")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads for PyTorch (default: its own choice); 1 is steadier "
                             "when other processes share the cores")
    args = parser.parse_args()
    for name in ("d_model", "heads", "batch_size", "rounds"):
        if getattr(args, name) < 1:
            parser.exit(2, f"bench_rnn_vs_attention: --{name.replace('_', '-')} must be at least 1\n")
    if args.d_model % args.heads:
        parser.exit(2, f"bench_rnn_vs_attention: --d-model ({args.d_model}) must be a multiple of "
                       f"--heads ({args.heads})\n")
    if args.threads is not None:
        torch.set_num_threads(args.threads)  # before describe(), which reports the count

    on_gpu = args.device.startswith("cuda")
    clock = "wall" if on_gpu else "CPU"
    torch.manual_seed(0)
    layers = {kind: synchronised(Layer(kind, args.d_model, heads=args.heads).to(args.device).eval(), args.device)
              for kind in NAMES}
    print(describe())
    print(f"device {args.device}; B={args.batch_size}, d_model={args.d_model}, {args.heads} heads; "
          f"forward only; {clock} time, min [q1, q3] over {args.rounds} interleaved rounds (ms)")
    print(f"{'T':>6}" + "".join(f"{NAMES[kind]:>28}" for kind in NAMES))
    for T in args.lengths:
        x = torch.randn(args.batch_size, T, args.d_model, device=args.device)
        times = time_layers(layers, x, rounds=args.rounds)
        cells = []
        for kind in NAMES:
            s = spread(times[kind]["wall_s" if on_gpu else "cpu_s"])
            cells.append(f"{s['min'] * 1e3:.2f} [{s['q1'] * 1e3:.2f}, {s['q3'] * 1e3:.2f}]")
        print(f"{T:>6}" + "".join(f"{c:>28}" for c in cells))


if __name__ == "__main__":
    main()
