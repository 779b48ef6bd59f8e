"""How many parameters the Transformer has: counted on the model, and in closed form.

Table 3 of the paper lists 65M parameters for the base model and 213M for the big one. The
two functions here reproduce such counts two independent ways, so each checks the other:
``count_parameters`` builds our PyTorch model (on the ``meta`` device: shapes only, no memory)
and counts, ``parameter_formula`` adds up the sizes of the weight matrices by hand.
"""

from dataclasses import replace

import torch

from ..config import TransformerConfig
from ..pt.model import Transformer


def count_parameters(config: TransformerConfig) -> int:
    """Number of distinct trainable parameters of ``aiayn.pt.model.Transformer(config)``.

    ``Module.parameters()`` yields a shared tensor once, so tied embeddings count once. On the
    meta device the big model (214M parameters, 860 MB in float32) costs nothing to build."""
    with torch.device("meta"):
        model = Transformer(config)
    return sum(p.numel() for p in model.parameters())


def parameter_breakdown(config: TransformerConfig) -> dict[str, int]:
    """The closed form, part by part (d = d_model, V = vocabulary sizes)."""
    c, d = config, config.d_model
    attention = 4 * (d * d + d)                  # W^Q, W^K, W^V, W^O with biases
    ffn = d * c.d_ff + c.d_ff + c.d_ff * d + d   # W_1, b_1, W_2, b_2
    norm = 2 * d                                 # gain and bias of one LayerNorm
    parts = {
        "source embedding": c.src_vocab_size * d,
        "target embedding": 0 if c.share_embeddings else c.tgt_vocab_size * d,
        "output projection": 0 if c.tie_output else c.tgt_vocab_size * d,  # no bias
        "positional": c.max_len * d if c.positional == "learned" else 0,  # sinusoids: none
        "encoder layers": c.num_layers * (attention + ffn + 2 * norm),
        "decoder layers": c.num_layers * (2 * attention + ffn + 3 * norm),  # + cross-attention
        "final norms": 2 * norm if c.norm_first else 0,  # Pre-LN closes each stack with one
    }
    return parts


def parameter_formula(config: TransformerConfig) -> int:
    """Total of ``parameter_breakdown``: must equal ``count_parameters``."""
    return sum(parameter_breakdown(config).values())


def implied_vocab_size(config: TransformerConfig, total: float) -> float:
    """The joint vocabulary size V (src = tgt = V) at which ``config`` would have ``total``
    parameters. The count is linear in V, so two evaluations of the formula find it."""
    at = [parameter_formula(replace(config, src_vocab_size=v, tgt_vocab_size=v)) for v in (1, 2)]
    return 1 + (total - at[0]) / (at[1] - at[0])
