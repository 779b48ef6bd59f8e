"""Greedy decoding, NumPy: one forward pass of the decoder per generated token."""

import numpy as np

from .._checks import check_decode_args
from .masks import padding_mask


def greedy_decode(model, src: np.ndarray, max_len: int, bos_id: int, eos_id: int) -> np.ndarray:
    """Picks the most probable next token until every sentence has produced ``eos_id``
    or ``max_len`` tokens. Returns ids (B, 1 + steps) starting with ``bos_id``; positions
    after a sentence's EOS hold ``pad_id``. The encoder runs once; the decoder re-reads the
    whole prefix at every step (no key-value cache: simple, O(T^2) per sentence)."""
    check_decode_args(model, src, max_len, bos_id, eos_id)
    pad_id = model.config.pad_id
    src_mask = padding_mask(src, pad_id)
    memory = model.encode(src, src_mask)
    ys = np.full((src.shape[0], 1), bos_id, dtype=np.int64)
    done = np.zeros(src.shape[0], dtype=bool)
    for _ in range(max_len):
        logits = model.out_proj(model.decode(ys, memory, src_mask)[:, -1])
        next_token = np.where(done, pad_id, logits.argmax(axis=-1))
        ys = np.concatenate([ys, next_token[:, None]], axis=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
