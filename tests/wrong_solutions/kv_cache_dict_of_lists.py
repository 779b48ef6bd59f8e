"""A cache of one dict whose entries are lists over the layers, not a list of one dict per
layer.

exercise: fast_decoding/kv_cache
caught by: start_cache: per layer, the encoder output's keys and values; empty self-attention ones
message mentions: a list of 2 dicts
breaks: start_cache: layout
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def start_cache(model, memory):
    layers = model.decoder.layers  # the mistake: {name: [one per layer]}
    return {"self_k": [split_heads(l.self_attn.w_k(memory[:, :0]), l.self_attn.num_heads)  # noqa: F821
                       for l in layers],
            "self_v": [split_heads(l.self_attn.w_v(memory[:, :0]), l.self_attn.num_heads)  # noqa: F821
                       for l in layers],
            "cross_k": [split_heads(l.cross_attn.w_k(memory), l.cross_attn.num_heads)  # noqa: F821
                        for l in layers],
            "cross_v": [split_heads(l.cross_attn.w_v(memory), l.cross_attn.num_heads)  # noqa: F821
                        for l in layers]}
