"""A parameter count that adds the output projection even when it is tied to the embedding.

exercise: putting_it_together/count_parameters
caught by: the paper's base model with a shared 37000-token vocabulary
message mentions: tie_output; once, not twice
breaks: count_parameters: count
"""


def count_parameters(config):
    c, d = config, config.d_model
    attention = 4 * (d * d + d)
    ffn = d * c.d_ff + c.d_ff + c.d_ff * d + d
    norm = 2 * d
    embeddings = c.src_vocab_size * d + (0 if c.share_embeddings else c.tgt_vocab_size * d)
    embeddings += c.tgt_vocab_size * d  # the mistake: the tied projection counted again
    positional = c.max_len * d if c.positional == "learned" else 0
    layers = c.num_layers * (3 * attention + 2 * ffn + 5 * norm)
    return embeddings + positional + layers + (2 * norm if c.norm_first else 0)
