"""Backpropagation by hand, component by component: every ``backward`` of ``aiayn.np`` against
PyTorch's autograd (float64, same weights, <= 1e-10) and against central finite differences
on sampled coordinates, on odd shapes (T_q != T_k, d_k != d_v, a batch of one), with masks."""

import numpy as np
import pytest
import torch

import aiayn.np
from aiayn.convert import numpy_state
from aiayn.np import (attention as na, backprop, decoder as nd, embeddings as ne, encoder as nenc,
                      feedforward as nf, nn as nnn, normalization as nn_)
from aiayn.pt import (attention as ta, decoder as td, embeddings as te, encoder as tenc,
                      feedforward as tf, normalization as tn)
from aiayn.lab.gradient_check import finite_differences, sample_coordinates
from conftest import rand, record_difference

TOL = 1e-10


def close(got, want, tol=TOL):
    want = want.detach().numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    diff = float(np.abs(got - want).max()) if got.size else 0.0
    record_difference("backprop_vs_autograd", diff)
    assert np.isfinite(got).all()
    assert diff <= tol, f"max abs difference {diff:.3e} > {tol}"


def twin(np_cls, pt_cls, *args):
    """A float64 PyTorch module and a NumPy module in training mode with the same weights."""
    pt_mod = pt_cls(*args).double()
    np_mod = np_cls(*args)
    np_mod.load_state_dict(numpy_state(pt_mod.state_dict()))
    return np_mod.train(), pt_mod


def leaf(x):
    return torch.tensor(x, requires_grad=True)


def check_parameters(np_mod, pt_mod):
    """Every parameter's gradient (under every name) equals autograd's."""
    grads = np_mod.gradients()
    named = dict(pt_mod.named_parameters(remove_duplicate=False))
    assert grads.keys() == named.keys()
    for name, param in named.items():
        close(grads[name], param.grad)


def finite_difference_check(loss, x, analytic, rng, samples=6, h=1e-6):
    """Central differences (L(x + h e_i) - L(x - h e_i)) / 2h at ``samples`` random coordinates
    of ``x`` (aiayn.lab.gradient_check, the chapter's referee), against the analytic gradient."""
    coordinates = sample_coordinates(x.shape, min(samples, x.size), rng)
    for i, numeric in zip(coordinates, finite_differences(loss, x, coordinates, h)):
        assert abs(numeric - analytic[i]) <= 1e-6 * max(1.0, abs(numeric)), (i, numeric, analytic[i])


# Masks with T_q = 4 queries and T_k = 6 keys, broadcastable to (B, H, T_q, T_k).
def padding_mask(B=2, T_k=6):
    keep = np.array([3, 6, 1, 5][:B])
    return (np.arange(T_k)[None, :] < keep[:, None])[:, None, None, :]


def with_all_masked_row(B=2, T_q=4, T_k=6):
    mask = np.broadcast_to(padding_mask(B, T_k), (B, 1, T_q, T_k)).copy()
    mask[0, 0, 2] = False  # query 2 of sentence 0 may attend to nothing
    return mask


MASKS = {"none": None, "padding": padding_mask(), "all_masked_row": with_all_masked_row()}


# Functions: masked softmax and scaled dot-product attention ------------------------------
@pytest.mark.parametrize("mask_name", MASKS)
def test_masked_softmax_backward_equals_autograd(mask_name):
    scores, g = rand(2, 3, 4, 6, seed=1), rand(2, 3, 4, 6, seed=2)
    mask = MASKS[mask_name]
    weights = na.masked_softmax(scores, mask)
    got = backprop.masked_softmax_backward(g, weights)
    s = leaf(scores)
    (ta.masked_softmax(s, None if mask is None else torch.from_numpy(mask)) * torch.from_numpy(g)).sum().backward()
    close(got, s.grad)
    if mask is not None:  # masked keys, and the all-masked row, get exactly 0
        blocked = ~np.broadcast_to(mask, got.shape)
        assert np.all(got[blocked] == 0.0)


def test_masked_softmax_backward_finite_differences():
    rng = np.random.default_rng(0)
    scores, g, mask = rand(1, 2, 4, 6, seed=3), rand(1, 2, 4, 6, seed=4), with_all_masked_row(1)
    analytic = backprop.masked_softmax_backward(g, na.masked_softmax(scores, mask))
    finite_difference_check(lambda: (na.masked_softmax(scores, mask) * g).sum(), scores, analytic, rng,
                            samples=10)


