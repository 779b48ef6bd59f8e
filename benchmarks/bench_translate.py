"""A trained model translates a Multi30k test set with and without the key-value cache.

Decodes the English side of ``--split`` (default test_2016_flickr, 1,000 sentences) with
``aiayn.train.translate.translate``, the function behind ``aiayn-translate`` and the training
chapter's test-set decoding (beam 4, alpha 0.6, output length up to input + 50, batches of 100
sentences), with ``use_cache=True`` and ``use_cache=False`` once per round, in a shuffled order
(``aiayn.lab.decoding_timing.timed_rounds``). Recorded per round and variant: the process's CPU
time (with one thread, the work done) and the wall-clock time; the headline is uncached /
cached CPU time of the fastest rounds, with the per-round ratios for its spread; also the BLEU
of each variant, the sentences whose output differs (in float32 the two paths add the same
numbers in different orders, so two hypotheses whose scores tie to rounding error may swap:
each one is listed), and the load average before and after. A results file is written only
from a clean tree (no uncommitted change under code/), unless ``--allow-dirty``, which flags the
record ``clean_tree: false``.

The checkpoint is the CPU configuration's model, trained in about four minutes of one core:

    AIAYN_DATA=/path/to/data .venv/bin/aiayn-train --config multi30k-cpu --out runs/kv --no-eval
    .venv/bin/python benchmarks/bench_translate.py --checkpoint runs/kv/averaged.pt
        [--rounds 5] [--threads 1] [--sentences N] [--write FILE] [--allow-dirty]

Five rounds of the 1,000 sentences take about 2 minutes of CPU time (2 rounds took 37 s on a
2-CPU AMD EPYC, each round 14 s without the cache and 4.5 s with it).
``--sentences N`` decodes the first N only (a quick check). The data directory is
``AIAYN_DATA`` (see aiayn.data.multi30k).
"""

import argparse
import os
import sys

from machine import describe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a checkpoint from aiayn-train")
    parser.add_argument("--split", default="test_2016_flickr")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=None, help="decode the first N only")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--write", default=None, help="results file (JSON) to write")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write even with uncommitted changes under code/ (flagged)")
    args = parser.parse_args()
    if args.rounds < 1 or (args.sentences is not None and args.sentences < 1):
        parser.error("--rounds and --sentences must be at least 1")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import torch

    from aiayn.data.multi30k import load_split
    from aiayn.data.tokenizer import SubwordTokenizer
    from aiayn.experiments.record import Recorder
    from aiayn.inference.bleu import corpus_bleu
    from aiayn.lab.decoding_timing import (DirtyTree, check_clean_tree, load_average, speedup,
                                           timed_rounds)
    from aiayn.train.checkpoint import build_model, load_checkpoint
    from aiayn.train.translate import translate

    recorder = Recorder()
    try:  # refuse before minutes of measuring, not after
        clean = check_clean_tree(recorder.provenance["code_changes"], args.allow_dirty or not args.write)
    except DirtyTree as err:
        print(f"bench_translate.py: error: {err}", file=sys.stderr)
        raise SystemExit(2)
    torch.set_num_threads(args.threads)
    ckpt = load_checkpoint(args.checkpoint)
    model = build_model(ckpt, "cpu").eval()
    tokenizer = SubwordTokenizer.from_str(ckpt["metadata"]["tokenizer"])
    sources, references = load_split(args.split, None)
    sources, references = sources[:args.sentences], references[:args.sentences]
    print(describe())
    print(f"{args.checkpoint}: {args.split}, {len(sources)} sentences, beam {args.beam}, "
          f"alpha {args.alpha}, {args.rounds} round(s)")
    outputs = {}

    def run(use_cache):
        outputs[use_cache] = translate(model, tokenizer, sources, args.beam, args.alpha,
                                       use_cache=use_cache)

    load_before = load_average()
    times = timed_rounds({"test set": {"cached": lambda: run(True),
                                       "uncached": lambda: run(False)}}, args.rounds)["test set"]
    load_after = load_average()
    differ = [i for i, (a, b) in enumerate(zip(outputs[True], outputs[False])) if a != b]
    values = {"split": args.split, "sentences": len(sources), "beam_size": args.beam,
              "alpha": args.alpha, "rounds": args.rounds, "differing_sentences": len(differ),
              "clock": "time.process_time", "clean_tree": clean,
              "load_average": {"before": load_before, "after": load_after},
              **speedup(times["uncached"]["cpu_s"], times["cached"]["cpu_s"])}
    for use_cache, name in ((False, "uncached"), (True, "cached")):
        values[f"{name}_cpu_s"] = times[name]["cpu_s"]
        values[f"{name}_wall_s"] = times[name]["wall_s"]
        values[f"{name}_bleu"] = corpus_bleu(outputs[use_cache], references).score
        print(f"{name:>9}: CPU s per round {[round(t, 1) for t in times[name]['cpu_s']]}, "
              f"BLEU {values[f'{name}_bleu']:.2f}")
    per_round = values["speedup_cpu_per_round"]
    print(f"uncached / cached CPU time: {values['speedup_cpu']:.2f} (fastest rounds), "
          f"{min(per_round):.2f}-{max(per_round):.2f} (per round)")
    print(f"sentences whose output differs: {len(differ)} of {len(sources)}")
    for i in differ:
        print(f"  {i}: cached   {outputs[True][i]}\n  {'':{len(str(i))}}  uncached "
              f"{outputs[False][i]}")
    values["differing"] = [{"index": i, "cached": outputs[True][i], "uncached": outputs[False][i]}
                           for i in differ]
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    if args.write:
        recorder.write(args.write, values)
        print("written to", args.write, "" if clean else "(flagged: clean_tree false)")


if __name__ == "__main__":
    main()
