"""Greedy decoding that calls model(src, ys) at every step: the encoder runs max_len times.

exercise: from_scratch/greedy_decode
caught by: runs the encoder once, not once per step
message mentions: model.encode; before the loop
breaks: greedy_decode: encode-once
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
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_len):
        logits = model(src, ys)[:, -1]  # the mistake: forward re-encodes the source
        next_token = logits.argmax(dim=-1).masked_fill(done, model.pad_id)
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
