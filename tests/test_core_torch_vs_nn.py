"""The course's PyTorch modules vs PyTorch's own, with copied weights, float64, dropout 0."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from aiayn.pt import attention as ta, decoder as td, encoder as tenc, masks as tm
from aiayn.pt import normalization as tn
from conftest import rand, record_difference, tokens

TOL = 1e-10
T = torch.as_tensor


def close(a, b):
    assert a.shape == b.shape
    diff = (a - b).abs().max().item()
    record_difference("torch_vs_torch.nn", diff)
    assert diff <= TOL, f"max abs difference {diff:.3e} > {TOL}"


SDPA_MASKS = {
    "none": None,
    "padding": T(np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)[:, None, None, :]),
    "causal": tm.causal_mask(5),
    "per_head_random": T(np.random.default_rng(7).random((2, 3, 5, 5)) < 0.7) | tm.causal_mask(5),
    "all_masked_row": T(np.array([[1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=bool)[:, None, None, :]),
}


@pytest.mark.parametrize("name", SDPA_MASKS)
def test_sdpa_matches_torch_functional(name):
    q, k, v = (T(rand(2, 3, 5, 8, seed=s)) for s in (1, 2, 3))
    mask = SDPA_MASKS[name]
    ours, _ = ta.scaled_dot_product_attention(q, k, v, mask)
    theirs = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # bool: True = take part
    close(ours, theirs)
    if name == "all_masked_row":  # both give a zero output, not NaN, for a row with no keys
        assert torch.all(ours[1] == 0) and torch.all(theirs[1] == 0)


def copy_mha(ours: ta.MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """nn.MultiheadAttention packs W_Q, W_K, W_V into one (3 d_model, d_model) matrix."""
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.w_q.bias, ours.w_k.bias, ours.w_v.bias]))
        theirs.out_proj.weight.copy_(ours.w_o.weight)
        theirs.out_proj.bias.copy_(ours.w_o.bias)


@pytest.mark.parametrize("kind", ["self", "cross_padded", "causal"])
def test_multi_head_attention_matches_nn(kind):
    ours = ta.MultiHeadAttention(16, 4).double()
    theirs = nn.MultiheadAttention(16, 4, batch_first=True, dtype=torch.float64)
    copy_mha(ours, theirs)
    x, mem = T(rand(2, 5, 16, seed=1)), T(rand(2, 6, 16, seed=2))
    if kind == "self":
        out, w = ours(x, x, x)
        ref, ref_w = theirs(x, x, x, average_attn_weights=False)
    elif kind == "cross_padded":
        keep = tm.padding_mask(T(tokens(2, 6, 9, pad_tail=[2, 0])), 0)
        out, w = ours(x, mem, mem, keep)
        # nn.MultiheadAttention's key_padding_mask means "blocked": the negation of ours.
        ref, ref_w = theirs(x, mem, mem, key_padding_mask=~keep[:, 0, 0, :],
                            average_attn_weights=False)
    else:
        out, w = ours(x, x, x, tm.causal_mask(5))
        ref, ref_w = theirs(x, x, x, attn_mask=~tm.causal_mask(5)[0, 0],
                            average_attn_weights=False)
    close(out, ref)
    close(w, ref_w)


def test_layer_norm_matches_nn():
    ours, theirs = tn.LayerNorm(16).double(), nn.LayerNorm(16, dtype=torch.float64)
    with torch.no_grad():
        ours.weight.copy_(T(rand(16, seed=4)))
        ours.bias.copy_(T(rand(16, seed=5)))
        theirs.load_state_dict(ours.state_dict())
    x = T(rand(3, 7, 16) * 5 + 2)
    close(ours(x), theirs(x))


def copy_layer(ours, theirs) -> None:
    """Our layer names -> nn.Transformer{Encoder,Decoder}Layer names."""
    copy_mha(ours.self_attn, theirs.self_attn)
    if hasattr(ours, "cross_attn"):
        copy_mha(ours.cross_attn, theirs.multihead_attn)
    with torch.no_grad():
        for mine, its in ((ours.ffn.w_1, theirs.linear1), (ours.ffn.w_2, theirs.linear2)):
            its.weight.copy_(mine.weight)
            its.bias.copy_(mine.bias)
        for i in (1, 2, 3):
            if hasattr(ours, f"norm{i}"):
                getattr(theirs, f"norm{i}").load_state_dict(getattr(ours, f"norm{i}").state_dict())


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("norm_first", [False, True], ids=["post_ln", "pre_ln"])
def test_encoder_decoder_match_nn_transformer(norm_first):
    d, h, ff, n = 16, 4, 32, 2
    enc = tenc.Encoder(n, d, h, ff, 0.0, norm_first).double()
    dec = td.Decoder(n, d, h, ff, 0.0, norm_first).double()
    ref = nn.Transformer(d, h, n, n, ff, dropout=0.0, activation="relu", batch_first=True,
                         norm_first=norm_first, dtype=torch.float64)
    for mine, its in zip(enc.layers, ref.encoder.layers):
        copy_layer(mine, its)
    for mine, its in zip(dec.layers, ref.decoder.layers):
        copy_layer(mine, its)
    if norm_first:  # Pre-LN stacks end in a LayerNorm, in ours and in nn.Transformer
        ref.encoder.norm.load_state_dict(enc.norm.state_dict())
        ref.decoder.norm.load_state_dict(dec.norm.state_dict())
    else:  # nn.Transformer always adds a final LayerNorm; the paper's Post-LN stack has none
        ref.encoder.norm, ref.decoder.norm = None, None
    src_ids = T(tokens(2, 7, 9, pad_tail=[3, 0]))
    tgt_ids = T(tokens(2, 5, 9, seed=1, pad_tail=[0, 2]))
    src, tgt = T(rand(2, 7, d, seed=1)), T(rand(2, 5, d, seed=2))
    src_keep, tgt_keep = tm.padding_mask(src_ids, 0), tm.target_mask(tgt_ids, 0)
    ours = dec(tgt, enc(src, src_keep), src_keep, tgt_keep)
    theirs = ref(src, tgt,
                 tgt_mask=~tm.causal_mask(5)[0, 0],
                 src_key_padding_mask=~src_keep[:, 0, 0, :],
                 tgt_key_padding_mask=~tm.padding_mask(tgt_ids, 0)[:, 0, 0, :],
                 memory_key_padding_mask=~src_keep[:, 0, 0, :])
    close(ours, theirs)


@pytest.mark.parametrize("name", ["none", "padding", "causal"])
def test_fused_multi_head_attention_equals_explicit(name):
    """The training path (F.scaled_dot_product_attention) computes the course's function."""
    mha = ta.MultiHeadAttention(16, 4).double()
    x = T(rand(2, 5, 16, seed=1))
    mask = {"none": None, "padding": SDPA_MASKS["padding"], "causal": tm.causal_mask(5)}[name]
    explicit, weights = mha(x, x, x, mask)
    mha.fused = True
    fused, no_weights = mha(x, x, x, mask)
    assert weights is not None and no_weights is None
    close(fused, explicit)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="cuDNN's attention exists on CUDA only")
