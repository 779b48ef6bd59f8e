"""Multi-head attention against ``nn.MultiheadAttention``: inference, a training step, decoding.

Times, in one run and on one machine, at the paper's base sizes by default (T=512, d_model=512,
8 heads, float32, batch 1, no mask), three workloads:

  forward   inference: query = key = value = x (B, T, d_model), no gradients
  train     a training step's share: forward, then backward of a fixed output gradient, giving
            the gradients of every parameter and of x (dropout 0, so all variants are one function)
  decode    one decoding step without a cache: one query (B, 1, d_model) against T keys

and these variants:

  nn.MultiheadAttention                 PyTorch's own module: the baseline (asked for no
                                        weights, it calls F.scaled_dot_product_attention)
  aiayn.pt MultiHeadAttention           the course's explicit module: softmax(Q K^T / sqrt(d_k)) V,
                                        weights materialised and returned
  aiayn.pt MultiHeadAttention, fused    the same module with ``fused = True``:
                                        F.scaled_dot_product_attention, no weights
  aiayn.pt @ <commit>                   with --before COMMIT: code/aiayn/pt/attention.py as of
                                        COMMIT (e.g. 1747c71, before the softmax change)
  aiayn.np MultiHeadAttention           forward and decode: the NumPy module, heads contiguous
  NumPy batched on strided views        forward: the same without np.ascontiguousarray
  NumPy loop over heads                 forward: head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)

All variants of a workload get the same weights and inputs and are checked to agree (outputs;
in training, the gradients of x) before anything is timed. They are timed in interleaved
rounds (every variant once per round, in a shuffled order), so a burst of load from another
process hits all of them; the median and the minimum over rounds are reported with their ratio
to the baseline's, and the median CPU time of this process (less disturbed by other processes).

    .venv/bin/python benchmarks/bench_attention.py [--T 512] [--rounds 30] [--threads N]
        [--workloads forward train decode] [--before 1747c71]

On a machine shared with other jobs, one thread per library suffers least from them: with two
BLAS threads, one descheduled thread stalls the other at every synchronisation.
"""

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import describe

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "nn.MultiheadAttention (baseline)"
EXPLICIT, FUSED = "aiayn.pt MultiHeadAttention", "aiayn.pt MultiHeadAttention, fused"

# NumPy, PyTorch and the course are imported inside the functions: BLAS and OpenMP read their
# thread counts at import time, and --threads must set them first.


