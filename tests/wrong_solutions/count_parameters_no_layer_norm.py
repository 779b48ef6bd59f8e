"""A parameter count that forgets the LayerNorms' gains and biases.

exercise: putting_it_together/count_parameters
caught by: random Post-LN configurations, tied output projection, sinusoidal positions
message mentions: LayerNorm; gain and a bias
breaks: count_parameters: count
"""


def count_parameters(config):
    c, d = config, config.d_model
    attention = 4 * (d * d + d)
    ffn = d * c.d_ff + c.d_ff + c.d_ff * d + d
    embeddings = c.src_vocab_size * d + (0 if c.share_embeddings else c.tgt_vocab_size * d)
    embeddings += 0 if c.tie_output else c.tgt_vocab_size * d
    positional = c.max_len * d if c.positional == "learned" else 0
    return embeddings + positional + c.num_layers * (3 * attention + 2 * ffn)  # the mistake
