"""aiayn.lab.copy_training: the loss levels of the copy-task chapter, the gradient-norm recorder
and the spike finder, against hand-worked cases."""

import math

import pytest
import torch

from aiayn.lab.copy_training import GradientNorms, loss_levels, spikes


def test_loss_levels_by_hand():
    levels = loss_levels(symbols=97, length=5)
    assert levels["uniform"] == pytest.approx(math.log(97))
    p = 1 / 6  # </s> is one token of six
    assert levels["frequencies"] == pytest.approx(-p * math.log(p) - 5 * p * math.log(5 * p / 97))
    assert levels["frequencies_and_end"] == pytest.approx(5 / 6 * math.log(97))
    # knowing more costs less: uniform > frequencies > frequencies and the end
    assert levels["uniform"] > levels["frequencies"] > levels["frequencies_and_end"]
    # a frequency-only model's loss is the entropy of the token distribution: check by sampling
    probs = torch.tensor([p] + [5 * p / 97] * 97)
    assert levels["frequencies"] == pytest.approx(float(-(probs * probs.log()).sum()))
    for bad in ({"symbols": 0, "length": 5}, {"symbols": 97, "length": 2.5}):
        with pytest.raises(ValueError, match="positive int"):
            loss_levels(**bad)


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


def test_the_first_run_sits_on_the_frequency_plateau():
    from aiayn.data.copy_task import CopyTask
    from aiayn.lab.copy_training import first_run

    torch.set_num_threads(1)
    task = CopyTask(vocab_size=101, min_len=5, max_len=5)
    held = task.held_out(20, seed=1)
    model, history = first_run(task, held, steps=50, lr=3e-4)
    assert [h["step"] for h in history] == list(range(5, 51, 5))
    assert abs(history[-1]["loss"] - loss_levels(97, 5)["frequencies"]) < 0.1
    with pytest.raises(ValueError, match="either lr or warmup"):
        first_run(task, held, steps=1)
    with pytest.raises(ValueError, match="either lr or warmup"):
        first_run(task, held, steps=1, lr=1e-3, warmup=5)
