"""aiayn.train.schedule: lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (§5.3)."""

import pytest
import torch

from aiayn.train.schedule import transformer_lr, transformer_schedule

# Worked out by hand for the paper's d_model = 512, warmup_steps = 4000:
# 512^-0.5 = 0.0441942, 4000^-0.5 = 0.0158114, 4000^-1.5 = 3.95285e-6.
PAPER = [
    (1, 1.746928e-7),        # 0.0441942 * 1 * 3.95285e-6
    (400, 6.987712e-5),      # a tenth of the way up the linear ramp
    (4000, 6.987712e-4),     # the peak: 0.0441942 * 0.0158114
    (16000, 3.493856e-4),    # 4x the steps, half the rate
    (100000, 1.397542e-4),   # where the base model stopped
]


@pytest.mark.parametrize("step, expected", PAPER)
def test_values_computed_by_hand(step, expected):
    assert transformer_lr(step, 512, 4000) == pytest.approx(expected, rel=1e-6)


def test_factor_scales_the_whole_curve():
    # 2 * 256^-0.5 * min(100^-0.5, 100 * 400^-1.5) = 2 * 0.0625 * 0.0125
    assert transformer_lr(100, 256, 400, factor=2.0) == pytest.approx(0.0015625, rel=1e-12)


@pytest.mark.parametrize("warmup", [1, 10, 4000])
def test_peak_is_at_warmup(warmup):
    steps = range(1, 3 * warmup + 10)
    rates = [transformer_lr(s, 512, warmup) for s in steps]
    assert steps[rates.index(max(rates))] == warmup
    assert max(rates) == pytest.approx((512 * warmup) ** -0.5, rel=1e-12)


def test_lambda_lr_gives_update_k_the_rate_of_step_k():
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.Adam([param], lr=1.0)
    scheduler = transformer_schedule(optimizer, d_model=512, warmup_steps=4000)
    for k in range(1, 6):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(transformer_lr(k, 512, 4000), rel=1e-12)
        optimizer.step()
        scheduler.step()


def test_errors():
    with pytest.raises(ValueError, match="step counts from 1"):
        transformer_lr(0, 512, 4000)
    with pytest.raises(ValueError, match="warmup_steps must be positive"):
        transformer_lr(1, 512, 0)
    param = torch.nn.Parameter(torch.zeros(1))
    with pytest.raises(ValueError, match="lr=1.0"):
        transformer_schedule(torch.optim.Adam([param], lr=1e-3), 512, 4000)
