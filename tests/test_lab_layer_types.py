"""aiayn.lab.layer_types_np / layer_types_pt: the convolutional and restricted-attention layers
of Table 1 equal PyTorch's own modules (nn.Conv1d; the course's full attention under a band
mask), the NumPy and PyTorch versions agree in float64, and they look only where they should."""

import numpy as np
import pytest
import torch
from torch import nn

from aiayn.convert import numpy_state
from aiayn.lab import layer_types_np as lnp
from aiayn.lab import layer_types_pt as lpt
from aiayn.lab.rnn_vs_attention import ElmanRNN
from aiayn.pt.attention import MultiHeadAttention
from conftest import rand, record_difference

TOL = 1e-10


def conv1d(x, module: nn.Conv1d):
    """nn.Conv1d reads (B, d, T): our (B, T, d) transposed there and back."""
    return module(x.transpose(1, 2)).transpose(1, 2)


@pytest.mark.parametrize("k, dilation", [(1, 1), (3, 1), (5, 1), (3, 2), (5, 3)])
def test_convolution_equals_nn_conv1d(k, dilation):
    ours = lpt.Convolution(6, 5, k, dilation).double()
    ref = nn.Conv1d(6, 5, k, padding=(k - 1) // 2 * dilation, dilation=dilation).double()
    with torch.no_grad():
        ref.weight.copy_(ours.weight)
        ref.bias.copy_(ours.bias)
    x = torch.from_numpy(rand(2, 11, 6))
    diff = (ours(x) - conv1d(x, ref)).abs().max().item()
    record_difference("convolution vs nn.Conv1d", diff)
    assert ours(x).shape == (2, 11, 5) and diff <= TOL


@pytest.mark.parametrize("k, dilation", [(2, 1), (3, 1), (3, 4)])
def test_causal_convolution_equals_left_padded_nn_conv1d(k, dilation):
    ours = lpt.Convolution(4, 4, k, dilation, causal=True).double()
    # nn.Conv1d padded (k-1) D on both sides; its first T outputs are the causal ones
    ref = nn.Conv1d(4, 4, k, padding=(k - 1) * dilation, dilation=dilation).double()
    with torch.no_grad():
        ref.weight.copy_(ours.weight)
        ref.bias.copy_(ours.bias)
    x = torch.from_numpy(rand(2, 9, 4, seed=1))
    assert (ours(x) - conv1d(x, ref)[:, :9]).abs().max().item() <= TOL


@pytest.mark.parametrize("k, dilation", [(3, 1), (7, 2)])
def test_separable_convolution_equals_depthwise_then_pointwise_nn_conv1d(k, dilation):
    ours = lpt.SeparableConvolution(6, 8, k, dilation).double()
    ref = nn.Sequential(nn.Conv1d(6, 6, k, padding=(k - 1) // 2 * dilation, dilation=dilation, groups=6),
                        nn.Conv1d(6, 8, 1)).double()
    ref.load_state_dict({"0.weight": ours.depthwise.weight, "0.bias": ours.depthwise.bias,
                         "1.weight": ours.pointwise.weight, "1.bias": ours.pointwise.bias})
    x = torch.from_numpy(rand(3, 10, 6, seed=2))
    diff = (ours(x) - conv1d(x, ref)).abs().max().item()
    record_difference("separable convolution vs nn.Conv1d", diff)
    assert diff <= TOL


def full_weights(window_weights, r):
    """(B, H, T, r) window slots -> (B, H, T, T): slot j of query t is key t - (r-1)/2 + j."""
    B, H, T, _ = window_weights.shape
    full = torch.zeros(B, H, T, T + r - 1, dtype=window_weights.dtype)
    for t in range(T):
        full[:, :, t, t:t + r] = window_weights[:, :, t]
    return full[:, :, :, (r - 1) // 2:(r - 1) // 2 + T]


@pytest.mark.parametrize("T", [1, 5, 12, 17])
@pytest.mark.parametrize("r", [1, 3, 5, 9])
def test_restricted_attention_equals_full_attention_under_the_band_mask(T, r):
    torch.manual_seed(T * 10 + r)
    full = MultiHeadAttention(8, 2).double()
    restricted = lpt.RestrictedSelfAttention(8, 2, r).double()
    restricted.load_state_dict(full.state_dict())
    x = torch.from_numpy(rand(2, T, 8, seed=r))
    want, want_weights = full(x, x, x, lpt.band_mask(T, r))
    got, got_weights = restricted(x)
    assert got.shape == (2, T, 8) and got_weights.shape == (2, 2, T, r)
    diff = max((got - want).abs().max().item(),
               (full_weights(got_weights, r) - want_weights).abs().max().item())
    record_difference("restricted attention vs band-masked attention", diff)
    assert diff <= TOL


def test_restricted_attention_with_a_window_over_everything_is_full_attention():
    full = MultiHeadAttention(8, 4).double()
    restricted = lpt.RestrictedSelfAttention(8, 4, 2 * 7 - 1).double()
    restricted.load_state_dict(full.state_dict())
    x = torch.from_numpy(rand(2, 7, 8, seed=3))
    assert (restricted(x)[0] - full(x, x, x)[0]).abs().max().item() <= TOL


def test_restricted_weights_are_a_distribution_over_the_window_only():
    q, k, v = (torch.from_numpy(rand(1, 2, 10, 4, seed=s)) for s in range(3))
    out, weights = lpt.restricted_attention(q, k, v, 5)
    key = torch.arange(10)[:, None] - 2 + torch.arange(5)  # key of each slot
    off_the_ends = (key < 0) | (key >= 10)
    assert torch.all(weights[..., off_the_ends] == 0)
    assert torch.allclose(weights.sum(-1), torch.ones(1, 2, 10, dtype=torch.float64))
    assert torch.isfinite(out).all()


def mirrored():
    torch.manual_seed(0)
    return [("convolution", lpt.Convolution(6, 5, 3), lnp.Convolution(6, 5, 3)),
            ("dilated", lpt.Convolution(6, 6, 5, 2), lnp.Convolution(6, 6, 5, 2)),
            ("causal", lpt.Convolution(6, 6, 3, 3, causal=True), lnp.Convolution(6, 6, 3, 3, causal=True)),
            ("separable", lpt.SeparableConvolution(6, 4, 5), lnp.SeparableConvolution(6, 4, 5)),
            ("restricted", lpt.RestrictedSelfAttention(6, 2, 5), lnp.RestrictedSelfAttention(6, 2, 5)),
            ("recurrent", ElmanRNN(6, 6), lnp.ElmanRNN(6, 6))]


@pytest.mark.parametrize("T", [1, 4, 13])
@pytest.mark.parametrize("name, pt_layer, np_layer", mirrored(), ids=[m[0] for m in mirrored()])
def test_numpy_equals_pytorch_float64(name, pt_layer, np_layer, T):
    pt_layer = pt_layer.double()
    assert list(np_layer.state_dict()) == list(pt_layer.state_dict())
    np_layer.load_state_dict(numpy_state(pt_layer.state_dict()))
    x = rand(2, T, 6, seed=T)
    got_np, got_pt = np_layer(x), pt_layer(torch.from_numpy(x))
    if isinstance(got_np, tuple):  # attention: the weights too
        assert np.abs(got_np[1] - got_pt[1].detach().numpy()).max() <= TOL
        got_np, got_pt = got_np[0], got_pt[0]
    diff = np.abs(got_np - got_pt.detach().numpy()).max()
    record_difference(f"layer types NumPy vs PyTorch ({name})", diff)
    assert got_np.shape == tuple(got_pt.shape) and diff <= TOL


@pytest.mark.parametrize("layer, positions", [
    (lambda: lpt.Convolution(4, 4, 5), [6, 7, 8, 9, 10]),
    (lambda: lpt.Convolution(4, 4, 3, dilation=3), [5, 8, 11]),  # every D-th position
    (lambda: lpt.SeparableConvolution(4, 4, 7), [5, 6, 7, 8, 9, 10, 11]),
    (lambda: lpt.RestrictedSelfAttention(4, 2, 9), [4, 5, 6, 7, 8, 9, 10, 11, 12]),
], ids=["convolution", "dilated", "separable", "restricted"])
def test_output_depends_only_on_inputs_within_reach(layer, positions):
    layer = layer().double()
    x = torch.from_numpy(rand(1, 16, 4, seed=5)).requires_grad_()
    out = layer(x)
    out = out[0] if isinstance(out, tuple) else out
    out[0, 8].sum().backward()  # output position 8
    assert (x.grad[0].abs().sum(-1) > 0).nonzero().flatten().tolist() == positions


def test_causal_convolution_never_sees_the_future():
    layer = lpt.Convolution(4, 4, 3, dilation=2, causal=True).double()
    x = torch.from_numpy(rand(1, 10, 4, seed=6))
    changed = x.clone()
    changed[:, 6:] += 1.0
    assert torch.equal(layer(x)[:, :6], layer(changed)[:, :6])


@pytest.mark.parametrize("make, match", [
    (lambda m: m.Convolution(4, 4, 2), "kernel_size must be odd"),
    (lambda m: m.Convolution(4, 4, 0), "kernel_size must be a positive int"),
    (lambda m: m.Convolution(4, 4, 3, dilation=0), "dilation must be a positive int"),
    (lambda m: m.SeparableConvolution(4, 4, 4), "kernel_size must be odd"),
    (lambda m: m.RestrictedSelfAttention(4, 2, 4), "r must be odd"),
    (lambda m: m.RestrictedSelfAttention(6, 4, 3), "not divisible by num_heads"),
])
@pytest.mark.parametrize("lib", [lnp, lpt], ids=["numpy", "torch"])
def test_bad_sizes_raise_value_errors_naming_the_argument(lib, make, match):
    with pytest.raises(ValueError, match=match):
        make(lib)


@pytest.mark.parametrize("lib, to", [(lnp, np.asarray), (lpt, torch.from_numpy)], ids=["numpy", "torch"])
def test_bad_inputs_raise_value_errors_naming_the_shape(lib, to):
    with pytest.raises(ValueError, match=r"x must be 3-D"):
        lib.Convolution(4, 4, 3)(to(rand(5, 4)))
    with pytest.raises(ValueError, match=r"feature size 3 \(shape \(1, 5, 3\)\), expected 4"):
        lib.SeparableConvolution(4, 4, 3)(to(rand(1, 5, 3)))
    with pytest.raises(ValueError, match=r"x has feature size 6"):
        lib.RestrictedSelfAttention(4, 2, 3)(to(rand(1, 5, 6)))
    with pytest.raises(ValueError, match="same \\(B, H, T\\)"):
        lib.restricted_attention(to(rand(1, 2, 5, 4)), to(rand(1, 2, 6, 4)), to(rand(1, 2, 6, 4)), 3)


def test_gradients_reach_every_parameter():
    for layer in (lpt.Convolution(4, 4, 3), lpt.SeparableConvolution(4, 4, 3),
                  lpt.RestrictedSelfAttention(4, 2, 3)):
        out = layer(torch.randn(2, 6, 4))
        (out[0] if isinstance(out, tuple) else out).square().sum().backward()
        assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layer.parameters())
