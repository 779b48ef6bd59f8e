"""Forgets to multiply the embeddings by sqrt(d_model).

exercise: from_scratch/transformer
caught by: encode equals the course's: embeddings * √d_model + positions, padding masked
message mentions: √d_model
breaks: Transformer: encode
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class Transformer(Transformer):  # noqa: F821
    def embed(self, embedding, tokens):
        return self.dropout(embedding(tokens) + self.pe[: tokens.size(1)])  # the mistake
