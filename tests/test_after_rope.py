"""Rotary position embeddings (Su et al., 2021): the rotation against the complex-number formula,
NumPy = PyTorch, the relative-position property (scores depend on m - n only), the positional
chapter's rotation of the sinusoid table; a rotary model decodes with its own cache; and its
experiment: the committed results file against the code, and a re-run of its first updates."""

import numpy as np
import pytest
import torch

from aiayn.config import TransformerConfig
from aiayn.convert import numpy_model_from_torch
from aiayn.data.specials import BOS_ID, EOS_ID
from aiayn.np import rotary as np_rotary
from aiayn.np.embeddings import sinusoidal_table
from aiayn.np.variant_cache import VariantIncrementalDecoder as NumpyVariantDecoder
from aiayn.pt import rotary as pt_rotary
from aiayn.pt.decoding import greedy_decode
from aiayn.pt.incremental import IncrementalDecoder, can_cache
from aiayn.pt.masks import padding_mask
from aiayn.pt.model import Transformer
from aiayn.pt.variant_cache import VariantIncrementalDecoder
from conftest import rand, record_difference

TOL = 1e-12


@pytest.mark.parametrize("start", [0, 5, 1000])
def test_rotation_is_the_complex_formula(start):
    """Pair (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1, times e^{i (start + t) theta_i}."""
    x = rand(2, 3, 7, 8, seed=1)
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * (start + np.arange(7))[:, None] * theta)
    expected = np.stack([z.real, z.imag], axis=-1).reshape(x.shape)
    ours_np = np_rotary.rotate(x, start)
    ours_pt = pt_rotary.rotate(torch.from_numpy(x), start).numpy()
    record_difference("rope_vs_complex", max(np.abs(ours_np - expected).max(), np.abs(ours_pt - expected).max()))
    assert np.abs(ours_np - expected).max() < 1e-12 * max(1, start) and np.abs(ours_pt - ours_np).max() < TOL


def test_rotation_keeps_lengths_and_its_inverse_turns_back():
    x = rand(1, 2, 9, 6, seed=2)
    for rotate, array in ((np_rotary.rotate, np.asarray), (pt_rotary.rotate, torch.from_numpy)):
        y = np.asarray(rotate(array(x), 3))
        np.testing.assert_allclose(np.linalg.norm(y, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-13)
        np.testing.assert_allclose(np.asarray(rotate(array(y), 3, inverse=True)), x, rtol=0, atol=TOL)


def test_scores_depend_on_the_offset_only():
    """q at position m, k at position n: q_m . k_n is the same for (m, n) and (m + s, n + s)."""
    q, k = rand(1, 1, 1, 16, seed=3), rand(1, 1, 1, 16, seed=4)

    def score(m, n):
        return float((np_rotary.rotate(q, m) * np_rotary.rotate(k, n)).sum())

    for m, n in ((3, 0), (0, 3), (10, 10), (7, 2)):
        for shift in (1, 17, 500):
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), abs=1e-10)
    assert abs(score(3, 0) - score(0, 3)) > 1e-3  # the direction of the offset matters


def test_it_is_the_positional_chapters_rotation_of_the_sinusoids():
    """The positional chapter: PE(p + k) is PE(p) with each (sin, cos) pair turned by k omega_i.
    In RoPE's convention (pair = (x_2i, x_2i+1) = (sin, cos)) that is the inverse rotation."""
    table = sinusoidal_table(64, 16)
    for p, k in ((0, 5), (20, 7), (3, 40)):
        turned = np_rotary.rotate(table[None, None, p:p + 1], start=k, inverse=True)[0, 0, 0]
        np.testing.assert_allclose(turned, table[p + k], rtol=0, atol=1e-12)


def test_angles_and_bad_input():
    np.testing.assert_allclose(pt_rotary.rotary_angles(2, 3, 8).numpy(), np_rotary.rotary_angles(2, 3, 8), rtol=0, atol=0)
    for impl in (np_rotary, pt_rotary):
        with pytest.raises(ValueError, match="must be even"):
            impl.rotary_angles(0, 3, 5)
        with pytest.raises(ValueError, match="start must be a position"):
            impl.rotary_angles(-1, 3, 4)


