"""Greedy decoding, PyTorch: one forward pass of the decoder per generated token."""

import torch

from .._checks import check_decode_args
from .masks import padding_mask


@torch.no_grad()
def greedy_decode(model, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int) -> torch.Tensor:
    """Picks the most probable next token until every sentence has produced ``eos_id``
    or ``max_len`` tokens. Returns ids (B, 1 + steps) starting with ``bos_id``; positions
    after a sentence's EOS hold ``pad_id``. The encoder runs once; the decoder re-reads the
    whole prefix at every step (no key-value cache: simple, O(T^2) per sentence).
    Runs in eval mode (dropout off) and restores the model's mode afterwards."""
    check_decode_args(model, src, max_len, bos_id, eos_id)
    was_training = model.training
    model.eval()
    try:
        pad_id = model.config.pad_id
        src_mask = padding_mask(src, pad_id)
        memory = model.encode(src, src_mask)
        ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            logits = model.out_proj(model.decode(ys, memory, src_mask)[:, -1])
            next_token = torch.where(done, pad_id, logits.argmax(dim=-1))
            ys = torch.cat([ys, next_token[:, None]], dim=1)
            done |= next_token == eos_id
            if done.all():
                break
        return ys
    finally:
        model.train(was_training)
