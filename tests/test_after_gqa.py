"""Multi-query and grouped-query attention: NumPy = PyTorch in float64 (forward and the hand-written
backward), PyTorch = F.scaled_dot_product_attention(..., enable_gqa=True), one key/value head per
query head = the paper's attention; the cache holds num_kv_heads heads and still decodes what the
whole prefix gives; and its experiment: the committed results file against the code, and a
re-run of its first updates."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch, numpy_state
from aiayn.data.specials import BOS_ID, EOS_ID
from aiayn.np.gqa import GroupedQueryAttention as NumpyGQA
from aiayn.pt.attention import MultiHeadAttention
from aiayn.pt.decoding import greedy_decode
from aiayn.pt.gqa import GroupedQueryAttention
from aiayn.pt.incremental import IncrementalDecoder
from aiayn.pt.masks import padding_mask
from aiayn.pt.model import Transformer
from aiayn.pt.variant_cache import VariantIncrementalDecoder, incremental_decoder
from conftest import rand, record_difference

TOL = 1e-12
MASKS = {
    "none": None,
    "padding": np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)[:, None, None, :],
    "causal": np.tril(np.ones((5, 5), dtype=bool))[None, None],
    # The last query sees no key: zeros, not NaN, as in the paper's attention.
    "one_row_all_masked": np.array([[True, True, False, False, False]] * 4 + [[False] * 5])[None, None],
}


def twin(num_kv_heads, rotary=False, key_block=None, d_k=None, d_v=None):
    torch.manual_seed(0)
    pt = GroupedQueryAttention(16, 4, num_kv_heads, d_k, d_v, rotary, key_block).double()
    np_ = NumpyGQA(16, 4, num_kv_heads, d_k, d_v, rotary, key_block)
    np_.load_state_dict(numpy_state(pt.state_dict()))
    return np_, pt


@pytest.mark.parametrize("mask_name", MASKS)
@pytest.mark.parametrize("kv", [1, 2, 4])
@pytest.mark.parametrize("rotary, key_block", [(False, None), (True, None), (True, 2)], ids=["plain", "rotary", "rotary_blocks"])
def test_numpy_equals_torch_forward_and_backward(kv, mask_name, rotary, key_block):
    np_attn, pt_attn = twin(kv, rotary, key_block)
    x, mem, upstream = rand(2, 5, 16, seed=1), rand(2, 5, 16, seed=2), rand(2, 5, 16, seed=3)
    mask = MASKS[mask_name]
    xt, mt = torch.tensor(x, requires_grad=True), torch.tensor(mem, requires_grad=True)
    out, weights = pt_attn(xt, mt, mt, None if mask is None else torch.from_numpy(mask))
    (out * torch.from_numpy(upstream)).sum().backward()
    np_attn.train()
    np_out, np_weights = np_attn(x, mem, mem, mask)
    grad_query, grad_key, grad_value = np_attn.backward(upstream)
    grads = np_attn.gradients()
    diffs = [np.abs(np_out - out.detach().numpy()).max(), np.abs(grad_query - xt.grad.numpy()).max(),
             np.abs(grad_key + grad_value - mt.grad.numpy()).max(),
             *(np.abs(grads[k] - p.grad.numpy()).max() for k, p in pt_attn.named_parameters())]
    record_difference("gqa_numpy_vs_torch", max(diffs))
    assert max(diffs) < 1e-10
    assert (weights is None) == (np_weights is None) == (key_block is not None)
    assert not np.isnan(np_out).any()


@pytest.mark.parametrize("mask_name", ["none", "padding", "causal"])
@pytest.mark.parametrize("kv", [1, 2])
def test_torch_equals_scaled_dot_product_attention_with_enable_gqa(kv, mask_name):
    _, attn = twin(kv)
    x = torch.from_numpy(rand(2, 5, 16, seed=4))
    mask = None if MASKS[mask_name] is None else torch.from_numpy(MASKS[mask_name])
    q, k, v = attn.queries(x), attn.keys(x), attn.values(x)
    assert k.shape == (2, kv, 5, 4)  # num_kv_heads heads of d_k features
    reference = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
    ours, _ = attn.attend(q, k, v, mask)
    assert torch.allclose(ours, reference, rtol=0, atol=TOL)
    attn.fused = True  # the fused path is that reference
    assert torch.allclose(attn(x, x, x, mask)[0], attn.w_o(reference.transpose(1, 2).flatten(2)), rtol=0, atol=TOL)


def test_one_key_value_head_per_query_head_is_the_papers_attention():
    _, grouped = twin(4, d_k=3, d_v=5)
    paper = MultiHeadAttention(16, 4, 3, 5).double()
    paper.load_state_dict(grouped.state_dict())
    x, m = torch.from_numpy(rand(2, 5, 16, seed=5)), torch.from_numpy(MASKS["padding"])
    (a, wa), (b, wb) = grouped(x, x, x, m), paper(x, x, x, m)
    assert torch.allclose(a, b, rtol=0, atol=TOL) and torch.allclose(wa, wb, rtol=0, atol=TOL)


def test_bad_head_counts_are_refused():
    for impl in (GroupedQueryAttention, NumpyGQA):
        with pytest.raises(ValueError, match="must divide num_heads=4"):
            impl(16, 4, 3)
        with pytest.raises(ValueError, match="must be even"):
            impl(16, 4, 2, 3, None, True)


def model(num_kv_heads, **extra):
    torch.manual_seed(1)
    c = TransformerConfig(13, 13, d_model=16, num_heads=4, num_layers=2, d_ff=24, dropout=0.0, max_len=40,
                          num_kv_heads=num_kv_heads, **extra)
    return Transformer(c).double().eval()


def cache_bytes_per_token(decoder, steps):
    return sum(c["self_k"].nbytes + c["self_v"].nbytes for c in decoder.cache) / steps


@pytest.mark.parametrize("kv", [1, 2])
def test_the_cache_holds_fewer_heads_and_decodes_what_the_whole_prefix_gives(kv):
    grouped, paper = model(kv), model(None)
    src = torch.tensor([[5, 6, 7, 8, 0], [9, 10, 11, 12, 4]])
    mask = padding_mask(src, 0)
    with torch.no_grad():
        memory = grouped.encode(src, mask)
        cached = incremental_decoder(grouped, memory, mask)
        assert type(cached) is VariantIncrementalDecoder
        paper_cache = incremental_decoder(paper, paper.encode(src, mask), mask)
        assert type(paper_cache) is IncrementalDecoder
        ys, worst = torch.full((2, 1), BOS_ID), 0.0
        for _ in range(6):
            step = cached(ys[:, -1:])
            paper_cache(ys[:, -1:])
            worst = max(worst, float((step - grouped.decode(ys, memory, mask)[:, -1:]).abs().max()))
            ys = torch.cat([ys, grouped.out_proj(step[:, -1]).argmax(-1, keepdim=True)], dim=1)
        # Beam search re-ranks rows: the cache follows, as the paper's does.
        cached.reorder(torch.tensor([1, 1]))
        assert torch.equal(cached.cache[0]["self_k"][0], cached.cache[0]["self_k"][1])
    record_difference("gqa_cached_vs_uncached", worst)
    assert worst < 1e-10
    assert cache_bytes_per_token(cached, 6) * 4 == cache_bytes_per_token(paper_cache, 6) * kv
    cross = sum(c["cross_k"].nbytes + c["cross_v"].nbytes for c in cached.cache)
    assert cross * 4 == sum(c["cross_k"].nbytes + c["cross_v"].nbytes for c in paper_cache.cache) * kv
    assert greedy_decode(grouped, src, 6, BOS_ID, EOS_ID).shape[0] == 2


@pytest.mark.parametrize("extra", [{}, {"positional": "rotary"}], ids=["gqa", "gqa_rotary"])
def test_the_decoding_functions_use_the_variant_cache(extra):
    """greedy_decode, beam_search and the NumPy greedy_decode give a grouped-query or rotary decoder
    variant_cache's cache by default, with the ids the whole prefix gives (use_cache=False)."""
    from aiayn.inference.beam_search import beam_search
    from aiayn.np.decoding import greedy_decode as numpy_greedy_decode
    from aiayn.np.variant_cache import has_cache as numpy_has_cache
    from aiayn.pt.variant_cache import has_cache

    grouped = model(2, **extra)
    twin = numpy_model_from_torch(grouped)
    assert has_cache(grouped) and numpy_has_cache(twin)
    assert has_cache(model(4)) and not has_cache(object())
    src = torch.tensor([[5, 6, 7, 8, 0], [9, 10, 11, 12, 4]])
    assert torch.equal(greedy_decode(grouped, src, 8, BOS_ID, EOS_ID),
                       greedy_decode(grouped, src, 8, BOS_ID, EOS_ID, use_cache=False))
    assert np.array_equal(numpy_greedy_decode(twin, src.numpy(), 8, BOS_ID, EOS_ID),
                          numpy_greedy_decode(twin, src.numpy(), 8, BOS_ID, EOS_ID, use_cache=False))
    assert (beam_search(grouped, src, 3, 0.6, 6, BOS_ID, EOS_ID)
            == beam_search(grouped, src, 3, 0.6, 6, BOS_ID, EOS_ID, use_cache=False))


def test_numpy_cache_equals_torch_cache():
    from aiayn.np.variant_cache import VariantIncrementalDecoder as NumpyDecoder
    grouped = model(2, positional="rotary")
    twin_model = numpy_model_from_torch(grouped)
    src = torch.tensor([[5, 6, 7, 8, 9]])
    with torch.no_grad():
        memory = grouped.encode(src)
        a, b = VariantIncrementalDecoder(grouped, memory), NumpyDecoder(twin_model, memory.numpy())
        for token in (BOS_ID, 5, 6, 7):
            ids = torch.tensor([[token]])
            assert np.abs(a(ids).numpy() - b(ids.numpy())).max() < 1e-10
    with pytest.raises(ValueError, match="GroupedQueryAttention"):
        VariantIncrementalDecoder(model(None), memory)
