"""Command line: checks your exercises.

    python -m aiayn.grading scaled_dot_product_attention/masked_softmax   # one exercise
    python -m aiayn.grading scaled_dot_product_attention                  # one chapter
    python -m aiayn.grading --all                                         # everything
    python -m aiayn.grading --list                                        # what there is
    python -m aiayn.grading from_scratch/attention --seed 123             # reproduce a run
    python -m aiayn.grading --all --solutions                             # the reference files
    python -m aiayn.grading from_scratch/masks --path my_transformer.py   # another file
    python -m aiayn.grading from_scratch --path my_transformer.py         # all its stages

Exit status 0 when everything selected passes, 1 otherwise (a check that failed, raised,
exited, crashed or hung), 2 for a usage error, 130 when interrupted with Ctrl-C. A check that
hangs is stopped after --time-limit seconds, and the file's later checks are not run.
"""

import argparse
import sys
from pathlib import Path

from . import REGISTRY, exercise_path, grade, in_book_order, select
from .language import tr
from .runner import TIME_LIMIT_S


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m aiayn.grading",
        description="Grade exercises: fresh random inputs each run, compared with the course's "
                    "tested implementation. The seed is printed so a failure can be replayed.")
    parser.add_argument("targets", nargs="*", metavar="EXERCISE_OR_CHAPTER",
                        help="an exercise id <chapter>/<name>, or a chapter name")
    parser.add_argument("--all", action="store_true", help="grade every exercise")
    parser.add_argument("--list", action="store_true", help="list exercises and their files")
    parser.add_argument("--solutions", action="store_true",
                        help="grade the reference solutions in exercises/solutions/ instead")
    parser.add_argument("--path", type=Path, help="grade this file (one exercise only)")
    parser.add_argument("--seed", type=int, help="reuse the inputs of an earlier run")
    parser.add_argument("--time-limit", type=float, default=TIME_LIMIT_S, metavar="SECONDS",
                        help=f"stop a check that runs longer (default {TIME_LIMIT_S:g})")
    args = parser.parse_args(argv)
    if not args.time_limit > 0:
        parser.error(f"--time-limit must be a positive number of seconds, got {args.time_limit}")

    if args.list:
        for ex in in_book_order():
            print(f"{ex.id:<48} exercises/{ex.file}\n{'':<48} {ex.shown_title()}")
        return 0
    if args.all == bool(args.targets):
        parser.error("name exercises or chapters, or use --all (not both)")
    if args.path is not None and (args.solutions or args.all):
        parser.error("--path grades one file: do not combine it with --solutions or --all")
    try:
        every = in_book_order() if args.all else [ex for t in args.targets for ex in select(t)]
    except KeyError as e:
        parser.error(e.args[0])
    chosen = [ex.id for ex in every]
    if args.path is not None and len({REGISTRY[i].file for i in chosen}) != 1:
        parser.error("--path grades one file: name one <chapter>/<name>, or a chapter whose "
                     "exercises share one file (from_scratch)")
    if args.path is None:
        missing = [exercise_path(REGISTRY[i], args.solutions) for i in chosen]
        missing = [str(p) for p in missing if not p.is_file()]
        if missing:
            parser.error("file not found: " + ", ".join(missing))
    elif not args.path.is_file():
        parser.error(f"file not found: {args.path}")
    try:
        ok = grade(chosen, solutions=args.solutions, path=args.path, seed=args.seed,
                   time_limit=args.time_limit)
    except KeyboardInterrupt:
        print(tr("interrupted: grading stopped (nothing was graded as passed)",
                 "已中断：评分停止（没有任何练习被判为通过）"), file=sys.stderr)
        return 130
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
