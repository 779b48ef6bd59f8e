"""Reference solution: the Transformer's parameter count in closed form."""

from aiayn.config import TransformerConfig


def count_parameters(config: TransformerConfig) -> int:
    c, d = config, config.d_model
    attention = 4 * (d * d + d)                   # four d x d maps, each with a bias
    ffn = (d * c.d_ff + c.d_ff) + (c.d_ff * d + d)
    norm = 2 * d                                  # gain and bias
    embeddings = c.src_vocab_size * d
    if not c.share_embeddings:
        embeddings += c.tgt_vocab_size * d
    if not c.tie_output:                          # tied: the target embedding, already counted
        embeddings += c.tgt_vocab_size * d
    positional = c.max_len * d if c.positional == "learned" else 0
    encoder = c.num_layers * (attention + ffn + 2 * norm)
    decoder = c.num_layers * (2 * attention + ffn + 3 * norm)  # self- and cross-attention
    final_norms = 2 * norm if c.norm_first else 0
    return embeddings + positional + encoder + decoder + final_norms
