"""SwiGLU against the paper's ReLU feed-forward network at equal parameters, on Multi30k ("After the
paper": Shazeer, 2020).

    python -m aiayn.experiments.after_swiglu                 # results/after_the_paper/swiglu.json

The arm: ``ffn="swiglu"`` with ``d_ff`` = 341, two thirds of multi30k-cpu's 512, so that its three
128 x 341 matrices hold as many weights as the ReLU network's two 128 x 512 ones (the ReLU
network's biases, 640 per layer, aside). Trained and scored as the base
(``after_base``: multi30k-cpu, 600 updates, the last model, greedy BLEU on validation), seed k
against the base's seed k (same batches; other initial weights, since the shapes differ).
"""

import sys

from ..pt.swiglu import equal_parameter_width
from ..train.configs import get_config
from .after_common import MULTI30K, multi30k_experiment
from .record import REPOSITORY

PROG = "python -m aiayn.experiments.after_swiglu"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "swiglu.json"
ARMS = {"swiglu": {"ffn": "swiglu", "d_ff": equal_parameter_width(get_config(MULTI30K).d_ff)}}


def main(argv=None) -> int:
    return multi30k_experiment(PROG, RESULTS, ARMS, argv)


if __name__ == "__main__":
    sys.exit(main())
