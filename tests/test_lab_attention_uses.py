"""aiayn.lab.attention_uses: the experiments behind the chapter attention_in_the_model (the three
uses of attention, the causal perturbation, and what a mask with empty rows does to training)."""

import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.lab.attention_uses import (USES, changed_positions, first_layer_weights, naive_attention,
                                      nan_after_updates, query_and_key_mask)
from aiayn.pt.masks import padding_mask, target_mask
from aiayn.pt.model import Transformer

PAD = 0


@pytest.fixture
def model_and_batch():
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=16, num_heads=2,
                               num_layers=2, d_ff=32, dropout=0.0, max_len=16)
    model = Transformer(config).double().eval()
    src = torch.tensor([[3, 4, 5, 6, 7], [3, 4, PAD, PAD, PAD]])
    tgt = torch.tensor([[1, 8, 9, 10, 2, 5], [1, 8, 9, PAD, PAD, PAD]])
    return model, src, tgt


def test_first_layer_weights_are_the_models_own_masked_weights(model_and_batch):
    model, src, tgt = model_and_batch
    weights = first_layer_weights(model, src, tgt)
    assert tuple(weights) == USES
    assert [tuple(w.shape) for w in weights.values()] == [(2, 2, 5, 5), (2, 2, 6, 6), (2, 2, 6, 5)]
    masks = {"encoder self": padding_mask(src, PAD), "decoder self": target_mask(tgt, PAD),
             "encoder-decoder": padding_mask(src, PAD)}
    for name, w in weights.items():
        assert (w[~masks[name].expand_as(w)] == 0).all(), name
        assert torch.allclose(w.sum(-1), torch.ones((), dtype=w.dtype)), name
    # The same weights as calling the module directly on the encoder's input.
    with torch.no_grad():
        x = model.pos(model.src_embed(src))
        _, direct = model.encoder.layers[0].self_attn(x, x, x, padding_mask(src, PAD))
    assert torch.equal(direct, weights["encoder self"])
    # The hooks are gone afterwards.
    for layer in (model.encoder.layers[0], model.decoder.layers[0]):
        assert not layer.self_attn._forward_hooks
    assert not model.decoder.layers[0].cross_attn._forward_hooks


def test_first_layer_weights_refuses_fused_attention_and_still_removes_its_hooks(model_and_batch):
    model, src, tgt = model_and_batch
    attn = model.encoder.layers[0].self_attn
    attn.fused = True
    with pytest.raises(ValueError, match="^model: its attention is fused"):
        first_layer_weights(model, src, tgt)
    assert not attn._forward_hooks


@pytest.mark.parametrize("position", [1, 3, 5])
def test_changing_one_decoder_input_moves_only_that_position_and_later_ones(model_and_batch, position):
    model, src, tgt = model_and_batch
    src_mask = padding_mask(src, PAD)
    with torch.no_grad():
        memory = model.encode(src, src_mask)
    changed = tgt.clone()
    changed[0, position] = 7 if tgt[0, position] != 7 else 6
    causal = changed_positions(model, tgt, changed, memory, src_mask, lambda t: target_mask(t, PAD))
    assert causal[0] == [0] * position + [1] * (6 - position)
    assert causal[1] == [0] * 6  # the other sentence is untouched
    leaky = changed_positions(model, tgt, changed, memory, src_mask, lambda t: padding_mask(t, PAD))
    assert leaky[0] == [1] * 6
    with pytest.raises(ValueError, match="^changed"):
        changed_positions(model, tgt, changed[:, :3], memory, src_mask, lambda t: target_mask(t, PAD))


def test_query_and_key_mask_empties_the_rows_of_padded_queries():
    real = torch.tensor([[True, True, False]])
    mask = query_and_key_mask(real)
    assert mask.shape == (1, 1, 3, 3)
    assert mask[0, 0].int().tolist() == [[1, 1, 0], [1, 1, 0], [0, 0, 0]]
    with pytest.raises(ValueError, match="^real"):
        query_and_key_mask(real.int())
    with pytest.raises(ValueError, match="^real"):
        query_and_key_mask(real[0])


def test_naive_attention_is_the_module_where_no_row_is_empty_and_nan_where_one_is(model_and_batch):
    model, src, _ = model_and_batch
    attn = model.encoder.layers[0].self_attn
    with torch.no_grad():
        x = model.pos(model.src_embed(src))
        real = src != PAD
        out = naive_attention(attn, x, query_and_key_mask(real))
        reference, _ = attn(x, x, x, padding_mask(src, PAD))
    assert torch.allclose(out[0], reference[0], atol=1e-12)  # no padding: the module's result
    assert torch.isnan(out[1, 2:]).all() and not torch.isnan(out[1, :2]).any()


def test_nan_after_updates_spreads_from_the_values_to_everything_but_one_bias(model_and_batch):
    model, src, _ = model_and_batch
    attn = model.encoder.layers[0].self_attn
    before = {n: p.detach().clone() for n, p in attn.named_parameters()}
    with torch.no_grad():
        x = model.pos(model.src_embed(src))
    first, second = nan_after_updates(attn, x, src != PAD, updates=2)
    assert torch.isfinite(torch.tensor(first["loss"])) and not torch.isfinite(torch.tensor(second["loss"]))
    assert {n for n, f in first["nan"].items() if f == 1} == {"w_v.weight", "w_v.bias", "w_o.weight"}
    assert {n for n, f in first["nan"].items() if f == 0} == {"w_q.weight", "w_q.bias", "w_k.weight",
                                                               "w_k.bias", "w_o.bias"}
    assert {n for n, f in second["nan"].items() if f == 0} == {"w_o.bias"}
    assert all(f == 1 for n, f in second["nan"].items() if n != "w_o.bias")
    assert all(torch.equal(p, before[n]) for n, p in attn.named_parameters())  # a copy was trained
    with pytest.raises(ValueError, match="^updates"):
        nan_after_updates(attn, x, src != PAD, updates=0)
