"""A loop over heads against one batched computation: how long each takes, in NumPy and PyTorch.

Two chapters discuss it: multi-head attention (is batching the heads what makes multi-head
attention fast?) and common mistakes (is the loop over heads a mistake?). Both read one results
file written by this module, so they quote the same numbers and reach the same verdict:

    OMP_NUM_THREADS=1 python -m aiayn.lab.head_loop_timing \\
        --out results/multi_head_attention/heads_loop.json

``measure`` times, for each sequence length T, batch 1, d_model = 512, 8 heads, float32, no
mask, no gradients:

  numpy "loop"      ``aiayn.lab.naive_attention.multi_head_attention_loop``: one head at a time
  numpy "views"     all heads batched, on strided views (no ``np.ascontiguousarray``)
  numpy "course"    ``aiayn.np.attention.MultiHeadAttention``: heads batched, contiguous
  torch "loop"      ``torch_heads_loop``: one head at a time, slicing the projections' weights
  torch "batched"   ``aiayn.pt.attention.MultiHeadAttention``

and, once, the softmax of (1, 8, 512, 512) scores over all heads at once against head by head.
All variants of one length run in interleaved rounds (``best_times_ms``) and each keeps its best
time, the measurement least disturbed by other processes on the machine. They are checked to
agree before anything is timed.
"""

import argparse
import math
import os

import numpy as np
import torch

from ..convert import numpy_state
from ..np import attention as np_attention
from ..pt import attention as pt_attention
from .naive_attention import (astype, best_times_ms, multi_head_attention_loop,
                              multi_head_attention_views)

LENGTHS = (8, 32, 128, 512)


def torch_heads_loop(mha, x: torch.Tensor) -> torch.Tensor:
    """Self-attention of ``x`` (B, T, d_model) one head at a time, slicing each projection's
    weight rows, as the course's source material writes it; same result as ``mha(x, x, x)[0]``."""
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


def measure(lengths=LENGTHS, d_model: int = 512, heads: int = 8, budget_s: float = 1.5,
            rounds: int = 2000, seed: int = 0) -> dict:
    """Best time per call in milliseconds: ``{"lengths": [...], "numpy_ms": {variant: [per
    length]}, "torch_ms": {...}, "softmax_ms": {"at once": ms, "head by head": ms}, ...}``.
    ``budget_s`` caps the seconds spent per length (and on the softmax); ``rounds`` caps the
    rounds. Short sequences run several calls per round, so that a call is not timed alone."""
    lengths = [int(T) for T in lengths]
    if not lengths or min(lengths) < 1:
        raise ValueError(f"lengths must be positive ints, got {lengths!r}")
    if budget_s <= 0:
        raise ValueError(f"budget_s must be positive, got {budget_s!r}")
    result = {"lengths": lengths, "d_model": d_model, "heads": heads, "dtype": "float32",
              "batch": 1, "budget_s": budget_s,
              "numpy_ms": {"loop": [], "views": [], "course": []},
              "torch_ms": {"loop": [], "batched": []}}
    for T in lengths:
        variants = _variants(T, d_model, heads, seed)
        names = list(variants)
        best = best_times_ms({name: variants[name] for name in names}, calls=max(1, 64 // T),
                             rounds=rounds, budget_s=budget_s)
        for library, variant in names:
            result[f"{library}_ms"][variant].append(best[library, variant])
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((1, heads, 512, 512)).astype(np.float32)
    result["softmax_ms"] = best_times_ms(
        {"at once": lambda: np_attention.masked_softmax(scores),
         "head by head": lambda: [np_attention.masked_softmax(scores[:, i]) for i in range(heads)]},
        calls=2, rounds=rounds, budget_s=budget_s)
    return result


def ratios(values: dict) -> dict:
    """Loop / batched (and views / course) per length, from ``measure``'s result."""
    numpy_ms, torch_ms = values["numpy_ms"], values["torch_ms"]
    return {
        "numpy_loop": [a / b for a, b in zip(numpy_ms["loop"], numpy_ms["course"])],
        "numpy_views": [a / b for a, b in zip(numpy_ms["views"], numpy_ms["course"])],
        "torch_loop": [a / b for a, b in zip(torch_ms["loop"], torch_ms["batched"])],
        "softmax_head_by_head": values["softmax_ms"]["head by head"] / values["softmax_ms"]["at once"],
    }


def print_table(values: dict) -> None:
    """The measurement as a table: milliseconds per call, and loop / batched."""
    r = ratios(values)
    print(f"{'':>5} {'------------- NumPy, ms -------------':>38}  {'---- PyTorch, ms ----':>21}  "
          f"{'loop / batched':>14}")
    print(f"{'T':>5} {'loop':>9} {'views':>9} {'course':>9} {'':>8}  {'loop':>10} {'batched':>10}  "
          f"{'NumPy':>6} {'PyTorch':>7}")
    for i, T in enumerate(values["lengths"]):
        print(f"{T:5d} {values['numpy_ms']['loop'][i]:9.2f} {values['numpy_ms']['views'][i]:9.2f} "
              f"{values['numpy_ms']['course'][i]:9.2f} {'':>8}  {values['torch_ms']['loop'][i]:10.2f} "
              f"{values['torch_ms']['batched'][i]:10.2f}  {r['numpy_loop'][i]:6.2f} {r['torch_loop'][i]:7.2f}")
    softmax = values["softmax_ms"]
    print(f"softmax of (1, {values['heads']}, 512, 512) scores: all heads at once "
          f"{softmax['at once']:.2f} ms, head by head {softmax['head by head']:.2f} ms")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="results file to write (JSON)")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per length (default 30)")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS))
    args = parser.parse_args(argv)
    from ..experiments.record import Recorder

    torch.set_num_threads(1)
    load_before = os.getloadavg()
    with Recorder() as recorder:
        values = measure(args.lengths, budget_s=args.budget)
    values["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "")
    # Other processes' load, 1-minute averages before and after: a busy machine inflates every
    # time, and best-of-rounds corrects for that only in part.
    values["load_average"] = [round(load_before[0], 2), round(os.getloadavg()[0], 2)]
    print_table(values)
    recorder.write(args.out, values)
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
