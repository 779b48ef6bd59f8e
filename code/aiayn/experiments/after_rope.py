"""Rotary position embeddings against the paper's sinusoids: copying sequences longer than any
seen in training ("After the paper": Su et al., 2021).

    python -m aiayn.experiments.after_rope                   # results/after_the_paper/rope.json
    python -m aiayn.experiments.after_rope --steps 25 --seeds 0 --out /tmp/rope.json

§3.5 hoped the sinusoids "may allow the model to extrapolate to sequence lengths longer than the
ones encountered during training". Each run trains the copy-task model of ``after_common`` on
sequences of 1-10 symbols with ``positional="sinusoidal"`` (the paper) or ``"rotary"``; seed k
of both shares the initial weights and the batches. It is scored on the 500 held-out sequences
of 1-10 symbols ("within") and on 500 sequences of 11-20 symbols ("beyond", lengths never
trained on): exact match of greedy decoding, the validation loss, exact match per length and the
share of target positions predicted right under teacher forcing, position by position.
Verdicts: rotary against sinusoidal, paired by seed, Holm over the four scores.
"""

import sys

import torch

from ..config import TransformerConfig
from ..data.copy_task import CopyTask, greedy_outputs
from ..data.specials import PAD_ID
from .after_common import COPY_BATCH, COPY_MODEL, COPY_RECIPE, COPY_TASK, copy_arguments, copy_loss, copy_run, verdicts
from .record import REPOSITORY, Recorder

PROG = "python -m aiayn.experiments.after_rope"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "rope.json"
BEYOND = {"vocab_size": COPY_TASK["vocab_size"], "min_len": 11, "max_len": 20}
BEYOND_SAMPLE = {"num": 500, "seed": 2}
ARMS = ("sinusoidal", "rotary")
STEPS = 600
SEEDS = (0, 1, 2, 3, 4)
METRICS = {"exact_within": False, "val_loss_within": True, "exact_beyond": False, "val_loss_beyond": True}


@torch.no_grad()
def position_accuracy(model, task: CopyTask, sequences) -> list[float]:
    """Share of target tokens predicted right under teacher forcing, per target position
    (position i: the i-th output token, the last one being </s>), over ``sequences``."""
    batch = task.batch(sequences)
    model.eval()
    predicted = model(batch.src, batch.decoder_input).argmax(dim=-1)
    real = batch.labels != PAD_ID
    right = ((predicted == batch.labels) & real).sum(dim=0).double()
    return (right / real.sum(dim=0).clamp(min=1)).tolist()


def run_one(positional: str, seed: int, steps: int, score: bool = True) -> dict:
    config = TransformerConfig(**{**COPY_MODEL, "positional": positional})
    models = []
    result = copy_run(config, seed, steps, keep=models, score=score)
    if not score:
        return result
    model = models[0]
    beyond_task = CopyTask(**BEYOND)
    beyond = beyond_task.sample(**BEYOND_SAMPLE)
    outputs = greedy_outputs(model, beyond_task, beyond)
    by_length = {}
    for s, y in zip(beyond, outputs):
        by_length.setdefault(len(s), []).append(list(y) == list(s))
    return {"positional": positional, **result, "exact_within": result["exact_match"],
            "val_loss_within": result["val_loss"],
            "exact_beyond": sum(sum(v) for v in by_length.values()) / len(beyond),
            "val_loss_beyond": copy_loss(model, beyond_task, beyond),
            "exact_by_length": {str(n): sum(v) / len(v) for n, v in sorted(by_length.items())},
            "position_accuracy_beyond": [round(x, 4) for x in position_accuracy(model, beyond_task, beyond)]}


def main(argv=None) -> int:
    args = copy_arguments(PROG, __doc__, STEPS, SEEDS, RESULTS, argv)
    if args is None:
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        runs = {arm: [run_one(arm, seed, args.steps) for seed in args.seeds] for arm in ARMS}
    judged = verdicts({"rotary": (runs["rotary"], runs["sinusoidal"])}, METRICS)["rotary"] if len(args.seeds) >= 2 else {}
    values = {"task": COPY_TASK, "beyond": BEYOND, "beyond_sample": BEYOND_SAMPLE, "model": COPY_MODEL,
              "recipe": COPY_RECIPE, "batch_size": COPY_BATCH, "steps": args.steps, "seeds": args.seeds,
              "runs": runs, "verdicts": judged}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s)")
    for metric, v in judged.items():
        print(f"{metric:<16} sinusoidal {sum(v['base']) / len(v['base']):.3f}  rotary {sum(v['arm']) / len(v['arm']):.3f}"
              f"  {v['words']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
