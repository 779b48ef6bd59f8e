"""The shapes that flow through the Transformer of Figure 1, read off the real model.

``trace_shapes`` runs one forward pass of an ``aiayn.pt.model.Transformer`` with forward hooks
on the modules a reader meets in Figure 1 (embeddings, positional encoding, every encoder and
decoder layer and its sub-layers, the feed-forward network's inner layer, the stacks, the output
projection) and returns what each one produced, in the order it ran. Nothing is computed by hand, so the table cannot drift from
the code.
"""

import re

import torch

from ..pt.model import Transformer

# Module names (as in ``model.named_modules()``) that the trace reports.
TRACED = re.compile(
    r"src_embed|tgt_embed|pos|out_proj"
    r"|(encoder|decoder)(\.norm|\.layers\.\d+(\.(self_attn|cross_attn|ffn|ffn\.w_1))?)?"
)


def _shape(tensor: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(s) for s in tensor.shape)


def _records(name: str, output) -> list[tuple[str, tuple]]:
    # MultiHeadAttention returns (output, weights): the output flows on to the residual
    # connection; the weights (B, H, T_q, T_k) are listed too, as "<name> weights".
    if isinstance(output, tuple):
        return [(name, _shape(output[0])), (f"{name} weights", _shape(output[1]))]
    return [(name, _shape(output))]


def trace_shapes(model: Transformer, src: torch.Tensor, tgt: torch.Tensor) -> list[tuple[str, tuple]]:
    """One teacher-forced forward pass ``model(src, tgt)``; returns [(module name, output shape)]
    in the order the modules finished; an attention sub-layer adds a second entry,
    "<name> weights", for its attention weights. A module that runs twice (``pos``, used by
    both stacks) appears twice. A hook fires when its module *returns*, so a layer is listed after its
    sub-layers. Runs without gradients; the hooks are removed afterwards, even on error."""
    if not isinstance(model, Transformer):
        raise ValueError(f"model must be an aiayn.pt.model.Transformer, got {type(model).__name__}")
    records: list[tuple[str, tuple]] = []
    handles = []
    try:
        for name, module in model.named_modules():
            if TRACED.fullmatch(name):
                handles.append(module.register_forward_hook(
                    lambda _module, _inputs, output, name=name: records.extend(
                        _records(name, output))))
        with torch.no_grad():
            model(src, tgt)
    finally:
        for handle in handles:
            handle.remove()
    return records


def format_trace(records: list[tuple[str, tuple]]) -> str:
    """The trace as an aligned two-column text table."""
    width = max(len("module"), *(len(name) for name, _ in records))
    lines = [f"{'module':<{width}}  output shape", f"{'-' * width}  {'-' * 12}"]
    lines += [f"{name:<{width}}  {shape}" for name, shape in records]
    return "\n".join(lines)


__all__ = ["TRACED", "trace_shapes", "format_trace"]
