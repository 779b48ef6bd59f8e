"""A loop over heads against one batched computation: CPU time of each, in NumPy and PyTorch.

Two chapters read the results file this module writes: multi-head attention (is batching the
heads what makes multi-head attention fast?) and common mistakes (is the loop a mistake?):

    OMP_NUM_THREADS=1 python -m aiayn.lab.head_loop_timing \\
        --out results/multi_head_attention/heads_loop.json

Run it on a quiet machine (nothing else running): the file records the load average before and
after, and the command warns when the machine was busy. ``measure`` times, for each sequence
length T, batch 1, d_model = 512, 8 heads, float32, no mask, no gradients:

  numpy "loop"      ``aiayn.lab.naive_attention.multi_head_attention_loop``: one head at a time
  numpy "views"     all heads batched, on strided views (no ``np.ascontiguousarray``)
  numpy "course"    ``aiayn.np.attention.MultiHeadAttention``: heads batched, contiguous
  torch "loop"      ``torch_heads_loop``: one head at a time, slicing the projections' weights
  torch "batched"   ``aiayn.pt.attention.MultiHeadAttention``

and the softmax of (1, 8, 512, 512) scores over all heads at once against head by head. The
clock is this process's CPU time (``time.process_time``), which other processes' load disturbs
far less than wall time. All variants of one length run in interleaved rounds, the starting
variant rotating, and every round's time per call is kept: the headline is the minimum over
rounds, the spread is that of the per-round ratios (loop and batched timed in the same round,
so a ratio compares like with like). The variants are checked to agree before any is timed.
"""

import argparse
import math
import os
import time

import numpy as np
import torch

from ..convert import numpy_state
from ..np import attention as np_attention
from ..pt import attention as pt_attention
from .naive_attention import astype, multi_head_attention_loop, multi_head_attention_views

LENGTHS = (8, 32, 128, 512)
PAIRS = {"numpy": ("loop", "course"), "torch": ("loop", "batched")}  # (loop, batched) per library


def torch_heads_loop(mha, x: torch.Tensor) -> torch.Tensor:
    """Self-attention of ``x`` (B, T, d_model) one head at a time, slicing each projection's
    weight rows, as most tutorials write it; same result as ``mha(x, x, x)[0]``."""
    d_k = mha.d_model // mha.num_heads
    heads = []
    for h in range(mha.num_heads):
        rows = slice(h * d_k, (h + 1) * d_k)
        q = x @ mha.w_q.weight[rows].T + mha.w_q.bias[rows]
        k = x @ mha.w_k.weight[rows].T + mha.w_k.bias[rows]
        v = x @ mha.w_v.weight[rows].T + mha.w_v.bias[rows]
        weights = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d_k), dim=-1)
        heads.append(weights @ v)
    return mha.w_o(torch.cat(heads, dim=-1))


def _variants(T: int, d_model: int, heads: int, seed: int) -> dict:
    torch.manual_seed(seed)
    pt_mha = pt_attention.MultiHeadAttention(d_model, heads).eval()
    np_mha64 = np_attention.MultiHeadAttention(d_model, heads)
    np_mha64.load_state_dict(numpy_state(pt_mha.state_dict()))
    np_mha = astype(np_mha64, np.float32)  # the NumPy module is float64 by design
    x = torch.randn(1, T, d_model)
    xn = x.numpy()

    def no_grad(f):
        def run():
            with torch.no_grad():
                return f()
        return run

    variants = {
        ("numpy", "loop"): lambda: multi_head_attention_loop(np_mha, xn, xn, xn)[0],
        ("numpy", "views"): lambda: multi_head_attention_views(np_mha, xn, xn, xn)[0],
        ("numpy", "course"): lambda: np_mha(xn, xn, xn)[0],
        ("torch", "loop"): no_grad(lambda: torch_heads_loop(pt_mha, x).numpy()),
        ("torch", "batched"): no_grad(lambda: pt_mha(x, x, x)[0].numpy()),
    }
    reference = variants["torch", "batched"]()
    for name, run in variants.items():
        difference = float(np.abs(run() - reference).max())
        if difference > 1e-4:
            raise AssertionError(f"{name} differs from the batched PyTorch module by {difference:.2e}")
    return variants


def cpu_rounds_ms(variants: dict, calls: int, rounds: int, budget_s: float) -> dict:
    """CPU milliseconds per call of each zero-argument callable, one entry per round: the
    variants run interleaved, each ``calls`` times a round; no new round starts once
    ``budget_s`` CPU seconds are spent (the first round always runs)."""
    names, start = list(variants), time.process_time()
    times = {name: [] for name in names}
    for r in range(rounds):
        if r and time.process_time() - start >= budget_s:
            break
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.process_time()
            for _ in range(calls):
                variants[name]()
            # 4 significant digits: finer than the clock's repeatability, and a smaller file
            times[name].append(float(f"{(time.process_time() - t0) / calls * 1e3:.4g}"))
    return times


