"""Stage 8 takes the padding id from model.config, which the promised interface does not
have (the whiteboard model has pad_id, the course's model a config too).

exercise: from_scratch/greedy_decode
caught by: returns int64 ids (B, 1 + steps) starting with bos_id
message mentions: model.pad_id
breaks: greedy_decode: interface
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


_correct = greedy_decode  # noqa: F821 (defined by the exec above)


class _WithConfigPad:
    def __init__(self, model):
        self.model, self.pad_id = model, model.config.pad_id  # the mistake: model.config

    def __getattr__(self, name):
        return getattr(self.model, name)


def greedy_decode(model, src, max_len, bos_id, eos_id):
    return _correct(_WithConfigPad(model), src, max_len, bos_id, eos_id)
