"""Exercise: the number of parameters of the Transformer, in closed form (Table 3).

Check your work:  python -m aiayn.grading putting_it_together/count_parameters
"""

from aiayn.config import TransformerConfig


def count_parameters(config: TransformerConfig) -> int:
    """Number of distinct trainable parameters of ``aiayn.pt.model.Transformer(config)``.

    Count, with d = config.d_model and N = config.num_layers:
      - token embeddings: source (src_vocab_size x d) and target (tgt_vocab_size x d); with
        ``share_embeddings`` they are one matrix, counted once;
      - the output projection (tgt_vocab_size x d, no bias), unless ``tie_output``: then it IS
        the target embedding matrix, counted once;
      - positional encoding: nothing for "sinusoidal", max_len x d for "learned";
      - every linear map with its bias: W^Q, W^K, W^V, W^O of each attention (the decoder has
        two attentions per layer), W_1 (d x d_ff) and W_2 (d_ff x d) of each feed-forward network;
      - every LayerNorm's gain and bias (2 x d): two per encoder layer, three per decoder layer,
        plus one at the end of each stack if ``norm_first`` (Pre-LN).

    Promises (the grader checks each one):
      - count: the count above, for every configuration (shared or separate embeddings, tied
        or untied output, sinusoidal or learned positions, Post-LN or Pre-LN).
      - python-int: returns a Python int.
      - formula: computed by your formula from the configuration: no model built, no count of
        the course's called.
    """
    raise NotImplementedError
