"""Misuse raises ValueError naming the argument and the offending shapes, in both
implementations (both call the shared checks in ``aiayn._checks``)."""

import numpy as np
import pytest

from aiayn.config import TransformerConfig
from conftest import rand, tokens


def mha(impl):
    return impl.attention.MultiHeadAttention(16, 4)


def sdpa(impl, q, k, v, mask=None):
    a = impl.array
    return impl.attention.scaled_dot_product_attention(a(q), a(k), a(v), None if mask is None else a(mask))


def tiny_model(impl):
    config = TransformerConfig(20, 20, d_model=16, num_heads=4, num_layers=1, d_ff=32, max_len=10)
    return impl.model.Transformer(config)


Q = rand(2, 4, 5, 8)
CASES = {
    "heads_do_not_divide_d_model": (
        lambda i: i.attention.MultiHeadAttention(10, 4), ["d_model=10", "num_heads=4"]),
    "zero_heads": (lambda i: i.attention.MultiHeadAttention(16, 0), ["num_heads", "0"]),
    "q_k_feature_mismatch": (
        lambda i: sdpa(i, Q, rand(2, 4, 5, 6), rand(2, 4, 5, 8)), ["q (2, 4, 5, 8)", "k (2, 4, 5, 6)", "d_k"]),
    "k_v_length_mismatch": (
        lambda i: sdpa(i, Q, rand(2, 4, 5, 8), rand(2, 4, 7, 8)), ["k (2, 4, 5, 8)", "v (2, 4, 7, 8)"]),
    "q_k_batch_mismatch": (
        lambda i: sdpa(i, Q, rand(3, 4, 5, 8), rand(3, 4, 5, 8)), ["batch size", "(3, 4, 5, 8)"]),
    "sdpa_wrong_rank": (
        lambda i: sdpa(i, rand(5, 8), rand(5, 8), rand(5, 8)), ["q must be 4-D", "(5, 8)"]),
    "mask_wrong_shape": (
        lambda i: sdpa(i, Q, Q, Q, np.ones((2, 1, 1, 4), dtype=bool)), ["mask of shape (2, 1, 1, 4)", "(2, 4, 5, 5)"]),
    "mask_wrong_rank": (
        lambda i: sdpa(i, Q, Q, Q, np.ones((2, 5), dtype=bool)), ["mask must be 4-D", "(2, 5)"]),
    "mask_not_boolean": (
        lambda i: sdpa(i, Q, Q, Q, np.ones((2, 1, 1, 5))), ["mask must be boolean", "float", "(2, 1, 1, 5)"]),
    "mha_input_wrong_rank": (
        lambda i: mha(i)(*(i.array(rand(5, 16)),) * 3), ["query must be 3-D", "(5, 16)"]),
    "mha_feature_size_mismatch": (
        lambda i: mha(i)(*(i.array(rand(2, 5, 12)),) * 3), ["query has feature size 12", "(2, 5, 12)", "16"]),
    "mha_key_value_length_mismatch": (
        lambda i: mha(i)(i.array(rand(2, 5, 16)), i.array(rand(2, 6, 16)), i.array(rand(2, 7, 16))),
        ["key (2, 6, 16)", "value (2, 7, 16)"]),
    "ffn_feature_size_mismatch": (
        lambda i: i.feedforward.PositionwiseFeedForward(16, 32)(i.array(rand(2, 5, 8))),
        ["x has feature size 8", "(2, 5, 8)", "16"]),
    "sequence_longer_than_positional_table": (
        lambda i: i.embeddings.SinusoidalPositionalEncoding(16, 10)(i.array(rand(1, 12, 16))),
        ["12 positions", "(1, 12, 16)", "max_len=10"]),
    "odd_d_model_for_sinusoids": (lambda i: i.embeddings.sinusoidal_table(10, 7), ["d_model=7", "even"]),
    "token_id_out_of_range": (
        lambda i: i.embeddings.TokenEmbedding(20, 16)(i.array(np.array([[1, 5, 20]]))), ["tokens (1, 3)", "[1, 20]", "[0, 19]"]),
    "negative_token_id": (
        lambda i: i.embeddings.TokenEmbedding(20, 16)(i.array(np.array([[-1, 5]]))), ["tokens (1, 2)", "[-1, 5]"]),
    "float_token_ids": (
        lambda i: i.embeddings.TokenEmbedding(20, 16)(i.array(np.array([[1.0, 2.0]]))), ["integer token ids", "float", "(1, 2)"]),
    "tokens_wrong_rank": (
        lambda i: i.embeddings.TokenEmbedding(20, 16)(i.array(np.array([1, 2, 3]))), ["tokens must be 2-D", "(3,)"]),
    "src_tgt_batch_mismatch": (
        lambda i: tiny_model(i)(i.array(tokens(2, 5, 20)), i.array(tokens(3, 4, 20))), ["src (2, 5)", "tgt (3, 4)", "batch size"]),
    "memory_d_model_mismatch": (
        lambda i: tiny_model(i).decoder(i.array(rand(2, 4, 16)), i.array(rand(2, 5, 8))), ["memory (2, 5, 8)", "d_model"]),
    "decode_longer_than_table": (
        lambda i: i.decoding.greedy_decode(tiny_model(i), i.array(tokens(1, 3, 20)), 10, 1, 2), ["max_len=10", "config.max_len=10"]),
    "bos_equals_pad": (
        lambda i: i.decoding.greedy_decode(tiny_model(i), i.array(tokens(1, 3, 20)), 5, 0, 2), ["bos_id=0", "pad_id"]),
    "padding_mask_wrong_rank": (
        lambda i: i.masks.padding_mask(i.array(np.array([1, 2, 0])), 0), ["tokens must be 2-D", "(3,)"]),
}


@pytest.mark.parametrize("case", CASES)
def test_misuse_raises_clear_value_error(impl, case):
    call, fragments = CASES[case]
    with pytest.raises(ValueError) as info:
        call(impl)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from: {message}"


CONFIG_CASES = {
    "heads": (dict(d_model=10, num_heads=4), "not divisible"),
    "dropout": (dict(dropout=1.0), "dropout must be in [0, 1)"),
    "shared_vocab": (dict(share_embeddings=True, tgt_vocab_size=30), "src_vocab_size=20 and tgt_vocab_size=30"),
    "positional": (dict(positional="relative"), "positional must be"),
    "layers": (dict(num_layers=0), "num_layers must be a positive int"),
    "head_width": (dict(d_k=0), "d_k must be a positive int, got 0"),
    "value_width": (dict(d_v=2.5), "d_v must be a positive int, got 2.5"),
}


@pytest.mark.parametrize("case", CONFIG_CASES)
def test_bad_config_raises(case):
    overrides, fragment = CONFIG_CASES[case]
    with pytest.raises(ValueError, match=fragment.replace("[", r"\[").replace(")", r"\)")):
        TransformerConfig(**{"src_vocab_size": 20, "tgt_vocab_size": 20, **overrides})
