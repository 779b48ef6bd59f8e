"""Greedy decoding that never stops at EOS and never pads: every sentence runs max_len steps.

exercise: fast_decoding/kv_cache
caught by: greedy_decode returns aiayn.pt's greedy_decode ids (padded batch, early EOS)
message mentions: pad_id after a sentence's EOS
breaks: greedy_decode: ids
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    model.eval()
    src_mask = padding_mask(src, model.config.pad_id)  # noqa: F821
    cache = start_cache(model, model.encode(src, src_mask))  # noqa: F821
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long)
    for step in range(max_len):  # the mistake: no EOS test, no padding after it
        hidden = decode_step(model, ys[:, -1:], step, cache, src_mask)  # noqa: F821
        ys = torch.cat([ys, model.out_proj(hidden[:, -1]).argmax(dim=-1)[:, None]], dim=1)
    return ys
