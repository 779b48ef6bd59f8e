"""The training loss: cross-entropy against label-smoothed targets (§5.4), padding ignored.

"During training, we employed label smoothing of value eps_ls = 0.1. This hurts perplexity,
as the model learns to be more unsure, but improves accuracy and BLEU score."
``F.cross_entropy(label_smoothing=eps)`` trains towards (1 - eps) on the reference token plus
eps / V spread over all V vocabulary entries (the reference and padding included), i.e.
    loss = (1 - eps) * (-log p_ref) + eps * mean_v(-log p_v).
PAD thus gets eps / V of every target, as any wrong token does. That is harmless: the model
learns to give PAD the same small probability as the other wrong tokens, and padding positions
themselves are never scored (``ignore_index``). The Annotated Transformer spreads eps / (V - 2)
over all entries but the reference and PAD; per entry the two targets differ by at most eps / V.
"""

import torch
import torch.nn.functional as F

from ..data.specials import PAD_ID


def token_loss_sum(logits: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Summed over the non-padding target tokens: logits (B, T, V), labels (B, T) -> scalar.

    A sum, not a mean, so that the caller divides by the tokens of the *whole* batch: under
    data parallelism each process holds a part of the batch but the gradient must be that of
    the mean over all of it. The loss is computed in float32 even when the logits are bf16."""
    if logits.shape[:2] != labels.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} disagree "
                         "on (B, T)")
    return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=PAD_ID,
                           label_smoothing=label_smoothing, reduction="sum")
