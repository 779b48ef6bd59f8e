"""Greedy decoding with and without the key-value cache, as the output grows.

Times ``aiayn.pt.decoding.greedy_decode`` with ``use_cache=True`` (the decoder runs on the newest
token only, ``aiayn.pt.incremental``) and ``use_cache=False`` (it re-reads the whole prefix at
every step), in one run and on one machine, for two model shapes:

  multi30k-cpu   d_model 128, 4 heads, 2 + 2 layers, d_ff 512 (the chapters' CPU model)
  base           d_model 512, 8 heads, 6 + 6 layers, d_ff 2048 (the paper's base model;
                 multi30k-gpu's shape)

both with the Multi30k vocabulary of 6,000 subwords, float32, untrained weights (the time of a
step does not depend on the weights), one source sentence of 20 tokens, and outputs of exactly
25, 50, 100 and 200 tokens: the output weights of EOS, PAD and BOS are zero, so their logit is 0,
below the largest of the other random logits, and no sentence ends early (asserted). Both
variants return the same ids (asserted).

Rounds are interleaved (in every round each shape and length once, in a shuffled order, the
two variants back to back in a shuffled order: ``aiayn.lab.decoding_timing.timed_rounds``), so a
burst of load from another process hits both. Recorded per round: the process's CPU time (with
one thread, the work done; other processes disturb it much less than wall-clock time) and the
wall-clock time. The headline is uncached / cached CPU time of the fastest rounds, with the
per-round ratios for its spread; the load average before and after the run is recorded too.
A results file is written only from a clean tree (no uncommitted change under code/), unless
``--allow-dirty``, which flags the record ``clean_tree: false``.

    .venv/bin/python benchmarks/bench_decoding.py [--rounds 5] [--threads 1] [--write FILE]
        [--lengths 25 50 100 200] [--shapes multi30k-cpu base] [--allow-dirty]

The chapter on fast decoding plots results/fast_decoding/bench_decoding.json. The default
run (5 rounds) took about 2 minutes of CPU time on a 2-CPU AMD EPYC (3 rounds: 86 s); the base
shape's uncached 200 tokens dominate.
"""

import argparse
import os
import sys

from machine import describe

SHAPES = {  # name -> (d_model, heads, layers, d_ff)
    "multi30k-cpu": (128, 4, 2, 512),
    "base": (512, 8, 6, 2048),
}
VOCAB, SOURCE_LEN = 6000, 20


def build(shape: str, seed: int = 0):
    import torch

    from aiayn.config import TransformerConfig
    from aiayn.data.specials import BOS_ID, EOS_ID, PAD_ID
    from aiayn.pt.model import Transformer

    d_model, heads, layers, d_ff = SHAPES[shape]
    torch.manual_seed(seed)
    config = TransformerConfig(VOCAB, VOCAB, d_model=d_model, num_heads=heads, num_layers=layers,
                               d_ff=d_ff, max_len=256, tie_output=False)
    model = Transformer(config).eval()
    with torch.no_grad():
        model.out_proj.weight[[EOS_ID, PAD_ID, BOS_ID]] = 0.0  # never the largest logit
    src = torch.randint(4, VOCAB, (1, SOURCE_LEN))
    return model, src


def decode(model, src, length: int, use_cache: bool):
    from aiayn.data.specials import BOS_ID, EOS_ID
    from aiayn.pt.decoding import greedy_decode

    ys = greedy_decode(model, src, length, BOS_ID, EOS_ID, use_cache=use_cache)
    if ys.shape[1] != length + 1:
        raise RuntimeError(f"decoding stopped after {ys.shape[1] - 1} of {length} tokens")
    return ys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lengths", type=int, nargs="+", default=[25, 50, 100, 200])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads for PyTorch (default 1: see bench_attention.py)")
    parser.add_argument("--write", default=None, help="results file (JSON) to write")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write even with uncommitted changes under code/ (flagged)")
    args = parser.parse_args()
    if args.rounds < 1 or min(args.lengths) < 1:
        parser.error("--rounds and every --lengths value must be at least 1")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import torch

    from aiayn.experiments.record import Recorder
    from aiayn.lab.decoding_timing import (DirtyTree, check_clean_tree, load_average, speedup,
                                           timed_rounds)

    recorder = Recorder()
    try:  # refuse before minutes of measuring, not after
        clean = check_clean_tree(recorder.provenance["code_changes"], args.allow_dirty or not args.write)
    except DirtyTree as err:
        print(f"bench_decoding.py: error: {err}", file=sys.stderr)
        raise SystemExit(2)
    torch.set_num_threads(args.threads)
    print(describe())
    print(f"greedy decoding, batch 1, source {SOURCE_LEN} tokens, vocabulary {VOCAB}, float32, "
          f"{args.rounds} interleaved rounds")
    models = {shape: build(shape) for shape in args.shapes}
    cases = [(shape, n) for shape in args.shapes for n in args.lengths]
    for shape, n in cases:  # warm-up, and the two variants agree
        model, src = models[shape]
        if not torch.equal(decode(model, src, n, True), decode(model, src, n, False)):
            raise RuntimeError(f"{shape}, {n} tokens: cached and uncached ids differ")
    load_before = load_average()
    groups = {(shape, n): {name: (lambda m=models[shape], n=n, c=use_cache: decode(*m, n, c))
                           for name, use_cache in (("cached", True), ("uncached", False))}
              for shape, n in cases}
    times = timed_rounds(groups, args.rounds)
    load_after = load_average()

    rows = []
    print(f"{'shape':>13} {'tokens':>6} {'uncached CPU s':>14} {'cached CPU s':>12} "
          f"{'x fastest':>9} {'x per round':>15}")
    for shape, n in cases:
        t = times[shape, n]
        row = dict(shape=shape, tokens=n, uncached_cpu_s=t["uncached"]["cpu_s"],
                   cached_cpu_s=t["cached"]["cpu_s"], uncached_wall_s=t["uncached"]["wall_s"],
                   cached_wall_s=t["cached"]["wall_s"],
                   **speedup(t["uncached"]["cpu_s"], t["cached"]["cpu_s"]))
        rows.append(row)
        per_round = row["speedup_cpu_per_round"]
        print(f"{shape:>13} {n:6d} {min(row['uncached_cpu_s']):14.3f} {min(row['cached_cpu_s']):12.3f} "
              f"{row['speedup_cpu']:9.2f} {min(per_round):7.2f}-{max(per_round):<7.2f}")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    if args.write:
        recorder.write(args.write, {
            "rows": rows, "rounds": args.rounds, "batch": 1, "source_len": SOURCE_LEN,
            "vocab": VOCAB, "dtype": "float32", "clock": "time.process_time",
            "load_average": {"before": load_before, "after": load_after}, "clean_tree": clean,
            "shapes": {s: dict(zip(("d_model", "heads", "layers", "d_ff"), SHAPES[s]))
                       for s in args.shapes}})
        print("written to", args.write, "" if clean else "(flagged: clean_tree false)")


if __name__ == "__main__":
    main()
