"""Multi-head attention forward pass: a Python loop over heads vs one batched computation.

Times, in one run and on one machine, at the paper's base sizes by default
(T=512, d_model=512, 8 heads, float32, batch 1, no mask, no gradients):

  nn.MultiheadAttention               PyTorch's own module: the baseline
  aiayn.pt MultiHeadAttention         the course's PyTorch module, heads batched
  aiayn.np MultiHeadAttention         the course's NumPy module, heads batched, contiguous
  NumPy batched on strided views      same computation without np.ascontiguousarray
  NumPy loop over heads               head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), i = 1..h

All five get the same weights and are checked to agree before anything is timed. The
variants are timed in interleaved rounds (every variant once per round, in a shuffled
order), so a burst of load from another process hits all of them, and the median over
rounds is reported with its ratio to the baseline's median.

    .venv/bin/python benchmarks/bench_attention.py [--T 512] [--rounds 30] [--threads N]

On a machine shared with other jobs, one thread per library suffers least from them: with two
BLAS threads, one descheduled thread stalls the other at every synchronisation.
"""

import argparse
import os
import random
import statistics
import time

from machine import describe

# NumPy, PyTorch and the course are imported inside the functions: BLAS and OpenMP read their
# thread counts at import time, and --threads must set them first.


def build(T: int, d_model: int, heads: int, seed: int = 0) -> dict:
    """Name -> zero-argument callable returning the output as a float32 NumPy array."""
    import numpy as np
    import torch
    from torch import nn

    from aiayn.convert import numpy_state
    from aiayn.lab.naive_attention import astype, multi_head_attention_loop, multi_head_attention_views
    from aiayn.np.attention import MultiHeadAttention as NumpyMHA
    from aiayn.pt.attention import MultiHeadAttention as TorchMHA

    torch.manual_seed(seed)
    ours = TorchMHA(d_model, heads).eval()
    theirs = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    with torch.no_grad():  # nn.MultiheadAttention packs W_Q, W_K, W_V into one matrix
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
    mha64 = NumpyMHA(d_model, heads)
    mha64.load_state_dict(numpy_state(ours.state_dict()))
    mha = astype(mha64, np.float32)  # the NumPy module is float64 by design; compare like with like
    x = torch.randn(1, T, d_model)
    xn = x.numpy()

    @torch.inference_mode()
    def run_nn():
        return theirs(x, x, x, need_weights=False)[0].numpy()

    @torch.inference_mode()
    def run_ours_pt():
        return ours(x, x, x)[0].numpy()

    return {
        "nn.MultiheadAttention (baseline)": run_nn,
        "aiayn.pt MultiHeadAttention": run_ours_pt,
        "aiayn.np MultiHeadAttention": lambda: mha(xn, xn, xn)[0],
        "NumPy batched on strided views": lambda: multi_head_attention_views(mha, xn, xn, xn)[0],
        "NumPy loop over heads": lambda: multi_head_attention_loop(mha, xn, xn, xn)[0],
    }


def check_agreement(variants: dict) -> float:
    import numpy as np

    outputs = {name: f() for name, f in variants.items()}
    reference = next(iter(outputs.values()))
    worst = max(float(np.abs(out - reference).max()) for out in outputs.values())
    if worst > 1e-4:  # float32 with different summation orders: ~1e-6 expected
        raise RuntimeError(f"variants disagree: max abs difference {worst:.2e}")
    return worst


def time_interleaved(variants: dict, rounds: int, warmup: int = 3) -> dict:
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            variants[name]()
    times = {name: [] for name in names}
    rng = random.Random(0)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--T", type=int, default=512, help="sequence length (queries = keys)")
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS/OpenMP threads for NumPy and PyTorch (default: the libraries' own)")
    args = parser.parse_args()
    if args.threads is not None:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)

    print(describe())
    print(f"T={args.T}, d_model={args.d_model}, heads={args.heads}, batch 1, float32, "
          f"forward only, median of {args.rounds} interleaved rounds")
    variants = build(args.T, args.d_model, args.heads)
    print(f"all variants agree: max abs difference {check_agreement(variants):.1e}")
    times = time_interleaved(variants, args.rounds)
    # The median is the typical cost; the minimum is the least disturbed by other processes
    # (on a shared machine, trust the ratio of minima more). Both are relative to the baseline.
    base = next(iter(times.values()))
    base_median, base_min = statistics.median(base), min(base)
    print(f"{'variant':34s} {'median ms':>9s} {'x base':>7s} {'min ms':>8s} {'x base':>7s}")
    for name, ts in times.items():
        median, best = statistics.median(ts), min(ts)
        print(f"{name:34s} {median * 1e3:9.2f} {median / base_median:7.2f} "
              f"{best * 1e3:8.2f} {best / base_min:7.2f}")
    loop, batched = times["NumPy loop over heads"], times["aiayn.np MultiHeadAttention"]
    print(f"NumPy loop / NumPy batched: {statistics.median(loop) / statistics.median(batched):.2f} "
          f"(medians), {min(loop) / min(batched):.2f} (minima)")


if __name__ == "__main__":
    main()