def rotary_model(**extra):
    torch.manual_seed(0)
    c = TransformerConfig(13, 13, d_model=16, num_heads=4, num_layers=2, d_ff=24, dropout=0.0, max_len=40,
                          positional="rotary", **extra)
    return Transformer(c).double().eval()


def test_a_rotary_model_has_no_table_and_reads_positions_through_attention():
    model = rotary_model()
    with pytest.raises(ValueError, match="no positional table"):
        model.pos.table
    src = torch.tensor([[5, 6, 7, 8, 9]])
    x = model.src_embed(src)
    assert torch.equal(model.pos(x), x)  # nothing added
    # Yet order matters: the encoder's output for a token depends on where the others stand.
    memory = model.encode(src)
    swapped = model.encode(torch.tensor([[5, 8, 7, 6, 9]]))
    assert (memory[0, 0] - swapped[0, 0]).abs().max() > 1e-3


@pytest.mark.parametrize("extra", [dict(), dict(num_kv_heads=2, norm_first=True)], ids=["mha", "gqa_pre_ln"])
def test_cached_decoding_equals_the_whole_prefix(extra):
    model = rotary_model(**extra)
    numpy_model = numpy_model_from_torch(model)
    src = torch.tensor([[5, 6, 7, 8, 0], [9, 10, 11, 12, 4]])
    mask = padding_mask(src, 0)
    assert not can_cache(model)  # the paper's cache would add a table that is not there
    with torch.no_grad():
        memory = model.encode(src, mask)
        with pytest.raises(ValueError):
            IncrementalDecoder(model, memory, mask)(torch.full((2, 1), BOS_ID))
        cached = VariantIncrementalDecoder(model, memory, mask)
        numpy_cached = NumpyVariantDecoder(numpy_model, memory.numpy(), mask.numpy())
        ys, worst = torch.full((2, 1), BOS_ID), 0.0
        for _ in range(8):
            step = cached(ys[:, -1:])
            whole = model.decode(ys, memory, mask)[:, -1:]
            worst = max(worst, float((step - whole).abs().max()),
                        float(np.abs(numpy_cached(ys[:, -1:].numpy()) - whole.numpy()).max()))
            ys = torch.cat([ys, model.out_proj(step[:, -1]).argmax(-1, keepdim=True)], dim=1)
    record_difference("rope_cached_vs_uncached", worst)
    assert worst < 1e-10
    assert greedy_decode(model, src, 8, BOS_ID, EOS_ID).shape[0] == 2  # without a cache, it decodes


# The experiment (aiayn.experiments.after_rope) ------------------------------------------------

def test_committed_results_match_the_code_and_their_verdicts_their_runs():
    import json

    from aiayn.experiments import after_rope as exp
    from aiayn.experiments.after_common import verdicts
    from aiayn.experiments.record import read_results

    record = read_results(exp.RESULTS)
    values = record["values"]
    assert record["command"] == "python -m aiayn.experiments.after_rope"
    assert record["threads"] == 1 and record["code_changes"] == []
    assert (values["beyond"], values["steps"], values["seeds"]) == (exp.BEYOND, exp.STEPS, list(exp.SEEDS))
    runs = values["runs"]
    for arm in exp.ARMS:
        assert [r["seed"] for r in runs[arm]] == list(exp.SEEDS) and all(r["positional"] == arm for r in runs[arm])
        for r in runs[arm]:
            assert set(r["exact_by_length"]) == {str(n) for n in range(11, 21)}
            assert len(r["position_accuracy_beyond"]) == 21  # up to 20 symbols and </s>
    again = json.loads(json.dumps(verdicts({"rotary": (runs["rotary"], runs["sinusoidal"])}, exp.METRICS)["rotary"]))
    assert again == values["verdicts"]


def test_the_first_updates_reproduce_the_committed_run():
    from aiayn.experiments import after_rope as exp
    from aiayn.experiments.record import read_results

    committed = read_results(exp.RESULTS)["values"]["runs"]["rotary"][0]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fresh = exp.run_one("rotary", 0, steps=25, score=False)
    finally:
        torch.set_num_threads(threads)
    assert fresh["loss_curve"][0][0] == committed["loss_curve"][0][0] == 25
    assert fresh["loss_curve"][0][1] == pytest.approx(committed["loss_curve"][0][1], rel=1e-4)
