"""Counts the attention projections per head with d_k = d_model / h: the right number, as a
float.

exercise: putting_it_together/count_parameters
caught by: the paper's base model with a shared 37000-token vocabulary
message mentions: a Python int
breaks: count_parameters: python-int
"""


def count_parameters(config):
    c, d = config, config.d_model
    d_k = d / c.num_heads  # the mistake: / gives a float, and so does everything after it
    attention = 4 * (c.num_heads * d_k * d + d)
    ffn = d * c.d_ff + c.d_ff + c.d_ff * d + d
    norm = 2 * d
    embeddings = c.src_vocab_size * d + (0 if c.share_embeddings else c.tgt_vocab_size * d)
    embeddings += 0 if c.tie_output else c.tgt_vocab_size * d
    positional = c.max_len * d if c.positional == "learned" else 0
    layers = c.num_layers * (3 * attention + 2 * ffn + 5 * norm)
    return embeddings + positional + layers + (2 * norm if c.norm_first else 0)
