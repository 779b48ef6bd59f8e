"""Parameter and multiply-add counts: hand-derived formulas, real modules, PyTorch's FLOP
counter, and the grouping of a whole model's parameters by component."""

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from aiayn.config import TransformerConfig
from aiayn.lab.param_count import (attention_macs, attention_params, count_by_component,
                                   ffn_macs, ffn_params)
from aiayn.pt.attention import MultiHeadAttention
from aiayn.pt.feedforward import PositionwiseFeedForward
from aiayn.pt.model import Transformer


def numel(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("d_model,h", [(512, 8), (512, 1), (512, 16), (64, 4), (6, 3)])
def test_attention_params_formula_and_module(d_model, h):
    hand = 4 * d_model**2 + 4 * d_model  # Q, K, V, O: d_model x d_model each, plus biases
    assert attention_params(d_model, h) == hand
    assert attention_params(d_model, h) == numel(MultiHeadAttention(d_model, h))
    assert attention_params(d_model, h) == numel(nn.MultiheadAttention(d_model, h))
    assert attention_params(d_model, h, bias=False) == 4 * d_model**2


def test_attention_params_with_free_head_sizes():
    # h heads of any size: h (2 d_model d_k + d_model d_v) + h d_v d_model, biases h (2 d_k + d_v) + d_model
    assert attention_params(10, 2, d_k=3, d_v=5) == 2 * (60 + 50) + 2 * 5 * 10 + 2 * (6 + 5) + 10
    # 8 heads of width 512 ("no reduction") cost 8 times the weights of 8 heads of width 64
    assert attention_params(512, 8, 512, 512, bias=False) == 8 * attention_params(512, 8, bias=False)


@pytest.mark.parametrize("T,d_model,h", [(512, 512, 8), (512, 512, 1), (10, 64, 4), (7, 12, 3)])
def test_attention_macs_hand_formula(T, d_model, h):
    macs = attention_macs(T, d_model, h)
    assert macs["q_proj"] + macs["k_proj"] + macs["v_proj"] + macs["out_proj"] == 4 * T * d_model**2
    assert macs["scores"] == macs["weighted_sum"] == T * T * d_model
    assert macs["total"] == 4 * T * d_model**2 + 2 * T**2 * d_model
    assert macs == attention_macs(T, d_model, 1)  # step by step, whatever h is


@pytest.mark.parametrize("T_q,T_k,d_model,h", [(10, 10, 64, 4), (5, 9, 32, 8), (3, 4, 12, 1)])
def test_attention_macs_match_torch_flop_counter(T_q, T_k, d_model, h):
    """PyTorch counts 2 FLOPs per multiply-add of every matmul it runs."""
    mha = MultiHeadAttention(d_model, h)
    x, mem = torch.randn(2, T_q, d_model), torch.randn(2, T_k, d_model)
    with FlopCounterMode(display=False) as counter:
        mha(x, mem, mem)
    assert counter.get_total_flops() == 2 * 2 * attention_macs(T_q, d_model, h, T_k=T_k)["total"]


def test_ffn_counts():
    assert ffn_params(512, 2048) == 2 * 512 * 2048 + 2048 + 512 == numel(PositionwiseFeedForward(512, 2048))
    ffn = PositionwiseFeedForward(16, 40)
    with FlopCounterMode(display=False) as counter:
        ffn(torch.randn(3, 7, 16))
    assert counter.get_total_flops() == 2 * 3 * ffn_macs(7, 16, 40) == 2 * 3 * 2 * 7 * 16 * 40


def test_bad_sizes_raise():
    with pytest.raises(ValueError, match="not divisible"):
        attention_params(10, 3)
    with pytest.raises(ValueError, match="T must be a positive int"):
        attention_macs(0, 8, 2)
    with pytest.raises(ValueError, match="d_ff"):
        ffn_params(8, 0)


def base_model_by_hand(vocab: int, share: bool, tie: bool) -> dict:
    d, d_ff, N = 512, 2048, 6
    attn, ffn, ln = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * d
    counts = {
        "embeddings": vocab * d * (1 if share else 2),
        "attention": N * attn + N * 2 * attn,  # encoder: self; decoder: self + cross
        "feed-forward": 2 * N * ffn,
        "layer norm": N * 2 * ln + N * 3 * ln,
    }
    if not tie:
        counts["output projection"] = vocab * d
    return counts


@pytest.mark.parametrize("share,tie", [(True, True), (False, True), (False, False)])
def test_count_by_component_base_model_on_meta(share, tie):
    config = TransformerConfig(37000, 37000, share_embeddings=share, tie_output=tie)
    with torch.device("meta"):
        model = Transformer(config)
    assert next(model.parameters()).is_meta  # no memory was allocated for the weights
    counts = count_by_component(model)
    assert counts == base_model_by_hand(37000, share, tie)
    assert sum(counts.values()) == numel(model)


@pytest.mark.parametrize("overrides", [{"positional": "learned"}, {"norm_first": True},
                                       {"num_layers": 1, "d_model": 16, "num_heads": 2, "d_ff": 24}])
def test_count_by_component_sums_to_total(overrides):
    config = TransformerConfig(50, 60, max_len=32, **overrides)
    with torch.device("meta"):
        model = Transformer(config)
    counts = count_by_component(model)
    assert sum(counts.values()) == numel(model)
    assert "other" not in counts
    if overrides.get("positional") == "learned":  # the position table counts as an embedding
        assert counts["embeddings"] == (50 + 60 + 32) * 512


def test_count_by_component_layers_and_foreign_modules():
    layer = Transformer(TransformerConfig(11, 11, d_model=16, num_heads=2, d_ff=24, num_layers=1))
    enc = count_by_component(layer.encoder.layers[0])
    assert enc == {"attention": attention_params(16, 2), "feed-forward": ffn_params(16, 24),
                   "layer norm": 2 * 2 * 16}
    # torch.nn's layer: its FFN is two bare Linear layers, which the function cannot name
    theirs = count_by_component(nn.TransformerEncoderLayer(16, 2, 24))
    assert theirs["attention"] == attention_params(16, 2)
    assert theirs["other"] == ffn_params(16, 24)
