"""aiayn.lab.gradients: gradient norms per layer, Post-LN and Pre-LN."""

import math

import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.lab.gradients import gradient_norms_per_layer, next_token_loss, xavier_init_
from aiayn.pt.model import Transformer


def make(norm_first, seed=0, layers=3):
    torch.manual_seed(seed)
    config = TransformerConfig(40, 40, d_model=16, num_heads=2, num_layers=layers, d_ff=32,
                               max_len=20, share_embeddings=True, norm_first=norm_first)
    return Transformer(config).double()


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(1, 40, (4, 7), generator=g)
    tgt = torch.randint(1, 40, (4, 6), generator=g)
    src[0, -2:] = 0  # some padding on both sides
    tgt[1, -1:] = 0
    return src, tgt


@pytest.mark.parametrize("norm_first", [False, True])
def test_one_finite_positive_norm_per_layer(norm_first):
    norms = gradient_norms_per_layer(make(norm_first, layers=3), *batch())
    assert set(norms) == {"encoder", "decoder"}
    for stack in norms.values():
        assert len(stack) == 3
        assert all(math.isfinite(n) and n > 0 for n in stack)


@pytest.mark.parametrize("norm_first", [False, True])
def test_norms_equal_those_of_an_ordinary_backward_pass(norm_first):
    model = make(norm_first)
    norms = gradient_norms_per_layer(model, *batch())
    model.eval()
    next_token_loss(model, *batch()).backward()
    for stack in ("encoder", "decoder"):
        for layer, norm in zip(getattr(model, stack).layers, norms[stack]):
            expected = torch.sqrt(sum((p.grad ** 2).sum() for p in layer.parameters()))
            assert norm == pytest.approx(float(expected), rel=1e-10)


def test_deterministic_and_leaves_the_model_alone():
    model = make(False).train()
    first = gradient_norms_per_layer(model, *batch())
    assert gradient_norms_per_layer(model, *batch()) == first
    assert gradient_norms_per_layer(make(False), *batch()) == first  # same seed, same numbers
    assert model.training, "training mode must be restored"
    assert all(p.grad is None for p in model.parameters())


def test_variants_and_weights_change_the_result():
    assert gradient_norms_per_layer(make(False), *batch()) != gradient_norms_per_layer(make(True), *batch())
    assert gradient_norms_per_layer(make(False, seed=0), *batch()) != gradient_norms_per_layer(make(False, seed=5), *batch())


def test_one_parameter_per_layer():
    model = make(True)
    norms = gradient_norms_per_layer(model, *batch(), parameter="ffn.w_2.weight")
    model.eval()
    loss = next_token_loss(model, *batch())
    grad = torch.autograd.grad(loss, model.decoder.layers[2].ffn.w_2.weight)[0]
    assert norms["decoder"][2] == pytest.approx(float(grad.norm()), rel=1e-10)
    with pytest.raises(ValueError, match="parameter='ffn.w_3.weight'"):
        gradient_norms_per_layer(model, *batch(), parameter="ffn.w_3.weight")


def test_bad_batches_raise():
    src, tgt = batch()
    with pytest.raises(ValueError, match="tgt needs at least 2 positions"):
        next_token_loss(make(False), src, tgt[:, :1])
    with pytest.raises(ValueError, match="batch size"):
        next_token_loss(make(False), src[:2], tgt)


def test_xavier_init_keeps_embeddings_and_zeroes_biases():
    model = make(False, layers=2)
    embedding = model.src_embed.weight.detach().clone()
    xavier_init_(model)
    assert torch.equal(model.src_embed.weight, embedding)
    assert model.out_proj.weight is model.src_embed.weight
    w = model.encoder.layers[0].ffn.w_1.weight.detach()  # (32, 16): Xavier bound sqrt(6 / 48)
    assert float(w.abs().max()) <= math.sqrt(6 / 48)
    assert float(w.abs().max()) > 1 / math.sqrt(16)  # beyond PyTorch's default bound 1/sqrt(16)
    assert torch.count_nonzero(model.decoder.layers[1].cross_attn.w_q.bias) == 0


def test_pytorch_default_has_a_third_of_xavier_variance_only_for_square_maps():
    # nn.Linear: U(+-1/sqrt(fan_in)), variance 1/(3 fan_in); Xavier: 2/(fan_in + fan_out).
    torch.manual_seed(0)
    config = TransformerConfig(40, 40, d_model=64, num_heads=4, num_layers=1, d_ff=256,
                               max_len=20, share_embeddings=True)
    default = Transformer(config).double()
    xavier = Transformer(config).double()
    xavier_init_(xavier)
    for name in ("self_attn.w_q.weight", "ffn.w_1.weight", "ffn.w_2.weight"):
        w_default = default.encoder.layers[0].get_parameter(name)
        w_xavier = xavier.encoder.layers[0].get_parameter(name)
        fan_out, fan_in = w_default.shape
        ratio = float(w_default.detach().var() / w_xavier.detach().var())
        assert ratio == pytest.approx((fan_in + fan_out) / (6 * fan_in), rel=0.1), name
