"""The choices after the paper as options of the one model (aiayn.np.variants, aiayn.pt.variants):
the new modules are mirrors like the rest; the paper's configuration builds exactly the paper's
parts (same classes, same initial weights as before the options existed); each option builds
its part in every layer, NumPy = PyTorch over the whole model (float64, forward and every
parameter's gradient), and the configuration refuses what it cannot build."""

import importlib
import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch, torch_model_from_numpy
from aiayn.data.specials import PAD_ID
from aiayn.np.loss import token_loss_sum_backward
from aiayn.pt.attention import MultiHeadAttention
from aiayn.pt.decoder_only import DecoderOnlyTransformer
from aiayn.pt.feedforward import PositionwiseFeedForward
from aiayn.pt.gqa import GroupedQueryAttention
from aiayn.pt.model import Transformer
from aiayn.pt.normalization import LayerNorm
from aiayn.pt.rmsnorm import RMSNorm
from aiayn.pt.rotary import RotaryPositions
from aiayn.pt.swiglu import SwiGLUFeedForward
from conftest import record_difference, tokens

NEW_MODULES = ["rmsnorm", "swiglu", "rotary", "chunked", "gqa", "variants", "variant_cache", "decoder_only"]
TOL = 1e-10
VOCAB = 13
OPTIONS = {
    "paper": dict(),
    "rms": dict(norm="rms"),
    "swiglu": dict(ffn="swiglu"),
    "gqa2": dict(num_kv_heads=2),
    "mqa_rotary": dict(num_kv_heads=1, positional="rotary"),
    "key_block": dict(key_block=3),
    "all_pre_ln": dict(norm="rms", ffn="swiglu", num_kv_heads=2, positional="rotary", key_block=2, norm_first=True),
}


def config(**overrides):
    fields = dict(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=16, num_heads=4, num_layers=2,
                  d_ff=24, dropout=0.0, max_len=32)
    return TransformerConfig(**(fields | overrides))


def public(module):
    return {name: obj for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module.__name__}


def params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", NEW_MODULES)
def test_new_modules_are_mirrors(name):
    np_mod, pt_mod = (importlib.import_module(f"aiayn.{impl}.{name}") for impl in ("np", "pt"))
    assert sorted(public(np_mod)) == sorted(public(pt_mod)) and public(np_mod)
    for obj_name, np_obj in public(np_mod).items():
        pt_obj = public(pt_mod)[obj_name]
        pairs = [(np_obj.__init__, pt_obj.__init__), (np_obj.forward, pt_obj.forward)] if inspect.isclass(np_obj) \
            else [(np_obj, pt_obj)]
        assert all(params(a) == params(b) for a, b in pairs), obj_name


def test_the_papers_configuration_builds_the_papers_parts_with_the_same_weights():
    torch.manual_seed(3)
    model = Transformer(config())
    kinds = {type(m) for m in model.modules()}
    assert MultiHeadAttention in kinds and LayerNorm in kinds and PositionwiseFeedForward in kinds
    assert not kinds & {GroupedQueryAttention, RMSNorm, SwiGLUFeedForward, RotaryPositions}
    # Norms and feed-forward networks are chosen without touching the random stream: an RMSNorm
    # model's weights are the paper model's, less the LayerNorm biases (seeds pair across arms).
    torch.manual_seed(3)
    rms = Transformer(config(norm="rms")).state_dict()
    paper = model.state_dict()
    assert set(paper) - set(rms) == {k for k in paper if k.endswith(("norm1.bias", "norm2.bias", "norm3.bias"))}
    assert all(torch.equal(rms[k], paper[k]) for k in rms)


