"""Behaviour, for both implementations: masks block what they should, no NaN, causality holds,
gradients reach every parameter, greedy decoding stops at EOS."""

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.lab.layer_norm_cost import operators
from aiayn.pt import masks as pt_masks
from aiayn.pt.model import Transformer as TorchTransformer
from conftest import rand, tokens


def small_config(**overrides):
    base = dict(src_vocab_size=30, tgt_vocab_size=30, d_model=32, num_heads=4, num_layers=2,
                d_ff=64, dropout=0.1, max_len=64)
    return TransformerConfig(**{**base, **overrides})


def model_for(impl, config):
    torch_model = TorchTransformer(config).double().eval()
    return torch_model if impl.name == "torch" else numpy_model_from_torch(torch_model)


def test_padded_keys_get_exactly_zero_weight(impl):
    ids = tokens(2, 6, 9, pad_tail=[3, 1])
    mask = impl.masks.padding_mask(impl.array(ids), 0)
    q, k, v = (impl.array(rand(2, 2, 6, 4, seed=s)) for s in (1, 2, 3))
    _, w = impl.attention.scaled_dot_product_attention(q, k, v, mask)
    w = impl.to_numpy(w)
    assert np.all(w[0, :, :, -3:] == 0.0) and np.all(w[1, :, :, -1:] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=0, atol=1e-12)


def test_all_masked_row_gives_zeros_not_nan(impl):
    """Documented choice: a query with no visible key attends to nothing (zero weights, zero
    output), as F.scaled_dot_product_attention does; the naive -inf softmax gives NaN."""
    mask = impl.array(np.array([[True, True, False], [False, False, False]])[None, None])
    q, k, v = (impl.array(rand(1, 1, 2 if s == 1 else 3, 4, seed=s)) for s in (1, 2, 3))
    out, w = impl.attention.scaled_dot_product_attention(q, k, v, mask)
    out, w = impl.to_numpy(out), impl.to_numpy(w)
    assert not np.isnan(out).any() and not np.isnan(w).any()
    assert np.all(w[0, 0, 1] == 0) and np.all(out[0, 0, 1] == 0)
    assert w[0, 0, 0, :2].sum() == pytest.approx(1.0) and w[0, 0, 0, 2] == 0


def test_all_masked_row_has_finite_gradients():
    scores = torch.randn(1, 1, 2, 3, dtype=torch.float64, requires_grad=True)
    mask = torch.tensor([[True, False, False], [False, False, False]])[None, None]
    from aiayn.pt.attention import masked_softmax
    (masked_softmax(scores, mask) * torch.randn(1, 1, 2, 3, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert torch.all(scores.grad[0, 0, 1] == 0) and torch.all(scores.grad[0, 0, 0, 1:] == 0)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.int64])
def test_token_ids_of_any_integer_dtype_look_up_the_same_rows(impl, dtype):
    """uint8 ids are ids too (PyTorch's indexing would read a uint8 tensor as a mask and reject int16)."""
    embed = impl.embeddings.TokenEmbedding(20, 8)
    ids = np.array([[1, 5, 19], [0, 2, 2]])
    want = impl.to_numpy(embed(impl.array(ids)))
    assert want.shape == (2, 3, 8)
    np.testing.assert_array_equal(impl.to_numpy(embed(impl.array(ids.astype(dtype)))), want)


def test_target_mask_is_made_on_the_tokens_device():
    """No mask is made on the CPU and copied: on a GPU that copy would make the host wait for
    the GPU once per forward pass. On the meta device any copy from the CPU would show."""
    ids = torch.zeros(2, 5, dtype=torch.long, device="meta")
    mask = pt_masks.target_mask(ids, 0)
    assert mask.device.type == "meta" and mask.shape == (2, 1, 5, 5) and mask.dtype == torch.bool
    called = operators(lambda: pt_masks.target_mask(ids, 0))
    assert "aten::tril" in called and not {"aten::to", "aten::_to_copy", "aten::copy_"} & set(called)
    cpu = pt_masks.target_mask(torch.tensor([[5, 6, 0]]), 0)[0, 0]
    assert cpu.tolist() == [[True, False, False], [True, True, False], [True, True, False]]


def test_causal_mask_future_token_changes_no_earlier_output(impl):
    model = model_for(impl, small_config())
    src = impl.array(tokens(2, 7, 30, seed=1, pad_tail=[2, 0]))
    tgt = tokens(2, 6, 30, seed=2)
    changed = tgt.copy()
    changed[:, 4] = (changed[:, 4] % 29) + 1  # alter position 4 only, keep ids valid
    a = impl.to_numpy(model(src, impl.array(tgt)))
    b = impl.to_numpy(model(src, impl.array(changed)))
    np.testing.assert_array_equal(a[:, :4], b[:, :4])  # bit-identical before position 4
    assert np.abs(a[:, 4:] - b[:, 4:]).max() > 1e-6  # and the change is visible from 4 on


