"""Greedy decoding that stops only at max_len and keeps writing tokens after a row's EOS.

exercise: from_scratch/greedy_decode
caught by: stops when every row has produced EOS; pads a row after its EOS
message mentions: eos_id; pad_id
breaks: greedy_decode: stops
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
    for _ in range(max_len):  # the mistake: no `done`, no early stop
        logits = model.out_proj(model.decode(ys, memory, src_mask)[:, -1])
        ys = torch.cat([ys, logits.argmax(dim=-1)[:, None]], dim=1)
    return ys