@pytest.mark.parametrize("mask_name", MASKS)
def test_attention_backward_with_t_q_ne_t_k_and_d_k_ne_d_v(mask_name):
    q, k, v = rand(2, 3, 4, 5, seed=1), rand(2, 3, 6, 5, seed=2), rand(2, 3, 6, 7, seed=3)
    g = rand(2, 3, 4, 7, seed=4)
    mask = MASKS[mask_name]
    out, weights = na.scaled_dot_product_attention(q, k, v, mask)
    grads = backprop.scaled_dot_product_attention_backward(g, q, k, v, weights)
    tq, tk, tv = leaf(q), leaf(k), leaf(v)
    out_t, _ = ta.scaled_dot_product_attention(tq, tk, tv, None if mask is None else torch.from_numpy(mask))
    (out_t * torch.from_numpy(g)).sum().backward()
    for got, want in zip(grads, (tq.grad, tk.grad, tv.grad)):
        close(got, want)
    if mask is not None:  # a masked key receives no gradient, through its key or its value
        never_seen = ~np.broadcast_to(mask, (2, 3, 4, 6)).any(axis=2)  # (B, H, T_k)
        assert np.all(grads[1][never_seen] == 0.0) and np.all(grads[2][never_seen] == 0.0)


def test_all_masked_query_gets_zero_gradient_not_nan():
    q, k, v = rand(1, 1, 4, 5, seed=1), rand(1, 1, 6, 5, seed=2), rand(1, 1, 6, 7, seed=3)
    mask = with_all_masked_row(1)
    _, weights = na.scaled_dot_product_attention(q, k, v, mask)
    grad_q, grad_k, grad_v = backprop.scaled_dot_product_attention_backward(
        rand(1, 1, 4, 7, seed=4), q, k, v, weights)
    assert np.isfinite(grad_q).all() and np.isfinite(grad_k).all() and np.isfinite(grad_v).all()
    assert np.all(grad_q[0, 0, 2] == 0.0)


@pytest.mark.parametrize("which", [0, 1, 2], ids=["q", "k", "v"])
def test_attention_backward_finite_differences(which):
    rng = np.random.default_rng(which)
    qkv = [rand(1, 2, 3, 4, seed=1), rand(1, 2, 5, 4, seed=2), rand(1, 2, 5, 6, seed=3)]
    g, mask = rand(1, 2, 3, 6, seed=4), padding_mask(1, 5)
    _, weights = na.scaled_dot_product_attention(*qkv, mask)
    analytic = backprop.scaled_dot_product_attention_backward(g, *qkv, weights)[which]
    finite_difference_check(lambda: (na.scaled_dot_product_attention(*qkv, mask)[0] * g).sum(),
                            qkv[which], analytic, rng)


# Modules ------------------------------------------------------------------------------------
@pytest.mark.parametrize("bias", [True, False])
def test_linear(bias):
    pt_lin = torch.nn.Linear(5, 3, bias=bias).double()
    np_lin = nnn.Linear(5, 3, bias=bias)
    np_lin.load_state_dict(numpy_state(pt_lin.state_dict()))
    np_lin.train()
    x, g = rand(2, 4, 5, seed=1), rand(2, 4, 3, seed=2)
    xt = leaf(x)
    (pt_lin(xt) * torch.from_numpy(g)).sum().backward()
    np_lin(x)
    close(np_lin.backward(g), xt.grad)
    check_parameters(np_lin, pt_lin)


def test_feed_forward_relu_passes_gradient_only_where_active():
    np_ffn, pt_ffn = twin(nf.PositionwiseFeedForward, tf.PositionwiseFeedForward, 6, 10)
    x, g = rand(1, 3, 6, seed=1), rand(1, 3, 6, seed=2)
    xt = leaf(x)
    (pt_ffn(xt) * torch.from_numpy(g)).sum().backward()
    np_ffn(x)
    close(np_ffn.backward(g), xt.grad)
    check_parameters(np_ffn, pt_ffn)
    rng = np.random.default_rng(0)
    np_ffn.eval()  # finite differences: forward passes only
    finite_difference_check(lambda: (np_ffn(x) * g).sum(), x, xt.grad.numpy(), rng)


