"""aiayn.lab.model_size: parameter counts, on the model and in closed form."""

from dataclasses import replace

import pytest

from aiayn.config import TransformerConfig
from aiayn.lab.model_size import (count_parameters, implied_vocab_size, parameter_breakdown,
                                  parameter_formula)
from aiayn.pt.model import Transformer

BASE = TransformerConfig(37000, 37000, share_embeddings=True)
BIG = replace(BASE, d_model=1024, num_heads=16, d_ff=4096, dropout=0.3)
SMALL = TransformerConfig(50, 60, d_model=16, num_heads=2, num_layers=2, d_ff=24, max_len=30)

CONFIGS = [
    SMALL,
    replace(SMALL, norm_first=True),
    replace(SMALL, tie_output=False),
    replace(SMALL, positional="learned"),
    replace(SMALL, src_vocab_size=60, share_embeddings=True, tie_output=False),
    replace(SMALL, num_layers=5, d_ff=7, norm_first=True, positional="learned"),
    BASE,
    replace(BASE, share_embeddings=False, tie_output=False, norm_first=True),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_formula_equals_count(config):
    assert parameter_formula(config) == count_parameters(config)


@pytest.mark.parametrize("config", CONFIGS[:6])
def test_meta_count_equals_a_real_model(config):
    model = Transformer(config)
    assert count_parameters(config) == sum(p.numel() for p in model.parameters())


def test_paper_sizes_with_a_shared_37000_vocabulary():
    # Worked out by hand: embeddings V d, encoder 6 (4d^2 + 4d + 2 d d_ff + d_ff + d + 4d),
    # decoder 6 (8d^2 + 8d + 2 d d_ff + d_ff + d + 6d). The paper rounds to 65M and 213M.
    assert count_parameters(BASE) == 63_082_496
    assert count_parameters(BIG) == 214_245_376


def test_sharing_and_tying_each_remove_one_matrix():
    untied = replace(BASE, tie_output=False)
    unshared = replace(BASE, share_embeddings=False)
    assert parameter_formula(untied) - parameter_formula(BASE) == 37000 * 512
    assert parameter_formula(unshared) - parameter_formula(BASE) == 37000 * 512
    assert parameter_breakdown(BASE)["target embedding"] == 0
    assert parameter_breakdown(BASE)["output projection"] == 0


def test_pre_ln_adds_two_final_norms():
    assert parameter_formula(replace(BASE, norm_first=True)) - parameter_formula(BASE) == 4 * 512


@pytest.mark.parametrize("config", [BASE, BIG, SMALL])
def test_implied_vocab_size_inverts_the_formula(config):
    shared = replace(config, src_vocab_size=1234, tgt_vocab_size=1234, share_embeddings=True)
    assert implied_vocab_size(shared, parameter_formula(shared)) == pytest.approx(1234)
    assert implied_vocab_size(BASE, 65e6) == pytest.approx((65e6 - 44_138_496) / 512)

