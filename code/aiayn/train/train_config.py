"""TrainConfig: everything about a training run that is not the model or the data.

Plain values only (no objects but the optional progress file), so that a checkpoint can store
it as a dict and ``torch.load(weights_only=True)`` can read it back.
"""

from dataclasses import dataclass, field, fields
from typing import TextIO


@dataclass
class TrainConfig:
    """How to train. lr = lr_factor * d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5).

    clip_grad_norm: None (the paper mentions no clipping) or the max global gradient norm.
    eval_every: validation loss every so many steps (and at the end) when val batches are given.
    checkpoint_every: write ``checkpoint_dir/step_XXXXXXX.pt`` every so many steps (and at the
        end); only the newest ``keep_last`` are kept. bf16 / fused_attention: None = on CUDA.
    compile: run the training forward and backward through ``torch.compile``, which fuses the
        step's thousands of small kernels, what limits a small model's step on a GPU. Off by
        default: on an H100 it cut multi30k-small's step from ~43 to ~25 ms, but compiling took minutes,
        and whether it pays for itself over a whole run is still to be measured
        (benchmarks/bench_compile.py).
    progress_file: where the tqdm bar goes (None: sys.stderr; notebooks pass sys.stdout)."""

    max_steps: int
    warmup_steps: int = 4000
    lr_factor: float = 1.0
    label_smoothing: float = 0.1
    clip_grad_norm: float | None = None
    log_every: int = 100
    eval_every: int | None = None
    device: str = "cpu"
    seed: int = 0
    progress: bool = True
    checkpoint_dir: str | None = None
    checkpoint_every: int | None = None
    keep_last: int = 5
    adam_betas: tuple[float, float] = (0.9, 0.98)
    adam_eps: float = 1e-9
    bf16: bool | None = None
    fused_attention: bool | None = None
    compile: bool = False
    progress_file: TextIO | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        for name in ("max_steps", "warmup_steps", "log_every", "keep_last"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive int, got {getattr(self, name)!r}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")
        if self.checkpoint_dir is not None:
            self.checkpoint_dir = str(self.checkpoint_dir)

    def to_dict(self) -> dict:
        """Plain values only (no file object): what a checkpoint stores."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "progress_file"}
