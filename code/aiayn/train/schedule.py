"""The learning-rate schedule of §5.3, as a pure function and as a PyTorch scheduler.

    lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)

Linear warm-up for ``warmup_steps`` updates, then decay proportional to the inverse square
root of the step number. The two branches meet at ``step_num == warmup_steps``, where the
rate peaks at ``(d_model * warmup_steps)^-0.5``.
"""

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR


def transformer_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """The rate of update number ``step`` (counted from 1, as the paper's step_num)."""
    if step < 1:
        raise ValueError(f"step counts from 1 (the first update), got {step}")
    if warmup_steps < 1:
        raise ValueError(f"warmup_steps must be positive, got {warmup_steps}")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def transformer_schedule(optimizer: Optimizer, d_model: int, warmup_steps: int,
                         factor: float = 1.0) -> LambdaLR:
    """A ``LambdaLR`` that sets the rate of every parameter group to ``transformer_lr``.

    ``LambdaLR`` multiplies each group's initial ``lr`` by the lambda, so build the optimizer
    with ``lr=1.0``. It calls the lambda with the number of ``scheduler.step()`` calls made so
    far (0 before the first update), hence the ``+ 1``: update k uses step_num = k."""
    for group in optimizer.param_groups:
        if group["lr"] != 1.0:
            raise ValueError(f"build the optimizer with lr=1.0 (the schedule gives the whole rate), "
                             f"got lr={group['lr']}")
    transformer_lr(1, d_model, warmup_steps, factor)  # validates the arguments now, not mid-run
    return LambdaLR(optimizer, lambda done: transformer_lr(done + 1, d_model, warmup_steps, factor))
