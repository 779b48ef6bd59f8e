"""Starts the self-attention cache with one position of zeros instead of none: every token then
also attends to a key of zeros.

exercise: fast_decoding/kv_cache
caught by: start_cache: per layer, the encoder output's keys and values; empty self-attention ones
message mentions: empty before the first step
breaks: start_cache: empty-self
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))

_correct_start = start_cache  # noqa: F821 (defined by the exec above)


def start_cache(model, memory):
    cache = _correct_start(model, memory)
    for c in cache:  # the mistake: (B, H, 1, d) of zeros, not (B, H, 0, d)
        B, H, _, d_k = c["cross_k"].shape
        c["self_k"] = memory.new_zeros(B, H, 1, d_k)
        c["self_v"] = memory.new_zeros(B, H, 1, c["cross_v"].shape[-1])
    return cache
