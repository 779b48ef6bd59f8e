"""One configuration object for both implementations (nanoGPT style)."""

from dataclasses import dataclass

from ._checks import check_dropout, check_positive, head_sizes


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of the encoder-decoder model. Defaults are the paper's base model (Table 3).

    share_embeddings: one matrix for source and target token embeddings (§3.4; needs a joint
        vocabulary, ``src_vocab_size == tgt_vocab_size``).
    tie_output: the pre-softmax projection reuses the target embedding matrix (§3.4).
    d_k, d_v: features per head for queries/keys and for values; ``None`` is the paper's
        d_model / num_heads (Table 3, row B shrinks d_k alone).
    norm_first: ``False`` is the paper's Post-LN, ``LayerNorm(x + Sublayer(x))``;
        ``True`` is Pre-LN, ``x + Sublayer(LayerNorm(x))``, with a final LayerNorm per stack.

    Choices made after the paper (the "After the paper" part; ``aiayn.np.variants`` and
    ``aiayn.pt.variants`` build them), each off by default:

    positional: also ``"rotary"``, rotary position embeddings (Su et al., 2021): nothing is
        added to the embeddings; self-attention rotates queries and keys by their positions.
    norm: ``"layer"`` (the paper's LayerNorm) or ``"rms"``, RMSNorm (Zhang & Sennrich, 2019).
    ffn: ``"relu"`` (the paper's) or ``"swiglu"`` (Shazeer, 2020); give it ``d_ff`` about 2/3 of
        the ReLU network's for equal parameters (``aiayn.pt.swiglu.equal_parameter_width``).
    num_kv_heads: key/value heads shared by the query heads; ``None`` is the paper's one per
        query head, ``1`` multi-query attention (Shazeer, 2019), between grouped-query (Ainslie
        et al., 2023). It must divide ``num_heads``.
    key_block: ``None`` is the paper's attention; a number computes attention over blocks of
        that many keys with an online softmax (same outputs, memory linear in the length).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    num_heads: int = 8
    num_layers: int = 6
    d_ff: int = 2048
    d_k: int | None = None
    d_v: int | None = None
    dropout: float = 0.1
    max_len: int = 512
    positional: str = "sinusoidal"
    share_embeddings: bool = False
    tie_output: bool = True
    norm_first: bool = False
    pad_id: int = 0
    norm: str = "layer"
    ffn: str = "relu"
    num_kv_heads: int | None = None
    key_block: int | None = None

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "num_layers", "d_ff", "max_len"):
            check_positive(name, getattr(self, name))
        d_k, _ = head_sizes(self.d_model, self.num_heads, self.d_k, self.d_v)
        check_dropout(self.dropout)
        if self.positional not in ("sinusoidal", "learned", "rotary"):
            raise ValueError(f"positional must be 'sinusoidal', 'learned' or 'rotary', got {self.positional!r}")
        if self.positional == "rotary" and d_k % 2:
            raise ValueError(f"positional='rotary' rotates pairs of features: d_k={d_k} must be even")
        if self.norm not in ("layer", "rms"):
            raise ValueError(f"norm must be 'layer' or 'rms', got {self.norm!r}")
        if self.ffn not in ("relu", "swiglu"):
            raise ValueError(f"ffn must be 'relu' or 'swiglu', got {self.ffn!r}")
        if self.num_kv_heads is not None:
            check_positive("num_kv_heads", self.num_kv_heads)
            if self.num_heads % self.num_kv_heads:
                raise ValueError(f"num_kv_heads={self.num_kv_heads} must divide num_heads={self.num_heads}: "
                                 "each key/value head serves an equal group of query heads")
        if self.key_block is not None:
            check_positive("key_block", self.key_block)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs one joint vocabulary, got "
                f"src_vocab_size={self.src_vocab_size} and tgt_vocab_size={self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id={self.pad_id} is outside the vocabularies")
