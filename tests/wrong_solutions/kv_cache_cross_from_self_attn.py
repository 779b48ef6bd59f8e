"""Projects the encoder output with the decoder self-attention's w_k and w_v instead of the
cross-attention's.

exercise: fast_decoding/kv_cache
caught by: start_cache: per layer, the encoder output's keys and values; empty self-attention ones
message mentions: layer.cross_attn
breaks: start_cache: cross
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def start_cache(model, memory):
    cache = []
    for layer in model.decoder.layers:
        a = layer.self_attn  # the mistake: the self-attention's projections for both
        cache.append({"self_k": split_heads(a.w_k(memory[:, :0]), a.num_heads),  # noqa: F821
                      "self_v": split_heads(a.w_v(memory[:, :0]), a.num_heads),  # noqa: F821
                      "cross_k": split_heads(a.w_k(memory), a.num_heads),  # noqa: F821
                      "cross_v": split_heads(a.w_v(memory), a.num_heads)})  # noqa: F821
    return cache