def test_fused_attention_on_cuda_never_runs_cudnn_and_equals_explicit():
    """On a GPU the fused path leaves cuDNN's attention out (ta.PLANLESS_BACKENDS: it builds a
    plan for every new shape); the kernels it runs instead compute the same function."""
    from torch.profiler import ProfilerActivity, profile

    mha = ta.MultiHeadAttention(64, 4).cuda()
    x = torch.randn(8, 21, 64, device="cuda")
    mask = (torch.arange(21, device="cuda") < torch.randint(5, 22, (8, 1, 1, 1), device="cuda"))  # padded keys
    explicit, _ = mha(x, x, x, mask)
    mha.fused = True
    with profile(activities=[ProfilerActivity.CPU]) as prof, torch.autocast("cuda", dtype=torch.bfloat16):
        fused, _ = mha(x, x, x, mask)
        fused.float().sum().backward()
    ops = [e.key for e in prof.key_averages()]  # aten::_scaled_dot_product_cudnn_attention if cuDNN ran
    assert "aten::scaled_dot_product_attention" in ops and not [op for op in ops if "cudnn" in op], ops
    torch.testing.assert_close(fused.float(), explicit, atol=3e-2, rtol=3e-2)  # bf16 against float32


@pytest.mark.parametrize("sizes", [(2, None), (3, 6)], ids=["narrow_keys", "d_k_ne_d_v"])
def test_head_widths_other_than_d_model_over_h(sizes):
    """Table 3 (B): heads of d_k (and d_v) features whatever d_model is. torch.nn has no such
    option, so the reference is the paper's formula head by head (the lab's loop) and
    F.scaled_dot_product_attention through the fused path; parameters are counted by formula."""
    from aiayn.convert import numpy_state
    from aiayn.lab.naive_attention import multi_head_attention_loop
    from aiayn.lab.param_count import attention_params
    from aiayn.np.attention import MultiHeadAttention as NumpyMHA

    d_k, d_v = sizes
    mha = ta.MultiHeadAttention(16, 4, d_k, d_v).double()
    assert sum(p.numel() for p in mha.parameters()) == attention_params(16, 4, d_k, d_v)
    assert mha.w_q.weight.shape == (4 * d_k, 16) and mha.w_o.weight.shape == (16, 4 * (d_v or 4))
    x, mem = T(rand(2, 5, 16, seed=1)), T(rand(2, 6, 16, seed=2))
    mask = T(np.array([[1, 1, 1, 1, 0, 0], [1] * 6], dtype=bool)[:, None, None, :])  # padded keys
    out, weights = mha(x, mem, mem, mask)
    assert weights.shape == (2, 4, 5, 6)
    looped = NumpyMHA(16, 4, d_k, d_v)
    looped.load_state_dict(numpy_state(mha.state_dict()))
    ref_out, ref_weights = multi_head_attention_loop(looped, x.numpy(), mem.numpy(), mem.numpy(),
                                                     mask.numpy())
    close(out, T(ref_out))
    close(weights, T(ref_weights))
    mha.fused = True
    close(mha(x, mem, mem, mask)[0], out)
