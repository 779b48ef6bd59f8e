"""The three uses of attention (§3.2.3) in a small model, for the chapter attention_in_the_model.

- ``first_layer_weights``: the attention weights of the first layer's three attention modules
  (encoder self-attention, masked decoder self-attention, encoder-decoder attention), caught
  with forward hooks during one ordinary forward pass of the whole model: the chapter shows
  what the model's own masks produce, not a re-enactment of them.
- ``changed_positions``: which decoder outputs move when one decoder input changes, under a
  mask of the caller's choice (the causal mask's promise, tested by perturbation).
- ``query_and_key_mask`` and ``nan_after_updates``: what a mask that also blocks padded
  *queries* does. Such a mask empties whole rows, a plain softmax turns them into 0/0 = NaN,
  and the chapter's "Going deeper" box says how far the NaN travels through two updates of
  plain gradient descent; this is the experiment behind that box.
"""

from __future__ import annotations

import copy
import math

import torch

from ..pt import attention as pt_attn

USES = ("encoder self", "decoder self", "encoder-decoder")


def first_layer_weights(model, src: torch.Tensor, tgt: torch.Tensor) -> dict[str, torch.Tensor]:
    """{use: weights (B, H, T_q, T_k)} of the first encoder and decoder layer, from one
    ``model(src, tgt)`` call (no gradient). ``model`` is an ``aiayn.pt.model.Transformer`` whose
    attention is not fused (a fused module returns no weights)."""
    modules = {"encoder self": model.encoder.layers[0].self_attn,
               "decoder self": model.decoder.layers[0].self_attn,
               "encoder-decoder": model.decoder.layers[0].cross_attn}
    captured = {}

    def keep(name):
        def hook(module, inputs, output):
            if output[1] is None:
                raise ValueError("model: its attention is fused and returns no weights; "
                                 "build it with fused attention off")
            captured[name] = output[1].detach()  # MultiHeadAttention returns (out, weights)
        return hook

    handles = [m.register_forward_hook(keep(name)) for name, m in modules.items()]
    try:  # the hooks go whatever happens: a later forward pass must not keep catching weights
        with torch.no_grad():
            model(src, tgt)
    finally:
        for h in handles:
            h.remove()
    return captured


def changed_positions(model, tgt, changed, memory, src_mask, mask_of) -> list[list[int]]:
    """Per sentence, 1 where the decoder's output differs between the inputs ``tgt`` and
    ``changed`` (both (B, T) ids), 0 where it is the same to 1e-12; ``mask_of(ids)`` builds the
    decoder's self-attention mask."""
    if tgt.shape != changed.shape:
        raise ValueError(f"changed: shape {tuple(changed.shape)}, expected tgt's {tuple(tgt.shape)}")
    with torch.no_grad():
        before = model.decode(tgt, memory, src_mask, mask_of(tgt))
        after = model.decode(changed, memory, src_mask, mask_of(changed))
    return ((after - before).abs().amax(-1) > 1e-12).int().tolist()


def query_and_key_mask(real: torch.Tensor) -> torch.Tensor:
    """(B, T) booleans (True = a real token) -> (B, 1, T, T): query i may see key j only if both
    are real. The mask the chapter warns against: a padded query's row is empty."""
    if real.dtype != torch.bool or real.dim() != 2:
        raise ValueError(f"real: a (B, T) boolean tensor, got {real.dtype} of shape {tuple(real.shape)}")
    return real[:, None, :, None] & real[:, None, None, :]


def naive_attention(layer, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Self-attention with ``layer``'s weights and a plain softmax over scores filled with -inf:
    an empty row of ``mask`` becomes NaN, as it does in code without ``masked_softmax``."""
    q, k, v = (pt_attn.split_heads(proj(x), layer.num_heads) for proj in (layer.w_q, layer.w_k, layer.w_v))
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return layer.w_o(pt_attn.merge_heads(weights @ v))


def nan_after_updates(layer, x: torch.Tensor, real: torch.Tensor, updates: int = 2,
                      lr: float = 1e-3) -> list[dict]:
    """Trains a copy of ``layer`` (``layer`` itself is left alone) with ``naive_attention`` and
    the query-and-key mask of ``real``, on the loss summed over real positions only (the loss is
    finite at first), by plain gradient descent p <- p - lr * grad. One record per update:
    {"loss": the loss before it, "nan": {parameter name: fraction of NaN entries after it}}."""
    if updates < 1:
        raise ValueError(f"updates={updates}: at least 1")
    layer, mask, records = copy.deepcopy(layer), query_and_key_mask(real), []
    for _ in range(updates):
        layer.zero_grad()
        loss = naive_attention(layer, x, mask)[real].sum()
        loss.backward()
        with torch.no_grad():
            for p in layer.parameters():
                p -= lr * p.grad
        records.append({"loss": loss.item(),
                        "nan": {n: torch.isnan(p).float().mean().item() for n, p in layer.named_parameters()}})
    return records
