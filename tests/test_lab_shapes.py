"""aiayn.lab.shapes: the trace lists Figure 1's modules in execution order with the right
shapes, and leaves no hook behind."""

import pytest
import torch
from torch import nn

from aiayn.config import TransformerConfig
from aiayn.lab.shapes import format_trace, trace_shapes
from aiayn.pt.model import Transformer

B, T_SRC, T_TGT, D, H, D_FF, V_SRC, V_TGT = 2, 7, 5, 16, 4, 24, 50, 40


def model(num_layers=2, **kwargs):
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=V_SRC, tgt_vocab_size=V_TGT, d_model=D,
                               num_heads=H, num_layers=num_layers, d_ff=D_FF, **kwargs)
    return Transformer(config)


def ids(vocab, length):
    return torch.randint(1, vocab, (B, length), generator=torch.Generator().manual_seed(length))


def expected_trace(num_layers, norm_first=False):
    src, tgt = (B, T_SRC, D), (B, T_TGT, D)
    rows = [("src_embed", src), ("pos", src)]
    for i in range(num_layers):
        p = f"encoder.layers.{i}"
        rows += [(f"{p}.self_attn", src), (f"{p}.self_attn weights", (B, H, T_SRC, T_SRC)),
                 (f"{p}.ffn.w_1", (B, T_SRC, D_FF)), (f"{p}.ffn", src), (p, src)]
    rows += [("encoder.norm", src)] if norm_first else []
    rows += [("encoder", src), ("tgt_embed", tgt), ("pos", tgt)]
    for i in range(num_layers):
        p = f"decoder.layers.{i}"
        rows += [(f"{p}.self_attn", tgt), (f"{p}.self_attn weights", (B, H, T_TGT, T_TGT)),
                 (f"{p}.cross_attn", tgt), (f"{p}.cross_attn weights", (B, H, T_TGT, T_SRC)),
                 (f"{p}.ffn.w_1", (B, T_TGT, D_FF)), (f"{p}.ffn", tgt), (p, tgt)]
    rows += [("decoder.norm", tgt)] if norm_first else []
    return rows + [("decoder", tgt), ("out_proj", (B, T_TGT, V_TGT))]


@pytest.mark.parametrize("num_layers", [1, 3])
@pytest.mark.parametrize("norm_first", [False, True])
def test_trace_lists_modules_in_order_with_shapes(num_layers, norm_first):
    trace = trace_shapes(model(num_layers, norm_first=norm_first), ids(V_SRC, T_SRC), ids(V_TGT, T_TGT))
    assert trace == expected_trace(num_layers, norm_first)


def test_trace_does_not_change_the_output_and_removes_hooks():
    m = model().eval()
    src, tgt = ids(V_SRC, T_SRC), ids(V_TGT, T_TGT)
    with torch.no_grad():
        before = m(src, tgt)
    trace_shapes(m, src, tgt)
    assert all(not mod._forward_hooks for mod in m.modules())
    with torch.no_grad():
        assert torch.equal(m(src, tgt), before)


def test_hooks_are_removed_when_the_forward_pass_fails():
    m = model()
    with pytest.raises(ValueError, match="batch size"):
        trace_shapes(m, ids(V_SRC, T_SRC), ids(V_TGT, T_TGT)[:1])
    assert all(not mod._forward_hooks for mod in m.modules())


def test_shared_embedding_is_one_module_and_runs_twice():
    torch.manual_seed(0)
    config = TransformerConfig(src_vocab_size=V_SRC, tgt_vocab_size=V_SRC, d_model=D,
                               num_heads=H, num_layers=1, d_ff=D_FF, share_embeddings=True)
    names = [n for n, _ in trace_shapes(Transformer(config), ids(V_SRC, T_SRC), ids(V_SRC, T_TGT))]
    assert names.count("src_embed") == 2 and "tgt_embed" not in names


def test_trace_rejects_other_models():
    with pytest.raises(ValueError, match="aiayn.pt.model.Transformer"):
        trace_shapes(nn.Linear(2, 2), torch.zeros(1, 2), torch.zeros(1, 2))


def test_format_trace_aligns_columns():
    text = format_trace([("src_embed", (2, 7, 16)), ("decoder.layers.0.cross_attn", (2, 5, 16))])
    lines = text.splitlines()
    assert lines[0].startswith("module") and "output shape" in lines[0]
    assert lines[2] == "src_embed" + " " * 20 + "(2, 7, 16)"
    assert lines[3] == "decoder.layers.0.cross_attn  (2, 5, 16)"
