"""A training batch: source ids and target ids, padded with PAD_ID."""

from dataclasses import dataclass

import torch

from .._checks import check_rank, check_same
from .specials import PAD_ID


@dataclass
class Batch:
    """src: (B, S) ids; tgt: (B, T) ids as ``<s> y_1 ... y_n </s> <pad>...``.

    The decoder reads ``tgt[:, :-1]`` and learns to predict ``tgt[:, 1:]`` (teacher forcing)."""

    src: torch.Tensor
    tgt: torch.Tensor

    def __post_init__(self):
        check_rank("src", self.src, 2, "(B, S) token ids")
        check_rank("tgt", self.tgt, 2, "(B, T) token ids")
        check_same("src", self.src, 0, "tgt", self.tgt, 0, "the batch size B")

    @property
    def decoder_input(self) -> torch.Tensor:
        return self.tgt[:, :-1]

    @property
    def labels(self) -> torch.Tensor:
        return self.tgt[:, 1:]

    @property
    def num_target_tokens(self) -> int:
        """Tokens the loss is computed on (padding excluded): the unit of the paper's batch size."""
        return int((self.labels != PAD_ID).sum())

    def to(self, device) -> "Batch":
        return Batch(self.src.to(device, non_blocking=True), self.tgt.to(device, non_blocking=True))
