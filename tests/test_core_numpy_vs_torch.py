"""NumPy vs PyTorch, float64, same weights: every component and the full model agree to 1e-10."""

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch, numpy_state, torch_model_from_numpy
from aiayn.np import (attention as na, decoder as nd, decoding as ndec, embeddings as ne,
                      encoder as nenc, feedforward as nf, masks as nm, normalization as nn_)
from aiayn.pt import (attention as ta, decoder as td, decoding as tdec, embeddings as te,
                      encoder as tenc, feedforward as tf, masks as tm, model as tmodel,
                      normalization as tn)
from conftest import rand, record_difference, tokens

TOL = 1e-10
T = torch.as_tensor


def close(a, b):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else b
    assert a.shape == b.shape
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    record_difference("numpy_vs_torch", diff)
    assert diff <= TOL, f"max abs difference {diff:.3e} > {TOL}"
    return diff


def twin(np_cls, pt_cls, *args):
    """A PyTorch module in float64 and a NumPy module holding the same weights."""
    pt_mod = pt_cls(*args).double()
    np_mod = np_cls(*args)
    np_mod.load_state_dict(numpy_state(pt_mod.state_dict()))
    return np_mod, pt_mod


MASKS = {
    "none": None,
    "padding": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)[:, None, None, :],
    "causal": np.tril(np.ones((5, 5), dtype=bool))[None, None],
}


@pytest.mark.parametrize("mask_name", MASKS)
def test_scaled_dot_product_attention(mask_name):
    q, k, v = rand(2, 3, 5, 8, seed=1), rand(2, 3, 5, 8, seed=2), rand(2, 3, 5, 6, seed=3)
    mask = MASKS[mask_name]
    out_n, w_n = na.scaled_dot_product_attention(q, k, v, mask)
    out_t, w_t = ta.scaled_dot_product_attention(T(q), T(k), T(v), None if mask is None else T(mask))
    close(out_n, out_t)
    close(w_n, w_t)


def test_split_merge_heads():
    x = rand(2, 5, 12)
    close(na.split_heads(x, 4), ta.split_heads(T(x), 4))
    close(na.merge_heads(na.split_heads(x, 4)), x)
    close(ta.merge_heads(ta.split_heads(T(x), 4)), x)


HEAD_SIZES = {"paper": (None, None), "narrow_keys": (2, None), "d_k_ne_d_v": (3, 6)}


@pytest.mark.parametrize("mask_name", MASKS)
@pytest.mark.parametrize("sizes", HEAD_SIZES.values(), ids=HEAD_SIZES.keys())
def test_multi_head_attention(mask_name, sizes):
    np_mha, pt_mha = twin(na.MultiHeadAttention, ta.MultiHeadAttention, 16, 4, *sizes)
    x, mem = rand(2, 5, 16, seed=1), rand(2, 5, 16, seed=2)
    mask = MASKS[mask_name]
    out_n, w_n = np_mha(x, mem, mem, mask)
    out_t, w_t = pt_mha(T(x), T(mem), T(mem), None if mask is None else T(mask))
    close(out_n, out_t)
    close(w_n, w_t)


def test_feed_forward_and_layer_norm():
    x = rand(2, 5, 16)
    np_ffn, pt_ffn = twin(nf.PositionwiseFeedForward, tf.PositionwiseFeedForward, 16, 32)
    close(np_ffn(x), pt_ffn(T(x)))
    np_ln, pt_ln = twin(nn_.LayerNorm, tn.LayerNorm, 16)
    with torch.no_grad():  # non-trivial affine parameters
        pt_ln.weight.copy_(T(rand(16, seed=4)))
        pt_ln.bias.copy_(T(rand(16, seed=5)))
    np_ln.load_state_dict(numpy_state(pt_ln.state_dict()))
    close(np_ln(x), pt_ln(T(x)))


