"""The choices made after the paper, as options of the course's model, NumPy.

``TransformerConfig`` carries them (``norm``, ``ffn``, ``num_kv_heads``, ``positional="rotary"``,
``key_block``), each off by default; the layer constructors ask the functions below for their
parts, which are the paper's unless the configuration says otherwise:

    make_norm          LayerNorm, or RMSNorm (norm="rms")                     aiayn.np.rmsnorm
    make_feed_forward  the ReLU network, or SwiGLU (ffn="swiglu")              aiayn.np.swiglu
    make_attention     MultiHeadAttention, or GroupedQueryAttention when       aiayn.np.gqa
                       num_kv_heads, rotary positions or key_block are asked

A decoder whose attention is grouped or rotary needs its own key-value cache,
``aiayn.np.variant_cache``; the decoder-only model is ``aiayn.np.decoder_only``.
"""

from .attention import MultiHeadAttention
from .feedforward import PositionwiseFeedForward
from .gqa import GroupedQueryAttention
from .normalization import LayerNorm
from .rmsnorm import RMSNorm
from .swiglu import SwiGLUFeedForward


def make_norm(options, d_model: int):
    """LayerNorm (the paper), or RMSNorm when ``options.norm == "rms"``; ``options`` is a
    ``TransformerConfig`` or None (the paper's part)."""
    return RMSNorm(d_model) if options is not None and options.norm == "rms" else LayerNorm(d_model)


def make_feed_forward(options, d_model: int, d_ff: int):
    """§3.3's ReLU network, or SwiGLU of width ``d_ff`` when ``options.ffn == "swiglu"``."""
    if options is not None and options.ffn == "swiglu":
        return SwiGLUFeedForward(d_model, d_ff)
    return PositionwiseFeedForward(d_model, d_ff)


def make_attention(options, d_model: int, num_heads: int, d_k: int | None = None, d_v: int | None = None,
                   self_attention: bool = True):
    """The paper's MultiHeadAttention, or GroupedQueryAttention when ``options`` asks for shared
    key/value heads, rotary positions or key blocks. Rotary positions rotate self-attention
    only: in encoder-decoder attention queries and keys stand in different sequences."""
    rotary = options is not None and options.positional == "rotary"
    if options is None or (options.num_kv_heads is None and not rotary and options.key_block is None):
        return MultiHeadAttention(d_model, num_heads, d_k, d_v)
    return GroupedQueryAttention(d_model, num_heads, options.num_kv_heads, d_k, d_v,
                                 rotary=rotary and self_attention, key_block=options.key_block)