def measure(lengths=LENGTHS, d_model: int = 512, heads: int = 8, budget_s: float = 1.5,
            rounds: int = 2000, seed: int = 0) -> dict:
    """``{"lengths", "rounds_ms": {library: {variant: [[ms per round] per length]}},
    "numpy_ms"/"torch_ms": {variant: [minimum over rounds, per length]}, "softmax_rounds_ms",
    "softmax_ms", ...}``. ``budget_s`` caps the CPU seconds per length (and for the softmax);
    ``rounds`` caps the rounds. Short sequences run several calls per round."""
    lengths = [int(T) for T in lengths]
    if not lengths or min(lengths) < 1:
        raise ValueError(f"lengths must be positive ints, got {lengths!r}")
    if budget_s <= 0:
        raise ValueError(f"budget_s must be positive, got {budget_s!r}")
    rounds_ms = {"numpy": {"loop": [], "views": [], "course": []}, "torch": {"loop": [], "batched": []}}
    for T in lengths:
        timed = cpu_rounds_ms(_variants(T, d_model, heads, seed), calls=max(1, 64 // T),
                              rounds=rounds, budget_s=budget_s)
        for (library, variant), per_round in timed.items():
            rounds_ms[library][variant].append(per_round)
    scores = np.random.default_rng(seed).standard_normal((1, heads, 512, 512)).astype(np.float32)
    softmax = cpu_rounds_ms(
        {"at once": lambda: np_attention.masked_softmax(scores),
         "head by head": lambda: [np_attention.masked_softmax(scores[:, i]) for i in range(heads)]},
        calls=2, rounds=rounds, budget_s=budget_s)
    result = {"lengths": lengths, "d_model": d_model, "heads": heads, "dtype": "float32", "batch": 1,
              "budget_s": budget_s, "clock": "CPU time of this process (time.process_time)",
              "rounds_ms": rounds_ms, "softmax_rounds_ms": softmax,
              "softmax_ms": {name: min(ms) for name, ms in softmax.items()}}
    for library, variants in rounds_ms.items():
        result[f"{library}_ms"] = {v: [min(per_round) for per_round in per_length]
                                   for v, per_length in variants.items()}
    return result


def ratios(values: dict) -> dict:
    """Loop / batched (and views / course) of the minimum times, per length."""
    numpy_ms, torch_ms = values["numpy_ms"], values["torch_ms"]
    return {
        "numpy_loop": [a / b for a, b in zip(numpy_ms["loop"], numpy_ms["course"])],
        "numpy_views": [a / b for a, b in zip(numpy_ms["views"], numpy_ms["course"])],
        "torch_loop": [a / b for a, b in zip(torch_ms["loop"], torch_ms["batched"])],
        "softmax_head_by_head": values["softmax_ms"]["head by head"] / values["softmax_ms"]["at once"],
    }


def round_ratios(values: dict, library: str) -> list[tuple[float, float, float]]:
    """(10th percentile, median, 90th percentile) over rounds of loop / batched, per length:
    the spread of the ratio, each round's loop compared with the same round's batched call."""
    loop, batched = (values["rounds_ms"][library][v] for v in PAIRS[library])
    return [tuple(float(q) for q in np.percentile(np.divide(a, b), [10, 50, 90]))
            for a, b in zip(loop, batched)]


def print_table(values: dict) -> None:
    """Minimum CPU milliseconds per call, and loop / batched with the spread over rounds."""
    print(f"{'':>5}  {'-------------- NumPy --------------':^33}  {'------------- PyTorch -------------':^33}")
    print(f"{'T':>5}  " + "  ".join(f"{'loop':>7} {'batched':>7} {'loop / batched':>17}" for _ in PAIRS))
    spread = {library: round_ratios(values, library) for library in PAIRS}
    for i, T in enumerate(values["lengths"]):
        cells = []
        for library, (loop, batched) in PAIRS.items():
            ms = values[f"{library}_ms"]
            p10, median, p90 = spread[library][i]
            cells.append(f"{ms[loop][i]:7.2f} {ms[batched][i]:7.2f} {median:5.2f} ({p10:.2f}-{p90:.2f})")
        print(f"{T:5d}  " + "  ".join(cells))
    print("ms: minimum CPU time per call over the rounds")
    print("loop / batched: median over the rounds (10th-90th percentile)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="results file to write (JSON)")
    parser.add_argument("--budget", type=float, default=30.0, help="CPU seconds per length (default 30)")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    args = parser.parse_args(argv)
    if args.budget <= 0 or min(args.lengths) < 1:
        print(f"error: --budget ({args.budget}) and --lengths ({args.lengths}) must be positive")
        return 2
    from ..experiments.record import Recorder

    torch.set_num_threads(1)
    cpus, before = os.cpu_count() or 1, os.getloadavg()
    if before[0] > 0.5:
        print(f"warning: load average {before[0]:.2f} on {cpus} CPUs: other processes are running, "
              "and the timings will be disturbed; run it on a quiet machine")
    with Recorder() as recorder:
        values = measure(args.lengths, budget_s=args.budget)
    values["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "")
    values["cpu_count"] = cpus
    # Other processes' load (1, 5 and 15-minute averages) before and after: on a busy machine
    # CPU time grows too (shared caches, memory bandwidth), less than wall time.
    values["load_average"] = {"before": [round(x, 2) for x in before],
                              "after": [round(x, 2) for x in os.getloadavg()]}
    print_table(values)
    recorder.write(args.out, values)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
