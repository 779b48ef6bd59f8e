"""Gradient norms per layer at initialisation: Post-LN (the paper) against Pre-LN.

Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture", argue that at
initialisation the Post-LN Transformer has large gradients for the parameters near the output,
which is why it needs the learning-rate warm-up of §5.3, while Pre-LN's are well-behaved.
``gradient_norms_per_layer`` measures this on our own model instead of quoting it.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_rank, check_same


def next_token_loss(model, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Teacher-forced cross-entropy: read tgt[:, :-1], predict tgt[:, 1:]; padding ignored."""
    check_rank("src", src, 2, "(B, T_src) token ids")
    check_rank("tgt", tgt, 2, "(B, T_tgt) token ids")
    check_same("src", src, 0, "tgt", tgt, 0, "the batch size B")
    if tgt.shape[1] < 2:
        raise ValueError(f"tgt needs at least 2 positions (one to read, one to predict), "
                         f"got shape {tuple(tgt.shape)}")
    logits = model(src, tgt[:, :-1])
    return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(),
                           ignore_index=model.config.pad_id)


def gradient_norms_per_layer(model, src: torch.Tensor, tgt: torch.Tensor,
                             parameter: str | None = None) -> dict[str, list[float]]:
    """{"encoder": [..], "decoder": [..]}: the L2 norm of the gradient of ``next_token_loss``
    with respect to all parameters of each layer, bottom layer first. ``parameter`` (e.g.
    ``"ffn.w_2.weight"``, the matrix Xiong et al. plot) restricts each layer to that one tensor.

    Dropout is switched off for the measurement (eval mode, restored afterwards), so the result
    is a deterministic function of the weights and the batch. ``torch.autograd.grad`` is used
    instead of ``backward`` so the model's ``.grad`` fields are left untouched."""
    was_training = model.training
    model.eval()
    try:
        stacks = {"encoder": model.encoder.layers, "decoder": model.decoder.layers}
        groups = [_pick(layer, parameter) for layers in stacks.values() for layer in layers]
        loss = next_token_loss(model, src, tgt)
        grads = torch.autograd.grad(loss, [p for group in groups for p in group])
    finally:
        model.train(was_training)
    norms, start = [], 0
    for group in groups:
        layer_grads = grads[start: start + len(group)]
        start += len(group)
        norms.append(float(torch.sqrt(sum((g.double() ** 2).sum() for g in layer_grads))))
    n_enc = len(stacks["encoder"])
    return {"encoder": norms[:n_enc], "decoder": norms[n_enc:]}


def _pick(layer: nn.Module, parameter: str | None) -> list[torch.Tensor]:
    if parameter is None:
        return list(layer.parameters())
    named = dict(layer.named_parameters())
    if parameter not in named:
        raise ValueError(f"parameter={parameter!r} is not a parameter of a layer; "
                         f"choose one of {sorted(named)}")
    return [named[parameter]]


@torch.no_grad()
def xavier_init_(model) -> None:
    """Re-initialise, in place, every linear map that is not an embedding matrix with
    Xavier-uniform (Glorot) weights, U(-a, a) with a = sqrt(6 / (fan_in + fan_out)), and zero
    biases. Xiong et al. (2020) assume this initialisation.

    The paper's code base computes the same formula under another name: tensor2tensor's
    ``transformer_base`` (``transformer_base_v1`` in later releases) sets
    ``initializer="uniform_unit_scaling"`` with ``initializer_gain=1.0``, which tensor2tensor
    turns into ``variance_scaling_initializer(1.0, mode="fan_avg", distribution="uniform")``,
    the Glorot-uniform bound (TensorFlow's own ``uniform_unit_scaling_initializer`` is another
    function, scaled by fan_in alone). Its first release (June 2017) drew self-attention's
    Q, K and V projections as one fused (d_model, 3 d_model) matrix, with that matrix's fans;
    here each projection is drawn on its own.

    The course's default is PyTorch's ``nn.Linear`` initialisation, U(+-1/sqrt(fan_in)), whose
    variance 1 / (3 fan_in) is Xavier's 2 / (fan_in + fan_out) times
    (fan_in + fan_out) / (6 fan_in): a third for a square map, more for a widening map such as
    the FFN's first, less for a narrowing one such as its second. The embeddings (and the output
    projection tied to them) keep their own initialisation."""
    embeddings = {id(model.src_embed.weight), id(model.tgt_embed.weight)}
    for module in model.modules():
        if isinstance(module, nn.Linear) and id(module.weight) not in embeddings:
            nn.init.xavier_uniform_(module.weight)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