def test_embeddings_and_positional_encodings():
    ids = tokens(2, 7, 30)
    np_emb, pt_emb = twin(ne.TokenEmbedding, te.TokenEmbedding, 30, 16)
    close(np_emb(ids), pt_emb(T(ids)))
    close(ne.sinusoidal_table(50, 16), te.sinusoidal_table(50, 16))
    x = rand(2, 7, 16)
    for cls_n, cls_t in ((ne.SinusoidalPositionalEncoding, te.SinusoidalPositionalEncoding),
                         (ne.LearnedPositionalEncoding, te.LearnedPositionalEncoding)):
        np_pe, pt_pe = twin(cls_n, cls_t, 16, 50)
        close(np_pe(x), pt_pe(T(x)))


def test_masks():
    ids = tokens(2, 6, 9, pad_tail=[2, 0])
    for n, t in ((nm.padding_mask(ids, 0), tm.padding_mask(T(ids), 0)),
                 (nm.causal_mask(6), tm.causal_mask(6)),
                 (nm.target_mask(ids, 0), tm.target_mask(T(ids), 0))):
        assert n.dtype == np.bool_ and t.dtype == torch.bool
        np.testing.assert_array_equal(n, t.numpy())


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_encoder_and_decoder_stacks(norm_first):
    args = (2, 16, 4, 32, 0.1, norm_first)  # dropout is inactive: eval mode / NumPy
    np_enc, pt_enc = twin(nenc.Encoder, tenc.Encoder, *args)
    np_dec, pt_dec = twin(nd.Decoder, td.Decoder, *args)
    pt_enc.eval(), pt_dec.eval()
    src, tgt = rand(2, 6, 16, seed=1), rand(2, 5, 16, seed=2)
    src_mask = nm.padding_mask(tokens(2, 6, 9, pad_tail=[2, 0]), 0)
    tgt_mask = nm.target_mask(tokens(2, 5, 9, pad_tail=[0, 1]), 0)
    mem_n = np_enc(src, src_mask)
    mem_t = pt_enc(T(src), T(src_mask))
    close(mem_n, mem_t)
    close(np_dec(tgt, mem_n, src_mask, tgt_mask),
          pt_dec(T(tgt), mem_t, T(src_mask), T(tgt_mask)))


CONFIGS = {
    "post_ln_sinusoidal_tied": dict(),
    "pre_ln_learned_untied": dict(norm_first=True, positional="learned", tie_output=False),
    "shared_embeddings": dict(share_embeddings=True, tgt_vocab_size=40),
    "narrow_heads_d_k_ne_d_v": dict(d_k=4, d_v=12),
}


@pytest.mark.parametrize("overrides", CONFIGS.values(), ids=CONFIGS.keys())
def test_full_model(overrides):
    cfg = dict(src_vocab_size=40, tgt_vocab_size=35, d_model=32, num_heads=4, num_layers=2,
               d_ff=64, dropout=0.1, max_len=64)
    cfg.update(overrides)
    config = TransformerConfig(**cfg)
    pt = tmodel.Transformer(config).double().eval()
    npm = numpy_model_from_torch(pt)
    src = tokens(3, 9, config.src_vocab_size, seed=1, pad_tail=[0, 3, 5])
    tgt = tokens(3, 7, config.tgt_vocab_size, seed=2, pad_tail=[1, 0, 2])
    with torch.no_grad():
        mem_t = pt.encode(T(src))
        close(npm.encode(src), mem_t)
        src_mask = nm.padding_mask(src, 0)
        close(npm.decode(tgt, npm.encode(src), src_mask), pt.decode(T(tgt), mem_t, T(src_mask)))
        close(npm(src, tgt), pt(T(src), T(tgt)))
    greedy_n = ndec.greedy_decode(npm, src, 12, bos_id=1, eos_id=2)
    greedy_t = tdec.greedy_decode(pt, T(src), 12, bos_id=1, eos_id=2)
    np.testing.assert_array_equal(greedy_n, greedy_t.numpy())


def test_conversion_round_trip():
    config = TransformerConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, max_len=32)
    pt = tmodel.Transformer(config).double()
    back = torch_model_from_numpy(numpy_model_from_torch(pt), dtype=torch.float64)
    for (name, a), (_, b) in zip(pt.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), name
    # Ties survive the trip: one matrix, not two copies.
    assert back.out_proj.weight.data_ptr() == back.tgt_embed.weight.data_ptr()
