"""A trained model translates a Multi30k test set with and without the key-value cache.

Decodes the English side of ``--split`` (default test_2016_flickr, 1,000 sentences) with
``aiayn.train.translate.translate``, the function behind ``aiayn-translate`` and the training
chapter's test-set decoding (beam 4, alpha 0.6, output length up to input + 50, batches of 100
sentences), once with ``use_cache=True`` and once with ``use_cache=False`` per round, in a
shuffled order, and reports per variant the wall-clock seconds (median and minimum over rounds)
and CPU seconds (median), their ratios, the BLEU of each, and the number of sentences whose
output differs. In float32 the two paths add the same numbers in different orders, so two
hypotheses whose scores tie to rounding error may swap: a differing sentence is possible, and
each one is listed.

    .venv/bin/python benchmarks/bench_translate.py --checkpoint runs/kv/averaged.pt
        [--rounds 1] [--threads 1] [--write FILE]

The data directory is ``AIAYN_DATA`` (see aiayn.data.multi30k).
"""

import argparse
import os
import random
import statistics
import time

from machine import describe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a checkpoint from aiayn-train")
    parser.add_argument("--split", default="test_2016_flickr")
    parser.add_argument("--beam", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=0.6)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--write", default=None, help="results file (JSON) to write")
    args = parser.parse_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import torch

    from aiayn.data.multi30k import load_split
    from aiayn.data.tokenizer import SubwordTokenizer
    from aiayn.experiments.record import Recorder
    from aiayn.inference.bleu import corpus_bleu
    from aiayn.train.checkpoint import build_model, load_checkpoint
    from aiayn.train.translate import translate

    torch.set_num_threads(args.threads)
    recorder = Recorder()
    ckpt = load_checkpoint(args.checkpoint)
    model = build_model(ckpt, "cpu").eval()
    tokenizer = SubwordTokenizer.from_str(ckpt["metadata"]["tokenizer"])
    sources, references = load_split(args.split, None)
    print(describe())
    print(f"{args.checkpoint}: {args.split}, {len(sources)} sentences, beam {args.beam}, "
          f"alpha {args.alpha}, {args.rounds} round(s)")
    wall = {True: [], False: []}
    cpu = {True: [], False: []}
    outputs = {}
    rng = random.Random(0)
    for _ in range(args.rounds):
        for use_cache in rng.sample([True, False], 2):
            start, start_cpu = time.perf_counter(), time.process_time()
            outputs[use_cache] = translate(model, tokenizer, sources, args.beam, args.alpha,
                                           use_cache=use_cache)
            wall[use_cache].append(time.perf_counter() - start)
            cpu[use_cache].append(time.process_time() - start_cpu)
    differ = [i for i, (a, b) in enumerate(zip(outputs[True], outputs[False])) if a != b]
    values = {"split": args.split, "sentences": len(sources), "beam_size": args.beam,
              "alpha": args.alpha, "rounds": args.rounds, "differing_sentences": len(differ)}
    for use_cache, name in ((False, "uncached"), (True, "cached")):
        values[f"{name}_wall_s"] = statistics.median(wall[use_cache])
        values[f"{name}_wall_min_s"] = min(wall[use_cache])
        values[f"{name}_cpu_s"] = statistics.median(cpu[use_cache])
        values[f"{name}_bleu"] = corpus_bleu(outputs[use_cache], references).score
        print(f"{name:>9}: {values[f'{name}_wall_s']:7.1f} s wall, "
              f"{values[f'{name}_cpu_s']:7.1f} s CPU, BLEU {values[f'{name}_bleu']:.2f}")
    values["speedup_wall"] = values["uncached_wall_s"] / values["cached_wall_s"]
    values["speedup_wall_minima"] = values["uncached_wall_min_s"] / values["cached_wall_min_s"]
    values["speedup_cpu"] = values["uncached_cpu_s"] / values["cached_cpu_s"]
    print(f"uncached / cached: {values['speedup_wall']:.2f} (wall, medians), "
          f"{values['speedup_wall_minima']:.2f} (wall, minima), {values['speedup_cpu']:.2f} (CPU)")
    print(f"sentences whose output differs: {len(differ)} of {len(sources)}")
    for i in differ:
        print(f"  {i}: cached   {outputs[True][i]}\n  {'':{len(str(i))}}  uncached "
              f"{outputs[False][i]}")
    values["differing"] = [{"index": i, "cached": outputs[True][i], "uncached": outputs[False][i]}
                           for i in differ]
    if args.write:
        recorder.write(args.write, values)
        print("written to", args.write)


if __name__ == "__main__":
    main()