@pytest.mark.parametrize("name", OPTIONS)
def test_each_option_builds_its_part_everywhere(name):
    c = config(**OPTIONS[name])
    model = Transformer(c)
    layers = [*model.encoder.layers, *model.decoder.layers]
    norms = [getattr(layer, n) for layer in layers for n in ("norm1", "norm2", "norm3") if hasattr(layer, n)]
    assert all(type(n) is (RMSNorm if c.norm == "rms" else LayerNorm) for n in norms)
    assert all(type(layer.ffn) is (SwiGLUFeedForward if c.ffn == "swiglu" else PositionwiseFeedForward)
               for layer in layers)
    attention = [a for layer in layers for a in (layer.self_attn, getattr(layer, "cross_attn", None)) if a is not None]
    grouped = c.num_kv_heads is not None or c.positional == "rotary" or c.key_block is not None
    assert all(isinstance(a, GroupedQueryAttention) == grouped for a in attention)
    if grouped:
        rotary = [a.rotary for a in attention]
        # Rotary positions rotate self-attention only; encoder-decoder attention stays unrotated.
        assert rotary == [c.positional == "rotary" and a is not getattr(l, "cross_attn", None)
                          for l in layers for a in (l.self_attn, getattr(l, "cross_attn", None)) if a is not None]
    assert isinstance(model.pos, RotaryPositions) == (c.positional == "rotary")


def batch(seed=0):
    src = tokens(3, 7, VOCAB, seed=seed, pad_tail=[0, 2, 1])
    tgt = tokens(3, 6, VOCAB, seed=seed + 1, pad_tail=[1, 0, 3])
    return src, tgt


def gradients_of_both(model_class, c, label_smoothing=0.1):
    torch.manual_seed(0)
    pt_model = model_class(c).double()
    np_model = numpy_model_from_torch(pt_model).train()
    src, tgt = batch()
    decoder_input, labels = tgt[:, :-1], tgt[:, 1:]
    n = int((labels != PAD_ID).sum())
    logits = pt_model(torch.from_numpy(src), torch.from_numpy(decoder_input))
    loss = F.cross_entropy(logits.flatten(0, 1), torch.from_numpy(labels).flatten(), ignore_index=PAD_ID,
                           label_smoothing=label_smoothing, reduction="sum") / n
    loss.backward()
    np_logits = np_model(src, decoder_input)
    np_model.backward(token_loss_sum_backward(np_logits, labels, label_smoothing) / n)
    return np_logits, logits, np_model, pt_model


@pytest.mark.parametrize("model_class", [Transformer, DecoderOnlyTransformer], ids=["encoder_decoder", "decoder_only"])
@pytest.mark.parametrize("name", OPTIONS)
def test_numpy_equals_torch_forward_and_every_gradient(model_class, name):
    np_logits, logits, np_model, pt_model = gradients_of_both(model_class, config(**OPTIONS[name]))
    diff = float(np.abs(np_logits - logits.detach().numpy()).max())
    grads = np_model.gradients()
    worst = max(float(np.abs(grads[k] - p.grad.numpy()).max()) for k, p in pt_model.named_parameters())
    record_difference("after_paper_numpy_vs_torch", max(diff, worst))
    assert diff < TOL and worst < TOL
    assert all(p.grad.abs().sum() > 0 for p in pt_model.parameters()), "a parameter got no gradient"
    assert all(np.isfinite(g).all() for g in grads.values())


@pytest.mark.parametrize("name", ["mqa_rotary", "all_pre_ln"])
def test_weights_convert_both_ways(name):
    model = DecoderOnlyTransformer(config(**OPTIONS[name])).double().eval()
    back = torch_model_from_numpy(numpy_model_from_torch(model), torch.float64)
    assert type(back) is DecoderOnlyTransformer
    src, tgt = (torch.from_numpy(x) for x in batch())
    assert torch.equal(back(src, tgt), model(src, tgt))


@pytest.mark.parametrize("fields, message", [
    (dict(norm="batch"), "norm must be"), (dict(ffn="gelu"), "ffn must be"),
    (dict(num_kv_heads=3), "must divide num_heads"), (dict(num_kv_heads=0), "num_kv_heads must be a positive int"),
    (dict(key_block=0), "key_block must be a positive int"), (dict(positional="alibi"), "positional must be"),
    (dict(positional="rotary", d_k=3), "must be even"),
])
def test_configuration_refuses_what_it_cannot_build(fields, message):
    with pytest.raises(ValueError, match=message):
        config(**fields)
