"""The decoder-only model against the paper's encoder-decoder at equal parameters, on the copy and
the reverse task ("After the paper": GPT's shape, Radford et al., 2018).

    python -m aiayn.experiments.after_decoder_only        # results/after_the_paper/decoder_only.json
    python -m aiayn.experiments.after_decoder_only --steps 25 --seeds 0 --out /tmp/decoder_only.json

The encoder-decoder is the copy-task model of ``after_common`` (2 + 2 layers, d_ff 256). The
decoder-only model (``aiayn.pt.decoder_only``) reads source and target as one sequence under a
causal mask with 4 layers of self-attention and d_ff 320: it lacks the encoder-decoder attention,
and d_ff + d_model gives those weights back, so the two hold the same number of parameters to
within 4 * N * d_model (512 of 234,368, 0.22 %). Each run trains ``--steps`` updates; seed k of both shares the batches (the initial
weights differ: the shapes do). Scores on the 500 held-out sequences: validation loss and greedy
exact match. Verdicts: decoder-only against encoder-decoder, paired by seed, Holm over both tasks
and both scores.
"""

import sys

import torch

from ..config import TransformerConfig
from ..pt.decoder_only import DecoderOnlyTransformer
from ..pt.model import Transformer
from .after_common import COPY_BATCH, COPY_MODEL, COPY_RECIPE, COPY_TASK, copy_arguments, copy_run, verdicts
from .record import REPOSITORY, Recorder

PROG = "python -m aiayn.experiments.after_decoder_only"
RESULTS = REPOSITORY / "results" / "after_the_paper" / "decoder_only.json"
ARMS = {
    "encoder_decoder": (Transformer, COPY_MODEL),
    "decoder_only": (DecoderOnlyTransformer, {**COPY_MODEL, "num_layers": 2 * COPY_MODEL["num_layers"],
                                              "d_ff": COPY_MODEL["d_ff"] + COPY_MODEL["d_model"]}),
}
TASKS = {"copy": False, "reverse": True}
STEPS = 600
SEEDS = (0, 1, 2, 3, 4)
METRICS = {"val_loss": True, "exact_match": False}


def run_one(arm: str, task: str, seed: int, steps: int, score: bool = True) -> dict:
    model_class, fields = ARMS[arm]
    return copy_run(TransformerConfig(**fields), seed, steps, model_class=model_class, reverse=TASKS[task],
                    score=score)


def main(argv=None) -> int:
    args = copy_arguments(PROG, __doc__, STEPS, SEEDS, RESULTS, argv)
    if args is None:
        return 2
    torch.set_num_threads(1)
    with Recorder() as rec:
        runs = {task: {arm: [run_one(arm, task, seed, args.steps) for seed in args.seeds] for arm in ARMS}
                for task in TASKS}
    judged = (verdicts({task: (r["decoder_only"], r["encoder_decoder"]) for task, r in runs.items()}, METRICS)
              if len(args.seeds) >= 2 else {})
    values = {"task": COPY_TASK, "models": {arm: fields for arm, (_, fields) in ARMS.items()},
              "parameters": {arm: runs["copy"][arm][0]["parameters"] for arm in ARMS}, "recipe": COPY_RECIPE,
              "batch_size": COPY_BATCH, "steps": args.steps, "seeds": args.seeds, "runs": runs, "verdicts": judged}
    record = rec.write(args.out, values)
    print(f"wrote {args.out} ({record['cpu_seconds']:.0f} CPU s); parameters {values['parameters']}")
    for task, by_metric in judged.items():
        for metric, v in by_metric.items():
            print(f"{task:<8} {metric:<12} encoder-decoder {sum(v['base']) / len(v['base']):.3f}  "
                  f"decoder-only {sum(v['arm']) / len(v['arm']):.3f}  {v['words']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
