"""Backpropagation by hand through the whole encoder-decoder: every parameter's gradient equals
PyTorch autograd's (float64, dropout 0, padded batches) for Post-LN and Pre-LN, tied or not,
sinusoidal or learned positions; and the label-smoothed loss and its gradient equal PyTorch's."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.data.specials import PAD_ID
from aiayn.np.loss import token_loss_sum, token_loss_sum_backward
from aiayn.pt.model import Transformer as TorchTransformer
from aiayn.train.loss import token_loss_sum as torch_token_loss_sum
from conftest import record_difference, tokens

TOL = 1e-10
VOCAB = 13


def batch(B, S, T, seed=0):
    """Padded source (B, S) and target (B, T + 1) ids; with B > 1 the rows have different lengths."""
    pads = [0, 2, 1, 3][:B]
    src = tokens(B, S, VOCAB, seed=seed, pad_tail=pads)
    tgt = tokens(B, T + 1, VOCAB, seed=seed + 1, pad_tail=pads[::-1])
    return src, tgt


def config(**overrides):
    fields = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=12, num_heads=3, num_layers=2,
                  d_ff=20, d_k=5, d_v=3, dropout=0.0, max_len=16)
    return TransformerConfig(**(fields | overrides))


VARIANTS = {
    "post_ln_tied": dict(),
    "pre_ln_tied": dict(norm_first=True),
    "post_ln_shared_learned": dict(share_embeddings=True, positional="learned"),
    "pre_ln_untied_d_k_eq_d_v": dict(norm_first=True, tie_output=False, d_k=None, d_v=None),
}


def gradients_of_both(cfg, src, tgt, label_smoothing=0.1):
    """The gradients of the mean label-smoothed loss per target token, NumPy and PyTorch."""
    torch.manual_seed(0)
    pt_model = TorchTransformer(cfg).double()
    np_model = numpy_model_from_torch(pt_model).train()
    decoder_input, labels = tgt[:, :-1], tgt[:, 1:]
    n = int((labels != PAD_ID).sum())
    logits = pt_model(torch.from_numpy(src), torch.from_numpy(decoder_input))
    loss = F.cross_entropy(logits.flatten(0, 1), torch.from_numpy(labels).flatten(),
                           ignore_index=PAD_ID, label_smoothing=label_smoothing, reduction="sum") / n
    loss.backward()
    np_logits = np_model(src, decoder_input)
    np_model.backward(token_loss_sum_backward(np_logits, labels, label_smoothing) / n)
    return np_model, pt_model


@pytest.mark.parametrize("shape", [(3, 7, 5), (1, 4, 6)], ids=["B3_S7_T5", "batch_of_1_S4_T6"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_parameter_gradient_equals_autograd(variant, shape):
    src, tgt = batch(*shape)
    np_model, pt_model = gradients_of_both(config(**VARIANTS[variant]), src, tgt)
    grads = np_model.gradients()
    named = dict(pt_model.named_parameters(remove_duplicate=False))  # tied weights: every name
    assert grads.keys() == named.keys() == pt_model.state_dict().keys()
    worst = 0.0
    for name, param in named.items():
        assert grads[name].shape == tuple(param.shape), name
        worst = max(worst, float(np.abs(grads[name] - param.grad.numpy()).max()))
    record_difference("backprop_full_model_vs_autograd", worst)
    assert worst <= TOL, f"largest gradient difference {worst:.3e}"
    # Every forward pass was undone: nothing is left on any module's stack.
    assert all(not m.__dict__.get("_saved") for m in np_model.modules())


def test_tied_weight_gets_the_sum_of_its_three_uses():
    src, tgt = batch(2, 5, 4)
    np_model, _ = gradients_of_both(config(share_embeddings=True), src, tgt)
    assert np_model.out_proj.weight is np_model.src_embed.weight is np_model.tgt_embed.weight
    assert np_model.src_embed is np_model.tgt_embed  # one module: source and target uses add up there
    from_embeddings, from_output = np_model.src_embed._grads["weight"], np_model.out_proj._grads["weight"]
    grads = np_model.gradients()
    assert grads["src_embed.weight"] is grads["tgt_embed.weight"] is grads["out_proj.weight"]
    np.testing.assert_allclose(grads["out_proj.weight"], from_embeddings + from_output, rtol=0, atol=1e-15)
    # An id that is read nowhere gets a gradient through the output projection alone.
    unread = sorted(set(range(VOCAB)) - set(src.ravel()) - set(tgt[:, :-1].ravel()))
    assert unread and np.all(from_embeddings[unread] == 0.0)
    assert np.all(np.abs(grads["out_proj.weight"][unread]).max(axis=1) > 0)


def test_whole_model_finite_differences_on_sampled_weights():
    src, tgt = batch(2, 5, 4, seed=3)
    np_model, _ = gradients_of_both(config(norm_first=True, positional="learned"), src, tgt, 0.1)
    grads = np_model.gradients()
    np_model.eval()
    labels, n = tgt[:, 1:], int((tgt[:, 1:] != PAD_ID).sum())
    params = dict(np_model.named_parameters())
    rng = np.random.default_rng(0)
    for name in ("encoder.layers.0.self_attn.w_q.weight", "decoder.layers.1.cross_attn.w_v.bias",
                 "decoder.norm.weight", "pos.weight", "out_proj.weight"):
        param = params[name]
        for flat in rng.choice(param.size, size=3, replace=False):
            i = np.unravel_index(flat, param.shape)
            saved, h = param[i], 1e-6
            param[i] = saved + h
            up = token_loss_sum(np_model(src, tgt[:, :-1]), labels, 0.1) / n
            param[i] = saved - h
            down = token_loss_sum(np_model(src, tgt[:, :-1]), labels, 0.1) / n
            param[i] = saved
            assert abs((up - down) / (2 * h) - grads[name][i]) < 1e-7, (name, i)


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_loss_and_its_gradient_equal_pytorch(label_smoothing):
    rng = np.random.default_rng(0)
    logits, labels = 3 * rng.standard_normal((2, 5, 7)), rng.integers(1, 7, size=(2, 5))
    labels[0, 3:] = PAD_ID
    z = torch.tensor(logits, requires_grad=True)
    want = F.cross_entropy(z.flatten(0, 1), torch.from_numpy(labels).flatten(), ignore_index=PAD_ID,
                           label_smoothing=label_smoothing, reduction="sum")
    want.backward()
    assert abs(token_loss_sum(logits, labels, label_smoothing) - want.item()) <= 1e-12
    grad = token_loss_sum_backward(logits, labels, label_smoothing)
    assert np.abs(grad - z.grad.numpy()).max() <= 1e-14
    assert np.all(grad[0, 3:] == 0.0), "padding positions get no gradient"
    # The course's PyTorch training loss (computed in float32) agrees to float32 precision.
    course = torch_token_loss_sum(torch.from_numpy(logits), torch.from_numpy(labels), label_smoothing)
    assert abs(token_loss_sum(logits, labels, label_smoothing) - course.item()) <= 1e-5


def test_loss_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"logits \(2, 5, 7\) and labels \(2, 4\)"):
        token_loss_sum(np.zeros((2, 5, 7)), np.ones((2, 4), dtype=np.int64))
    with pytest.raises(ValueError, match="label_smoothing"):
        token_loss_sum_backward(np.zeros((2, 5, 7)), np.ones((2, 5), dtype=np.int64), 1.5)