@pytest.mark.parametrize("scale", [1.0, 1e-3], ids=["unit", "tiny_variance"])
def test_layer_norm(scale):
    np_ln, pt_ln = twin(nn_.LayerNorm, tn.LayerNorm, 7)
    rng = np.random.default_rng(0)
    np_ln.weight[:] = 1 + 0.5 * rng.standard_normal(7)  # not the ones of the initialisation
    np_ln.bias[:] = rng.standard_normal(7)
    pt_ln.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in np_ln.state_dict().items()})
    x, g = scale * rand(3, 2, 7, seed=1), rand(3, 2, 7, seed=2)
    xt = leaf(x)
    (pt_ln(xt) * torch.from_numpy(g)).sum().backward()
    np_ln(x)
    close(np_ln.backward(g), xt.grad, tol=TOL / scale)  # dL/dx grows like 1 / std
    check_parameters(np_ln, pt_ln)


@pytest.mark.parametrize("mask_name", ["padding", "all_masked_row"])
@pytest.mark.parametrize("sizes", [(None, None), (3, 5)], ids=["d_k=d_v", "d_k!=d_v"])
def test_cross_attention_t_q_ne_t_k(sizes, mask_name):
    np_mha, pt_mha = twin(na.MultiHeadAttention, ta.MultiHeadAttention, 8, 2, *sizes)
    x, mem, g = rand(2, 4, 8, seed=1), rand(2, 6, 8, seed=2), rand(2, 4, 8, seed=3)
    mask = MASKS[mask_name]
    xt, mt = leaf(x), leaf(mem)
    (pt_mha(xt, mt, mt, torch.from_numpy(mask))[0] * torch.from_numpy(g)).sum().backward()
    np_mha(x, mem, mem, mask)
    grad_query, grad_key, grad_value = np_mha.backward(g)
    close(grad_query, xt.grad)
    close(grad_key + grad_value, mt.grad)
    check_parameters(np_mha, pt_mha)


def test_self_attention_batch_of_one_finite_differences():
    np_mha, _ = twin(na.MultiHeadAttention, ta.MultiHeadAttention, 6, 3, 4, 2)
    x, g, mask = rand(1, 5, 6, seed=1), rand(1, 5, 6, seed=2), np.tril(np.ones((5, 5), bool))[None, None]
    np_mha(x, x, x, mask)
    analytic = sum(np_mha.backward(g))
    np_mha.eval()
    rng = np.random.default_rng(1)
    finite_difference_check(lambda: (np_mha(x, x, x, mask)[0] * g).sum(), x, analytic, rng)
    weight_grad = np_mha.gradients()["w_k.weight"]
    finite_difference_check(lambda: (np_mha(x, x, x, mask)[0] * g).sum(), np_mha.w_k.weight,
                            weight_grad, rng)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_encoder_stack(norm_first):
    args = (2, 8, 2, 12, 0.0, norm_first, 3, 5)
    np_enc, pt_enc = twin(nenc.Encoder, tenc.Encoder, *args)
    x, g, mask = rand(2, 6, 8, seed=1), rand(2, 6, 8, seed=2), padding_mask()
    xt = leaf(x)
    (pt_enc(xt, torch.from_numpy(mask)) * torch.from_numpy(g)).sum().backward()
    np_enc(x, mask)
    close(np_enc.backward(g), xt.grad)
    check_parameters(np_enc, pt_enc)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_decoder_stack_returns_the_memory_gradient(norm_first):
    args = (2, 8, 2, 12, 0.0, norm_first, 5, 3)
    np_dec, pt_dec = twin(nd.Decoder, td.Decoder, *args)
    x, mem, g = rand(2, 4, 8, seed=1), rand(2, 6, 8, seed=2), rand(2, 4, 8, seed=3)
    src_mask, tgt_mask = padding_mask(), np.tril(np.ones((4, 4), bool))[None, None]
    xt, mt = leaf(x), leaf(mem)
    out = pt_dec(xt, mt, torch.from_numpy(src_mask), torch.from_numpy(tgt_mask))
    (out * torch.from_numpy(g)).sum().backward()
    np_dec(x, mem, src_mask, tgt_mask)
    grad_x, grad_memory = np_dec.backward(g)
    close(grad_x, xt.grad)
    close(grad_memory, mt.grad)
    check_parameters(np_dec, pt_dec)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_residual_backward_finite_differences(norm_first):
    """The identity path and the sub-layer path, Post-LN and Pre-LN, on an encoder layer."""
    layer, _ = twin(nenc.EncoderLayer, tenc.EncoderLayer, 6, 2, 8, 0.0, norm_first)
    x, g = rand(1, 3, 6, seed=1), rand(1, 3, 6, seed=2)
    layer(x)
    analytic = layer.backward(g)
    layer.eval()
    finite_difference_check(lambda: (layer(x) * g).sum(), x, analytic, np.random.default_rng(2))


