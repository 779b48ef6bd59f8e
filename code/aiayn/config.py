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

    def __post_init__(self):
        for name in ("src_vocab_size", "tgt_vocab_size", "num_layers", "d_ff", "max_len"):
            check_positive(name, getattr(self, name))
        head_sizes(self.d_model, self.num_heads, self.d_k, self.d_v)
        check_dropout(self.dropout)
        if self.positional not in ("sinusoidal", "learned"):
            raise ValueError(f"positional must be 'sinusoidal' or 'learned', got {self.positional!r}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                "share_embeddings needs one joint vocabulary, got "
                f"src_vocab_size={self.src_vocab_size} and tgt_vocab_size={self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id={self.pad_id} is outside the vocabularies")
