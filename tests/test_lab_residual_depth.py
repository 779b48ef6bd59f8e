"""aiayn.lab.residual_depth: the skip connection carries the gradient to the bottom of a deep
stack (chapter residual_and_layer_norm), LayerNorm alone keeps its size but not the input."""

import pytest
import torch

from aiayn.lab.residual_depth import (FeedForwardStack, example_batch, first_layer_gradient,
                                      output_similarity, sweep)


def test_the_wrappers_compute_what_their_names_say():
    x, _ = example_batch(d_model=8, batch=2, length=3)
    plain = FeedForwardStack(1, skip=False, norm=False, d_model=8, d_ff=16)
    skip = FeedForwardStack(1, skip=True, norm=False, d_model=8, d_ff=16)
    paper = FeedForwardStack(1, skip=True, norm=True, d_model=8, d_ff=16)
    ffn = plain.ffns[0]
    torch.testing.assert_close(plain(x), ffn(x))
    torch.testing.assert_close(skip(x), x + ffn(x))  # the same seed: the same FFN weights
    torch.testing.assert_close(paper(x), torch.nn.functional.layer_norm(x + ffn(x), (8,), eps=1e-5))


def test_without_the_skip_the_gradient_vanishes_exponentially_and_with_it_it_does_not():
    plain = [first_layer_gradient(depth, skip=False) for depth in (6, 12, 24)]
    skip = [first_layer_gradient(depth, skip=True) for depth in (6, 12, 24)]
    assert plain[0] < 1e-2 and plain[1] < 1e-3 * plain[0] and plain[2] < 1e-6 * plain[1]
    assert all(0.1 < g < 100 for g in skip) and skip[2] > skip[0]


def test_layer_norm_keeps_the_size_but_without_the_skip_the_output_forgets_the_input():
    assert 0.3 < first_layer_gradient(24, skip=False, norm=True) < 10
    assert output_similarity(24, skip=False, norm=True) > 0.9
    assert output_similarity(24, skip=True, norm=True) < 0.5
    assert output_similarity(24, skip=False, norm=False) > 0.99  # the biases are all that is left


def test_measurements_are_deterministic_and_leave_the_global_seed_alone():
    torch.manual_seed(123)
    expected = torch.rand(1)
    torch.manual_seed(123)
    a = first_layer_gradient(6, skip=True)
    assert torch.rand(1) == expected
    assert first_layer_gradient(6, skip=True) == a


def test_sweep_measures_the_four_wrappers_at_every_depth():
    result = sweep(output_similarity, [1, 3], num_inputs=4)
    assert list(result) == ["plain", "skip", "norm", "skip+norm"]
    assert all(len(values) == 2 for values in result.values())


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="depth"):
        FeedForwardStack(0, skip=True, norm=False)
    with pytest.raises(ValueError, match="num_inputs"):
        output_similarity(3, skip=True, num_inputs=1)