# Embeddings, positions, dropout ----------------------------------------------------------
def test_token_embedding_sums_repeated_ids_and_scales_by_sqrt_d_model():
    np_emb, pt_emb = twin(ne.TokenEmbedding, te.TokenEmbedding, 9, 4)
    ids = np.array([[1, 3, 3, 0], [3, 8, 1, 1]])  # repeated ids; 2, 4-7 never occur
    g = rand(2, 4, 4, seed=1)
    (pt_emb(torch.from_numpy(ids)) * torch.from_numpy(g)).sum().backward()
    np_emb(ids)
    assert np_emb.backward(g) is None  # ids have no gradient
    check_parameters(np_emb, pt_emb)
    grad = np_emb.gradients()["weight"]
    close(grad[3], 2.0 * (g[0, 1] + g[0, 2] + g[1, 0]))  # sqrt(d_model) = 2
    assert np.all(grad[[2, 4, 5, 6, 7]] == 0.0)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned"])
def test_positional_encodings(kind):
    np_cls = ne.SinusoidalPositionalEncoding if kind == "sinusoidal" else ne.LearnedPositionalEncoding
    pt_cls = te.SinusoidalPositionalEncoding if kind == "sinusoidal" else te.LearnedPositionalEncoding
    np_pos, pt_pos = twin(np_cls, pt_cls, 4, 10)
    x, g = rand(2, 3, 4, seed=1), rand(2, 3, 4, seed=2)
    xt = leaf(x)
    (pt_pos(xt) * torch.from_numpy(g)).sum().backward()
    np_pos(x)
    close(np_pos.backward(g), xt.grad)
    check_parameters(np_pos, pt_pos)
    if kind == "learned":  # positions 3..9 were not used
        assert np.all(np_pos.gradients()["weight"][3:] == 0.0)


def test_dropout_keeps_its_mask_for_backward_and_undoes_calls_in_reverse_order():
    aiayn.np.manual_seed(0)
    drop = nnn.Dropout(0.5)
    x = np.ones((4, 50))
    assert drop(x) is x, "eval mode (the default) is the identity"
    drop.train()
    first, second = drop(x), drop(x)
    assert set(np.unique(first)) == {0.0, 2.0} and not np.array_equal(first, second)
    g = rand(4, 50, seed=1)
    np.testing.assert_array_equal(drop.backward(g), g * second)  # last call first
    np.testing.assert_array_equal(drop.backward(g), g * first)
    with pytest.raises(RuntimeError, match="no forward pass to undo"):
        drop.backward(g)


def test_dropout_gradient_matches_finite_differences_with_replayed_masks():
    """With dropout on, re-seeding before each forward pass replays the same masks: the loss is
    then a fixed function of the weights, and the kept masks make backward its gradient."""
    layer, _ = twin(nenc.EncoderLayer, tenc.EncoderLayer, 6, 2, 8, 0.3, False)
    x, g = rand(2, 3, 6, seed=1), rand(2, 3, 6, seed=2)

    def loss():
        aiayn.np.manual_seed(7)
        out = layer(x)
        layer.zero_grad()  # forget what this forward pass saved
        return (out * g).sum()

    aiayn.np.manual_seed(7)
    layer(x)
    layer.backward(g)
    analytic = layer.gradients()["ffn.w_1.weight"]
    finite_difference_check(loss, layer.ffn.w_1.weight, analytic, np.random.default_rng(3))


def test_eval_mode_keeps_nothing_and_backward_needs_training_mode():
    mha = na.MultiHeadAttention(8, 2)
    x = rand(1, 3, 8)
    mha(x, x, x)
    assert all(not m.__dict__.get("_saved") for m in mha.modules())
    with pytest.raises(RuntimeError, match=r"call \.train\(\)"):
        mha.backward(x)


def test_gradients_accumulate_until_zero_grad():
    lin = nnn.Linear(3, 2).train()
    x, g = rand(4, 3), rand(4, 2)
    lin(x)
    lin.backward(g)
    once = lin.gradients()["weight"].copy()
    lin(x)
    lin.backward(g)
    close(lin.gradients()["weight"], 2 * once)
    lin.zero_grad()
    assert np.all(lin.gradients()["weight"] == 0.0)
