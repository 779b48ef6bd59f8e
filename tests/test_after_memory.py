"""Attention over blocks of keys (an online softmax): the paper's outputs for every block size and
mask, NumPy = PyTorch, PyTorch = F.scaled_dot_product_attention, autograd's gradients equal the
paper's function's, and far less memory; and its experiment: the committed results file against
the code, and a re-run of its smallest lengths."""

import tracemalloc

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.np.attention import scaled_dot_product_attention as np_attention
from aiayn.np.chunked import chunked_attention as np_chunked
from aiayn.pt.attention import scaled_dot_product_attention as pt_attention
from aiayn.pt.chunked import chunked_attention as pt_chunked
from aiayn.pt.model import Transformer
from conftest import rand, record_difference

TOL = 1e-12
T = 7
MASKS = {
    "none": None,
    "padding": np.array([[1] * 5 + [0] * 2, [1] * 7], dtype=bool)[:, None, None, :],
    "causal": np.tril(np.ones((T, T), dtype=bool))[None, None],
    # A query that sees no key at all, and one whose only visible key is in the last block.
    "empty_and_late_rows": np.array([[0] * 7, [0] * 6 + [1]] + [[1] * 7] * 5, dtype=bool)[None, None],
}


@pytest.mark.parametrize("mask_name", MASKS)
@pytest.mark.parametrize("block", [1, 2, 3, 7, 64])
def test_the_papers_outputs_for_every_block_and_mask(block, mask_name):
    q, k, v = rand(2, 3, T, 4, seed=1) * 3, rand(2, 3, T, 4, seed=2) * 3, rand(2, 3, T, 5, seed=3)
    mask = MASKS[mask_name]
    expected, _ = np_attention(q, k, v, mask)
    ours = np_chunked(q, k, v, mask, block)
    torch_ours = pt_chunked(*map(torch.from_numpy, (q, k, v)), None if mask is None else torch.from_numpy(mask), block)
    diff = max(np.abs(ours - expected).max(), np.abs(torch_ours.numpy() - ours).max())
    record_difference("chunked_vs_paper", diff)
    assert diff < TOL and not np.isnan(ours).any()


@pytest.mark.parametrize("mask_name", ["none", "padding", "causal"])
def test_torch_equals_the_fused_kernel_and_its_gradients_equal_the_papers(mask_name):
    q, k, v = (torch.tensor(rand(2, 3, T, 4, seed=s), requires_grad=True) for s in (4, 5, 6))
    mask = None if MASKS[mask_name] is None else torch.from_numpy(MASKS[mask_name])
    ours = pt_chunked(q, k, v, mask, 3)
    assert torch.allclose(ours, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), rtol=0, atol=TOL)
    upstream = torch.from_numpy(rand(2, 3, T, 4, seed=7))
    grads = torch.autograd.grad((ours * upstream).sum(), (q, k, v))
    expected = torch.autograd.grad((pt_attention(q, k, v, mask)[0] * upstream).sum(), (q, k, v))
    assert all(torch.allclose(a, b, rtol=0, atol=1e-10) for a, b in zip(grads, expected))


def test_a_model_with_key_blocks_equals_the_papers_model():
    torch.manual_seed(0)
    c = TransformerConfig(13, 13, d_model=16, num_heads=4, num_layers=2, d_ff=24, dropout=0.0, max_len=40)
    paper = Transformer(c).double().eval()
    blocked = Transformer(TransformerConfig(**{**c.__dict__, "key_block": 2})).double().eval()
    blocked.load_state_dict(paper.state_dict())
    src, tgt = torch.tensor([[5, 6, 7, 8, 0]]), torch.tensor([[1, 5, 6, 7]])
    assert torch.allclose(blocked(src, tgt), paper(src, tgt), rtol=0, atol=TOL)
    assert np.abs(numpy_model_from_torch(blocked)(src.numpy(), tgt.numpy())
                  - paper(src, tgt).detach().numpy()).max() < 1e-10


def peak_bytes(fn, *args):
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_blocks_of_keys_hold_far_less_than_the_score_matrix():
    n = 512
    q, k, v = rand(1, 1, n, 16, seed=8), rand(1, 1, n, 16, seed=9), rand(1, 1, n, 16, seed=10)
    whole, blocked = peak_bytes(np_attention, q, k, v), peak_bytes(np_chunked, q, k, v, None, 64)
    assert whole > 3 * n * n * 8  # scores, their exponentials, the weights: n x n float64 each
    assert blocked < whole / 4


def test_bad_arguments_are_named():
    q = np.zeros((1, 1, 2, 4))
    with pytest.raises(ValueError, match="key_block must be a positive int"):
        np_chunked(q, q, q, None, 0)
    with pytest.raises(ValueError, match="mask must be boolean"):
        pt_chunked(*(torch.zeros(1, 1, 2, 4),) * 3, torch.ones(1, 1, 2, 2), 2)


# The experiment (aiayn.experiments.after_memory) ----------------------------------------------

def test_committed_results_match_the_code_and_say_what_the_page_needs():
    from aiayn.experiments import after_memory as exp
    from aiayn.experiments.record import read_results

    record = read_results(exp.RESULTS)
    values = record["values"]
    assert record["command"] == "python -m aiayn.experiments.after_memory" and record["code_changes"] == []
    assert [r["n"] for r in values["rows"]] == list(exp.LENGTHS) and values["block"] == exp.BLOCK
    for r in values["rows"]:
        assert max(r["max_difference_from_paper"].values()) < 1e-5  # the same outputs (float32: 1e-5)
        # The paper's function holds the n x n scores (and more); blocks hold n x block at most.
        assert r["numpy_float64"]["paper"] >= 2 * r["score_matrix_bytes"]["float64"]
        assert r["torch_float32"]["paper"] >= 2 * r["score_matrix_bytes"]["float32"]
    last = values["rows"][-1]
    assert last["numpy_float64"]["chunked"] < last["numpy_float64"]["paper"] / 10


def test_a_re_run_of_the_shortest_length_counts_the_same_bytes():
    from aiayn.experiments import after_memory as exp
    from aiayn.experiments.record import read_results

    committed = read_results(exp.RESULTS)["values"]["rows"][0]
    fresh = exp.measure(committed["n"])
    assert fresh["torch_float32"]["paper"] == committed["torch_float32"]["paper"]
    assert fresh["torch_float32"]["chunked"] == committed["torch_float32"]["chunked"]
    for kind in ("paper", "chunked"):  # tracemalloc also sees a few small Python objects
        assert fresh["numpy_float64"][kind] == pytest.approx(committed["numpy_float64"][kind], rel=0.05)
