"""aiayn.lab.copy_training: the loss levels of the copy-task chapter (by hand and against
PyTorch's cross-entropy), the gradient-norm recorder and the spike finder."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from aiayn.data.copy_task import FIRST_SYMBOL, CopyTask
from aiayn.data.specials import EOS_ID, PAD_ID
from aiayn.lab.copy_training import LEVELS, GradientNorms, loss_levels, spikes


def test_loss_levels_by_hand_without_smoothing():
    levels = loss_levels(symbols=97, min_len=5, max_len=5)
    assert list(levels) == list(LEVELS)
    assert levels["uniform"] == pytest.approx(math.log(97 + FIRST_SYMBOL))
    p = 1 / 6  # </s> is one token of six
    assert levels["frequencies"] == pytest.approx(-p * math.log(p) - 5 * p * math.log(5 * p / 97))
    assert levels["frequencies_and_end"] == pytest.approx(5 / 6 * math.log(97))
    assert levels["floor"] == 0.0 and math.copysign(1, levels["floor"]) == 1  # not -0.0
    # knowing more costs less
    assert levels["uniform"] > levels["frequencies"] > levels["frequencies_and_end"] > levels["floor"]
    # lengths 1 .. 10: E[n] = 5.5, so </s> is one target token in 6.5
    p = 1 / 6.5
    assert loss_levels(10, 1, 10)["frequencies_and_end"] == pytest.approx((1 - p) * math.log(10))


def test_label_smoothing_floor_is_the_entropy_of_the_smoothed_one_hot():
    eps, V = 0.1, 14
    q = np.full(V, eps / V)
    q[0] += 1 - eps
    levels = loss_levels(10, 1, 10, vocab_size=V, label_smoothing=eps)
    assert levels["floor"] == pytest.approx(float(-(q * np.log(q)).sum()))
    assert levels["uniform"] == pytest.approx(math.log(V))  # a uniform guess scores ln V, smoothed or not
    assert levels["uniform"] > levels["frequencies"] > levels["frequencies_and_end"] > levels["floor"]


def test_loss_levels_are_what_the_best_such_model_scores_under_torch_cross_entropy():
    """Each level against PyTorch: the model that knows that much predicts the smoothed target
    it knows, on 4,000 random sequences of the task, scored by F.cross_entropy as the chapter's
    loop scores it (mean over non-padding tokens, label smoothing over all V ids)."""
    eps, V, symbols = 0.1, 14, 10
    task = CopyTask(vocab_size=V, min_len=1, max_len=10)
    labels = task.batch(task.sample(4000, seed=0)).labels  # (B, T): y1 .. yn </s> <pad> ...
    levels = loss_levels(symbols, 1, 10, vocab_size=V, label_smoothing=eps)
    is_symbol = labels >= FIRST_SYMBOL
    p_end = 1 / 6.5

    def score(probs):  # probs (B, T, V): the model's distribution at every position
        return float(F.cross_entropy(probs.log().flatten(0, 1), labels.flatten(), ignore_index=PAD_ID,
                                     label_smoothing=eps))

    def smooth(f):
        return (1 - eps) * f + eps / V

    B, T = labels.shape
    uniform = torch.full((B, T, V), 1 / V, dtype=torch.float64)
    freq = torch.zeros(V, dtype=torch.float64)
    freq[EOS_ID], freq[FIRST_SYMBOL:] = p_end, (1 - p_end) / symbols
    frequencies = smooth(freq).expand(B, T, V)
    knows_end = torch.where(is_symbol[..., None], smooth(torch.eye(V, dtype=torch.float64)[FIRST_SYMBOL:].mean(0)),
                            smooth(torch.eye(V, dtype=torch.float64)[EOS_ID]))
    everything = smooth(F.one_hot(labels, V).double())
    assert score(uniform) == pytest.approx(levels["uniform"], abs=1e-9)
    assert score(everything) == pytest.approx(levels["floor"], abs=1e-9)
    # the other two depend on how many tokens end a sequence: sampling error about 0.005
    assert score(frequencies) == pytest.approx(levels["frequencies"], abs=0.01)
    assert score(knows_end) == pytest.approx(levels["frequencies_and_end"], abs=0.01)
    # and no other distribution of the same kind does better: the smoothed frequencies are optimal
    for other in (0.5 * p_end, 2 * p_end):
        worse = freq.clone()
        worse[EOS_ID], worse[FIRST_SYMBOL:] = other, (1 - other) / symbols
        assert score(smooth(worse).expand(B, T, V)) > score(frequencies)


@pytest.mark.parametrize("bad, match", [({"symbols": 0}, "symbols"), ({"min_len": 2.5}, "min_len"),
                                        ({"max_len": 0}, "max_len"), ({"min_len": 5, "max_len": 4}, "at least min_len"),
                                        ({"vocab_size": 10}, "vocab_size"), ({"label_smoothing": 1.0}, "label_smoothing")])
def test_loss_levels_reject_bad_arguments(bad, match):
    with pytest.raises(ValueError, match=match):
        loss_levels(**({"symbols": 10, "min_len": 1, "max_len": 10} | bad))


def test_gradient_norms_are_those_clip_grad_norm_sees_and_change_nothing():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    recorder = GradientNorms(optimizer)
    seen = []
    for _ in range(3):
        model(torch.randn(5, 4)).pow(2).sum().backward()
        seen.append(float(torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))))
        optimizer.step()
        optimizer.zero_grad()
    recorder.remove()
    assert recorder.norms == pytest.approx(seen, rel=1e-6)
    model(torch.randn(5, 4)).sum().backward()
    optimizer.step()  # removed: no longer recorded
    assert len(recorder.norms) == 3


def test_spikes_relative_to_the_median():
    norms = [5.0] * 10 + [1.0] * 20 + [12.0] + [1.0] * 9
    assert spikes(norms, start=11, factor=10) == [31]
    assert spikes(norms, start=11, factor=20) == []
    with pytest.raises(ValueError, match="start"):
        spikes(norms, start=0)