def test_source_padding_is_invisible(impl):
    """Appending padding to a source sentence changes nothing in the real positions' outputs."""
    model = model_for(impl, small_config())
    src = tokens(1, 5, 30, seed=3)
    padded = np.concatenate([src, np.zeros((1, 3), dtype=src.dtype)], axis=1)
    tgt = impl.array(tokens(1, 4, 30, seed=4))
    a = impl.to_numpy(model(impl.array(src), tgt))
    b = impl.to_numpy(model(impl.array(padded), tgt))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


@pytest.mark.parametrize("overrides", [dict(), dict(norm_first=True, positional="learned",
                                                     tie_output=False)], ids=["paper", "pre_ln"])
def test_gradients_reach_every_parameter(overrides):
    model = TorchTransformer(small_config(**overrides)).train()
    src = torch.as_tensor(tokens(2, 7, 30, seed=1, pad_tail=[2, 0]))
    tgt = torch.as_tensor(tokens(2, 6, 30, seed=2, pad_tail=[0, 1]))
    logits = model(src, tgt[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 30), tgt[:, 1:].reshape(-1))
    loss.backward()
    assert torch.isfinite(loss)
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{name} received no gradient"
        assert torch.isfinite(p.grad).all(), name
        assert p.grad.abs().sum() > 0, f"{name} has an all-zero gradient"


def test_dropout_is_active_in_training_and_off_in_eval():
    model = TorchTransformer(small_config(dropout=0.3))
    src = torch.as_tensor(tokens(2, 7, 30, seed=1))
    tgt = torch.as_tensor(tokens(2, 6, 30, seed=2))
    model.train()
    assert not torch.equal(model(src, tgt), model(src, tgt))
    model.eval()
    assert torch.equal(model(src, tgt), model(src, tgt))


def test_greedy_decode_stops_at_eos_and_pads_after(impl):
    model = model_for(impl, small_config())
    src = impl.array(tokens(3, 6, 30, seed=5, pad_tail=[0, 2, 4]))
    out = impl.to_numpy(impl.decoding.greedy_decode(model, src, 20, bos_id=1, eos_id=2))
    assert out.shape[0] == 3 and 2 <= out.shape[1] <= 21 and np.all(out[:, 0] == 1)
    for row in out:
        hits = np.flatnonzero(row == 2)
        if hits.size:  # everything after the first EOS is padding
            assert np.all(row[hits[0] + 1:] == 0)
    if out.shape[1] < 21:  # it stopped early: every sentence has ended
        assert all((row == 2).any() for row in out)


def test_shared_and_tied_weights_are_one_matrix():
    model = TorchTransformer(small_config(share_embeddings=True, tie_output=True))
    assert model.src_embed.weight is model.tgt_embed.weight is model.out_proj.weight
    numpy_model = numpy_model_from_torch(model)
    assert numpy_model.src_embed.weight is numpy_model.out_proj.weight


class ScriptedModel:
    """A stand-in whose decoder emits token 5 until step ``b + 1``, then EOS, for row b: lets the
    test know exactly when each sentence should stop."""

    def __init__(self, impl, vocab=8):
        self.impl, self.vocab = impl, vocab
        self.config = small_config(tgt_vocab_size=vocab, src_vocab_size=vocab)
        self.training = False

    def encode(self, src, src_mask=None):
        return src

    def decode(self, ys, memory, src_mask=None, tgt_mask=None):
        batch, steps = ys.shape
        hidden = np.zeros((batch, steps, self.vocab))
        for b in range(batch):
            hidden[b, -1, 2 if steps - 1 >= b + 1 else 5] = 1.0
        return self.impl.array(hidden)

    def out_proj(self, h):
        return h

    def eval(self):
        return self

    def train(self, mode=True):
        return self


def test_greedy_decode_stops_each_sentence_at_its_eos(impl):
    src = impl.array(tokens(3, 4, 8))
    out = impl.to_numpy(impl.decoding.greedy_decode(ScriptedModel(impl), src, 10, bos_id=1, eos_id=2))
    expected = np.array([[1, 5, 2, 0, 0],   # EOS at step 2; padding after it
                         [1, 5, 5, 2, 0],
                         [1, 5, 5, 5, 2]])  # the last sentence ends: decoding stops here
    np.testing.assert_array_equal(out, expected)


def test_base_model_traces_on_the_meta_device():
    """Shapes of the paper's base model without allocating its 63M parameters."""
    with torch.device("meta"):
        model = TorchTransformer(TransformerConfig(37000, 37000, share_embeddings=True))
        logits = model(torch.ones(2, 7, dtype=torch.long), torch.ones(2, 5, dtype=torch.long))
    assert logits.shape == (2, 5, 37000) and logits.device.type == "meta"
