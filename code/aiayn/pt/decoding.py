"""Greedy decoding, PyTorch: one new token per step, with a key-value cache by default."""

import torch

from .._checks import check_decode_args
from .variant_cache import has_cache, incremental_decoder
from .masks import padding_mask


@torch.no_grad()
def greedy_decode(model, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int,
                  use_cache: bool | None = None) -> torch.Tensor:
    """Picks the most probable next token until every sentence has produced ``eos_id``
    or ``max_len`` tokens. Returns ids (B, 1 + steps) starting with ``bos_id``; positions
    after a sentence's EOS hold ``pad_id``. The encoder runs once.

    ``use_cache=True``: each step runs the decoder on the newest token only, reading the keys and
    values of the earlier ones from a cache (``aiayn.pt.incremental``): O(T) positions per
    sentence. ``False``: the decoder re-reads the whole prefix at every step (O(T^2)), the
    reference that the cache is tested against. ``None``: the cache whenever the model has the
    parts it reuses (``has_cache``: the paper's cache, or ``variant_cache``'s for grouped-query and
    rotary decoders). Both give the same ids (logits equal to rounding error).
    Runs in eval mode (dropout off) and restores the model's mode afterwards."""
    check_decode_args(model, src, max_len, bos_id, eos_id)
    use_cache = has_cache(model) if use_cache is None else use_cache
    was_training = model.training
    model.eval()
    try:
        pad_id = model.config.pad_id
        src_mask = padding_mask(src, pad_id)
        memory = model.encode(src, src_mask)
        decoder = incremental_decoder(model, memory, src_mask) if use_cache else None
        ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            hidden = decoder(ys[:, -1:]) if use_cache else model.decode(ys, memory, src_mask)
            logits = model.out_proj(hidden[:, -1])
            next_token = torch.where(done, pad_id, logits.argmax(dim=-1))
            ys = torch.cat([ys, next_token[:, None]], dim=1)
            done |= next_token == eos_id
            if done.all():
                break
        return ys
    finally:
        model.train(was_training)
