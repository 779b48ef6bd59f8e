"""Memory-efficient attention: the bytes attention holds at once against the sequence length, the
paper's function against an online softmax over blocks of keys and PyTorch's fused kernel
("After the paper": Rabe & Staats, 2021; Dao et al., 2022).

    python -m aiayn.experiments.after_memory                 # results/after_the_paper/memory.json
    python -m aiayn.experiments.after_memory --lengths 128 256 --out /tmp/memory.json

For each length n: one head (B = H = 1), d_k = d_v = 64, queries, keys and values drawn once.

- NumPy, float64: the peak of memory allocated while the call runs, as ``tracemalloc`` traces
  it (the inputs, made before, are not counted; the output is), for the paper's
  ``scaled_dot_product_attention`` and ``chunked_attention`` with blocks of ``--block`` keys.
- PyTorch, float32: the peak bytes of tensors alive at once (``aiayn.lab.complexity.peak_bytes``:
  tensors an operator creates; a kernel's internal scratch space is invisible to it) for the
  paper's function, ``chunked_attention`` and ``F.scaled_dot_product_attention``.

And the outputs' largest difference from the paper's. Bytes, not seconds: a count that every
machine repeats exactly (timing needs a quiet machine; this one is shared).
"""

import argparse
import sys
import tracemalloc

import numpy as np
import torch
import torch.nn.functional as F

from ..lab.complexity import peak_bytes
from ..np.attention import scaled_dot_product_attention as np_attention
from ..np.chunked import chunked_attention as np_chunked
from ..pt.attention import scaled_dot_product_attention as pt_attention
from ..pt.chunked import chunked_attention as pt_chunked
from .record import REPOSITORY, Recorder

PROG = "python -m aiayn.experiments.after_memory"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "memory.json"
LENGTHS = (128, 256, 512, 1024, 2048, 4096)
BLOCK = 128
D = 64


def traced_peak(fn) -> tuple[int, np.ndarray]:
    """(peak bytes NumPy allocated while ``fn()`` ran, its result)."""
    tracemalloc.start()
    try:
        out = fn()
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


def measure(n: int, block: int = BLOCK, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((1, 1, n, D)) for _ in range(3))
    paper_bytes, paper = traced_peak(lambda: np_attention(q, k, v)[0])
    chunked_bytes, chunked = traced_peak(lambda: np_chunked(q, k, v, None, block))
    tq, tk, tv = (torch.from_numpy(x).float() for x in (q, k, v))
    with torch.no_grad():
        t_paper = pt_attention(tq, tk, tv)[0]
        differences = {"numpy_chunked": float(np.abs(chunked - paper).max()),
                       "torch_chunked": float((pt_chunked(tq, tk, tv, None, block) - t_paper).abs().max()),
                       "torch_fused": float((F.scaled_dot_product_attention(tq, tk, tv) - t_paper).abs().max())}
    return {"n": n, "numpy_float64": {"paper": paper_bytes, "chunked": chunked_bytes},
            "torch_float32": {"paper": peak_bytes(lambda: pt_attention(tq, tk, tv)[0]),
                              "chunked": peak_bytes(lambda: pt_chunked(tq, tk, tv, None, block)),
                              "fused": peak_bytes(lambda: F.scaled_dot_product_attention(tq, tk, tv))},
            "score_matrix_bytes": {"float64": n * n * 8, "float32": n * n * 4},
            "max_difference_from_paper": differences}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS), help="sequence lengths n")
    p.add_argument("--block", type=int, default=BLOCK, help="keys per block (default %(default)s)")
    p.add_argument("--out", default=str(RESULTS), help="results file (default: %(default)s)")
    args = p.parse_args(argv)
    if min(args.lengths) < 1 or args.block < 1:
        print(f"{PROG}: error: lengths and --block must be positive", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        rows = [measure(n, args.block) for n in args.lengths]
    values = {"batch": 1, "heads": 1, "d_k": D, "d_v": D, "block": args.block, "rows": rows}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s)")
    for r in rows:
        print(f"n {r['n']:5d}  NumPy paper {r['numpy_float64']['paper'] / 2**20:8.1f} MiB  chunked "
              f"{r['numpy_float64']['chunked'] / 2**20:6.1f} MiB | PyTorch paper {r['torch_float32']['paper'] / 2**20:7.1f}"
              f"  chunked {r['torch_float32']['chunked'] / 2**20:5.1f}  fused {r['torch_float32']['fused'] / 2**20:5.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