def attention_at(commit: str):
    """code/aiayn/pt/attention.py as it was at ``commit``, imported as a module of aiayn.pt (so
    that its relative imports resolve) under a name of its own."""
    source = subprocess.run(["git", "show", f"{commit}:code/aiayn/pt/attention.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "attention.py"
    path.write_text(source, encoding="utf8")
    name = f"aiayn.pt._attention_{commit}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def build(workload: str, T: int, d_model: int, heads: int, before: str | None, seed: int = 0):
    """Name -> zero-argument callable that does the workload once and returns what the variants
    must agree on, as a float32 NumPy array: the output, or in training the gradient of x."""
    import numpy as np
    import torch
    from torch import nn

    from aiayn.convert import numpy_state
    from aiayn.lab.naive_attention import astype, multi_head_attention_loop, multi_head_attention_views
    from aiayn.np.attention import MultiHeadAttention as NumpyMHA
    from aiayn.pt.attention import MultiHeadAttention as TorchMHA

    torch.manual_seed(seed)
    ours = TorchMHA(d_model, heads)
    fused = TorchMHA(d_model, heads)
    fused.load_state_dict(ours.state_dict())
    fused.fused = True
    theirs = nn.MultiheadAttention(d_model, heads, dropout=0.0, batch_first=True)
    with torch.no_grad():  # nn.MultiheadAttention packs W_Q, W_K, W_V into one matrix
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)
    modules = {BASELINE: (theirs, lambda q, k, v: theirs(q, k, v, need_weights=False)[0]),
               EXPLICIT: (ours, lambda q, k, v: ours(q, k, v)[0]),
               FUSED: (fused, lambda q, k, v: fused(q, k, v)[0])}
    if before:
        old = attention_at(before).MultiHeadAttention(d_model, heads)
        old.load_state_dict(ours.state_dict())
        modules[f"aiayn.pt @ {before}"] = (old, lambda q, k, v: old(q, k, v)[0])
    x = torch.randn(1, T, d_model)
    query = x[:, -1:] if workload == "decode" else x

    def torch_variant(module, call):
        if workload == "train":
            module.train()
            grad = torch.randn(1, T, d_model, generator=torch.Generator().manual_seed(1))

            def step():
                xg = x.clone().requires_grad_(True)
                module.zero_grad(set_to_none=True)
                call(xg, xg, xg).backward(grad)
                return xg.grad.numpy()
            return step
        module.eval()

        @torch.inference_mode()
        def run():
            return call(query, x, x).numpy()
        return run

    variants = {name: torch_variant(*pair) for name, pair in modules.items()}
    if workload != "train":
        mha64 = NumpyMHA(d_model, heads)
        mha64.load_state_dict(numpy_state(ours.state_dict()))
        mha = astype(mha64, np.float32)  # the NumPy module is float64 by design; like with like
        xn, qn = x.numpy(), query.numpy()
        variants["aiayn.np MultiHeadAttention"] = lambda: mha(qn, xn, xn)[0]
    if workload == "forward":
        variants["NumPy batched on strided views"] = lambda: multi_head_attention_views(mha, xn, xn,
                                                                                        xn)[0]
        variants["NumPy loop over heads"] = lambda: multi_head_attention_loop(mha, xn, xn, xn)[0]
    return variants


def check_agreement(variants: dict) -> float:
    import numpy as np

    outputs = {name: f() for name, f in variants.items()}
    reference = outputs[BASELINE]
    worst = max(float(np.abs(out - reference).max()) for out in outputs.values())
    if worst > 1e-4:  # float32 with different summation orders: ~1e-6 expected
        raise RuntimeError(f"variants disagree: max abs difference {worst:.2e}")
    return worst


def time_interleaved(variants: dict, rounds: int, warmup: int = 3) -> tuple[dict, dict]:
    """Wall-clock and CPU seconds of every call, per variant."""
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            variants[name]()
    times, cpu = {name: [] for name in names}, {name: [] for name in names}
    rng = random.Random(0)
    for _ in range(rounds):
        rng.shuffle(names)
        for name in names:
            start, start_cpu = time.perf_counter(), time.process_time()
            variants[name]()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return times, cpu


def report(times: dict, cpu: dict) -> None:
    # The median is the typical cost; the minimum is the least disturbed by other processes
    # (on a shared machine, trust the ratio of minima more). Both are relative to the baseline.
    # CPU time (all of this process's threads) is disturbed less by other processes than wall
    # time; with one thread it is the work done.
    base = times[BASELINE]
    base_median, base_min = statistics.median(base), min(base)
    base_cpu = statistics.median(cpu[BASELINE])
    print(f"{'variant':36s} {'median ms':>9s} {'x base':>7s} {'min ms':>8s} {'x base':>7s} "
          f"{'CPU ms':>8s} {'x base':>7s}")
    for name, ts in times.items():
        median, best, cpu_median = statistics.median(ts), min(ts), statistics.median(cpu[name])
        print(f"{name:36s} {median * 1e3:9.2f} {median / base_median:7.2f} "
              f"{best * 1e3:8.2f} {best / base_min:7.2f} {cpu_median * 1e3:8.2f} "
              f"{cpu_median / base_cpu:7.2f}")
    if "NumPy loop over heads" in times:
        loop, batched = times["NumPy loop over heads"], times["aiayn.np MultiHeadAttention"]
        print(f"NumPy loop / NumPy batched: {statistics.median(loop) / statistics.median(batched):.2f} "
              f"(medians), {min(loop) / min(batched):.2f} (minima)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--T", type=int, default=512, help="sequence length (keys; queries too, "
                        "except in decode)")
    parser.add_argument("--d-model", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS/OpenMP threads for NumPy and PyTorch (default: the libraries' own)")
    parser.add_argument("--workloads", nargs="+", default=["forward", "train", "decode"],
                        choices=["forward", "train", "decode"])
    parser.add_argument("--before", default=None, metavar="COMMIT",
                        help="also time code/aiayn/pt/attention.py as of COMMIT (e.g. 1747c71)")
    args = parser.parse_args()
    if args.threads is not None:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)

    print(describe())
    for workload in args.workloads:
        queries = 1 if workload == "decode" else args.T
        print(f"\n{workload}: {queries} queries, T={args.T} keys, d_model={args.d_model}, "
              f"heads={args.heads}, batch 1, float32, median of {args.rounds} interleaved rounds")
        variants = build(workload, args.T, args.d_model, args.heads, args.before)
        print(f"all variants agree: max abs difference {check_agreement(variants):.1e}")
        report(*time_interleaved(variants, args.rounds))


if __name__ == "__main__":
    main()
