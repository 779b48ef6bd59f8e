"""RMSNorm against the paper's LayerNorm: what it costs, counted, and what it scores on Multi30k
("After the paper": Zhang & Sennrich, 2019).

    python -m aiayn.experiments.after_rmsnorm                # results/after_the_paper/rmsnorm.json

Cost, counted (no timings: this machine is shared), for rows of d_model = 128 features:

- arithmetic per element: the two formulas written out in elementary operators, each operator
  counted at the size of its largest operand (a sum over a row of n features counts n);
- operators: what PyTorch runs for ``F.layer_norm`` and ``F.rms_norm``, forwards and backwards
  (``aiayn.lab.layer_norm_cost.operators``; each one a pass over the data, and on a GPU a kernel);
- in the model: one forward pass of multi30k-cpu's model over a batch of 1,000 tokens a side,
  the matrix products' FLOPs (``torch.utils.flop_counter``) against the norms' arithmetic.

Quality: ``norm="rms"`` trained and scored as the base (``after_base``), seed k against the base's
seed k: the same batches and the same initial weights (a norm's weights are ones; RMSNorm has no
bias), so the pair differs in the norm alone.
"""

import sys

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils.flop_counter import FlopCounterMode

from ..config import TransformerConfig
from ..lab.layer_norm_cost import operators
from ..pt.model import Transformer
from ..train.configs import get_config
from .after_common import MULTI30K, multi30k_experiment
from .record import REPOSITORY

PROG = "python -m aiayn.experiments.after_rmsnorm"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "rmsnorm.json"
ARMS = {"rms": {"norm": "rms"}}
EPS = 1e-5


def layer_norm_written_out(x, weight, bias):
    """(x - mean) / sqrt(var + eps) * weight + bias, in elementary operators."""
    d = x.shape[-1]
    centred = x - x.sum(dim=-1, keepdim=True) / d
    var = (centred * centred).sum(dim=-1, keepdim=True) / d
    return centred / torch.sqrt(var + EPS) * weight + bias


def rms_norm_written_out(x, weight):
    """x / sqrt(mean(x^2) + eps) * weight, in elementary operators."""
    d = x.shape[-1]
    return x / torch.sqrt((x * x).sum(dim=-1, keepdim=True) / d + EPS) * weight


class ArithmeticCount(TorchFunctionMode):
    """Counts the arithmetic of the elementary operators called: each at the size of its largest
    tensor operand (n for a pass over n numbers, a row sum included)."""

    COUNTED = {"add", "radd", "sub", "rsub", "mul", "rmul", "div", "truediv", "rtruediv", "sum", "sqrt"}

    def __init__(self):
        super().__init__()
        self.operations = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "").strip("_") in self.COUNTED:
            self.operations += max(a.numel() for a in args if isinstance(a, torch.Tensor))
        return func(*args, **(kwargs or {}))


def arithmetic_per_element(fn, x, *weights) -> float:
    with torch.no_grad(), ArithmeticCount() as count:
        fn(x, *weights)
    return count.operations / x.numel()


def costs(d_model: int = 128, tokens: int = 1000) -> dict:
    """The counts of the module docstring."""
    x = torch.randn(tokens, d_model, requires_grad=True)
    weight, bias = torch.ones(d_model, requires_grad=True), torch.zeros(d_model, requires_grad=True)
    layer, rms = F.layer_norm(x, (d_model,), weight, bias, EPS), F.rms_norm(x, (d_model,), weight, EPS)
    upstream = torch.ones_like(layer)  # made outside the counted calls
    counts = {
        "arithmetic_per_element": {"layer": arithmetic_per_element(layer_norm_written_out, x, weight, bias),
                                   "rms": arithmetic_per_element(rms_norm_written_out, x, weight)},
        "operators": {
            "layer": {"forward": operators(lambda: F.layer_norm(x, (d_model,), weight, bias, EPS)),
                      "backward": operators(lambda: torch.autograd.grad(layer, (x, weight, bias), upstream))},
            "rms": {"forward": operators(lambda: F.rms_norm(x, (d_model,), weight, EPS)),
                    "backward": operators(lambda: torch.autograd.grad(rms, (x, weight), upstream))}},
        "parameters_per_norm": {"layer": 2 * d_model, "rms": d_model},
    }
    # The model: multi30k-cpu's shape (vocabulary 6,000), one batch of 1,000 source and target tokens.
    run = get_config(MULTI30K)
    config = TransformerConfig(run.vocab_size, run.vocab_size, d_model=run.d_model, num_heads=run.num_heads,
                               num_layers=run.num_layers, d_ff=run.d_ff, share_embeddings=True, max_len=256)
    model = Transformer(config).eval()
    src, tgt = torch.randint(4, run.vocab_size, (40, 25)), torch.randint(4, run.vocab_size, (40, 25))
    with torch.no_grad(), FlopCounterMode(display=False) as flops:
        model(src, tgt)
    norms = sum(1 for m in model.modules() if type(m).__name__ == "LayerNorm")
    per_element = counts["arithmetic_per_element"]
    counts["model_forward"] = {
        "batch": [40, 25], "matmul_flops": int(flops.get_total_flops()), "norms": norms,
        "norm_arithmetic": {kind: norms * src.numel() * d_model * per_element[kind] for kind in ("layer", "rms")}}
    return counts


def main(argv=None) -> int:
    return multi30k_experiment(PROG, RESULTS, ARMS, argv, extra=lambda: {"costs": costs()})


if __name__ == "__main__":
    sys.exit(main())
