"""Greedy decoding that takes the logits of the FIRST position at every step.

exercise: from_scratch/greedy_decode
caught by: appends the most probable token after the LAST position, and feeds it back
message mentions: FIRST position; [:, -1]
breaks: greedy_decode: last-position
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    model.eval()
    src_mask = padding_mask(src, model.pad_id)  # noqa: F821
    memory = model.encode(src, src_mask)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_len):
        logits = model.out_proj(model.decode(ys, memory, src_mask)[:, 0])  # the mistake
        next_token = logits.argmax(dim=-1).masked_fill(done, model.pad_id)
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
