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

Rounds are interleaved (in every round, each shape and length once, in a shuffled order, the two
variants back to back in a shuffled order), so a burst of load from another process hits both;
reported: median and minimum wall-clock seconds per variant, and the ratio uncached / cached of
medians, of minima, and the median of the per-round ratios; and the ratio of the medians of the
process's CPU time, which other processes on a shared machine disturb much less than wall time
(with one thread, CPU time is the work done).

    .venv/bin/python benchmarks/bench_decoding.py [--rounds 5] [--threads 1] [--write FILE]

``--write`` stores the table with its provenance (``aiayn.experiments.record``): the chapter on
fast decoding reads results/fast_decoding/bench_decoding.json.
"""

import argparse
import os
import random
import statistics
import time

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
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import torch

    from aiayn.experiments.record import Recorder

    torch.set_num_threads(args.threads)
    recorder = Recorder()
    print(describe())
    print(f"greedy decoding, batch 1, source {SOURCE_LEN} tokens, vocabulary {VOCAB}, float32, "
          f"{args.rounds} interleaved rounds")
    models = {shape: build(shape) for shape in args.shapes}
    cases = [(shape, n) for shape in args.shapes for n in args.lengths]
    for shape, n in cases:  # warm-up, and the two variants agree
        model, src = models[shape]
        if not torch.equal(decode(model, src, n, True), decode(model, src, n, False)):
            raise RuntimeError(f"{shape}, {n} tokens: cached and uncached ids differ")
    times = {(shape, n, c): [] for shape, n in cases for c in (True, False)}
    cpu = {key: [] for key in times}
    rng = random.Random(0)
    for _ in range(args.rounds):
        rng.shuffle(cases)
        for shape, n in cases:
            model, src = models[shape]
            for use_cache in rng.sample([True, False], 2):
                start, start_cpu = time.perf_counter(), time.process_time()
                decode(model, src, n, use_cache)
                times[shape, n, use_cache].append(time.perf_counter() - start)
                cpu[shape, n, use_cache].append(time.process_time() - start_cpu)

    rows = []
    print(f"{'shape':>13} {'tokens':>6} {'uncached s':>10} {'cached s':>9} {'x medians':>9} "
          f"{'x minima':>8} {'x per round':>11} {'x CPU time':>10}")
    for shape in args.shapes:
        for n in args.lengths:
            cached, uncached = times[shape, n, True], times[shape, n, False]
            row = dict(shape=shape, tokens=n,
                       uncached_median_s=statistics.median(uncached), uncached_min_s=min(uncached),
                       cached_median_s=statistics.median(cached), cached_min_s=min(cached),
                       speedup_medians=statistics.median(uncached) / statistics.median(cached),
                       speedup_minima=min(uncached) / min(cached),
                       speedup_per_round=statistics.median(u / c for u, c in zip(uncached, cached)),
                       uncached_cpu_median_s=statistics.median(cpu[shape, n, False]),
                       cached_cpu_median_s=statistics.median(cpu[shape, n, True]))
            row["speedup_cpu"] = row["uncached_cpu_median_s"] / row["cached_cpu_median_s"]
            rows.append(row)
            print(f"{shape:>13} {n:6d} {row['uncached_median_s']:10.3f} "
                  f"{row['cached_median_s']:9.3f} {row['speedup_medians']:9.1f} "
                  f"{row['speedup_minima']:8.1f} {row['speedup_per_round']:11.1f} "
                  f"{row['speedup_cpu']:10.1f}")
    if args.write:
        recorder.write(args.write, {"rows": rows, "rounds": args.rounds, "batch": 1,
                                    "source_len": SOURCE_LEN, "vocab": VOCAB, "dtype": "float32",
                                    "shapes": {s: dict(zip(("d_model", "heads", "layers", "d_ff"),
                                                           SHAPES[s])) for s in args.shapes}})
        print("written to", args.write)


if __name__ == "__main__":
    main()
