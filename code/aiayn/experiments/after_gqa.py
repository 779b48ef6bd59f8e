"""Grouped-query and multi-query attention against the paper's multi-head attention on Multi30k:
the key-value cache's bytes per token against BLEU ("After the paper": Shazeer, 2019; Ainslie et
al., 2023).

    python -m aiayn.experiments.after_gqa                    # results/after_the_paper/gqa.json

multi30k-cpu has 4 heads. The arms keep the 4 query heads and share 2 key/value heads between
them (grouped-query, ``num_kv_heads=2``) or 1 (multi-query, ``num_kv_heads=1``); the base
(``after_base``) has 4. Each decodes the validation set greedily with its key-value cache
(``aiayn.pt.variant_cache``), which counts its bytes per target token and layer (self-attention)
and per source token and layer (encoder-decoder attention), the fast-decoding chapter's
accounting. Seed k of every arm shares the base's batches (the initial weights differ: the
shapes do). Verdicts: each arm against the base on validation loss and BLEU, Holm over the four.
"""

import sys

from .after_common import multi30k_experiment
from .record import REPOSITORY

PROG = "python -m aiayn.experiments.after_gqa"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "gqa.json"
ARMS = {"gqa_2": {"num_kv_heads": 2}, "mqa_1": {"num_kv_heads": 1}}


def main(argv=None) -> int:
    return multi30k_experiment(PROG, RESULTS, ARMS, argv)


if __name__ == "__main__":
    sys.exit(main())
