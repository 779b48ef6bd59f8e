"""The recipe ranking as a table, read from the committed results files (never typed in).

    from aiayn.experiments.recipe_table import recipe_table
    table = recipe_table("results/recipes")
    print(table.to_text())           # one row per candidate: mean and spread over seeds
    table.rows[0].val_bleu.mean      # the numbers the chapter glues
    table.compare("wide", "small")   # an aiayn.stats.Verdict: .label(lang), .clause(lang)
    table.judge("small")             # every ranked candidate against one, one Holm family

Comparisons follow ``aiayn.stats``: seed means with a paired t-test where seed k of both
candidates sees the same batches (same seeds, same batch fields), else Welch's t with Hsu's
conservative df; noise only at the same budget on the same hardware (``same_setting`` refuses
anything else); one new run against a candidate's seeds with ``one_run_against``.
"""

import statistics
from dataclasses import dataclass
from pathlib import Path

from .. import stats
from .record import processor_name, read_results

# A candidate is ranked once it has this many seeds; with fewer it is listed, not chosen.
MIN_SEEDS = 2
# With the seed, these fields fix the order of the batches (aiayn-train --set): two candidates
# that agree on them see the same batches under the same seed, and are compared seed by seed.
BATCH_ORDER = ("max_tokens", "vocab_size", "max_train_pairs")
METRICS = {"val_bleu": False, "val_loss": True, "test_bleu": False}  # name -> lower is better


@dataclass(frozen=True)
class Spread:
    """Mean, smallest and largest of one measurement over seeds."""

    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def spread(self) -> float:
        """Largest minus smallest: with two seeds, the only honest measure of noise there is."""
        return max(self.values) - min(self.values)

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.spread / 2:.2f}" if len(self.values) > 1 else f"{self.mean:.2f}"


@dataclass(frozen=True)
class Row:
    candidate: str
    changes: str            # the aiayn-train --set fields that make it (over multi30k-cpu)
    seeds: tuple[int, ...]
    val_loss: Spread        # averaged model, plain cross-entropy per target token
    val_bleu: Spread        # cased sacreBLEU (13a), beam search
    test_bleu: Spread | None  # only for the configurations chosen on validation
    parameters: int
    steps: int
    cpu_minutes: Spread     # training and validation decoding, per run
    minutes: Spread         # wall clock (varies with the machine's load)
    threads: int
    machine: str


@dataclass(frozen=True)
class Table:
    rows: list[Row]

    @property
    def best(self) -> Row:
        """The candidate with the highest mean validation BLEU among those with MIN_SEEDS seeds."""
        ranked = [r for r in self.rows if len(r.seeds) >= MIN_SEEDS]
        if not ranked:
            raise ValueError(f"no candidate has {MIN_SEEDS} seeds yet: run `python -m aiayn.experiments.recipes rank`")
        return ranked[0]

    def compare(self, candidate: str, reference: str, metric: str = "val_bleu", margin=None,
                margin_label: str = "") -> stats.Verdict:
        """``candidate`` against ``reference`` alone (a family of one): "better", "worse",
        "equivalent within ±margin" (with a ``margin``) or "inconclusive"."""
        return self.judge(reference, metric, margin, margin_label, [candidate])[candidate]

    def judge(self, reference: str, metric: str = "val_bleu", margin=None, margin_label: str = "",
              candidates=None) -> dict[str, stats.Verdict]:
        """Each of ``candidates`` (default: every other candidate with MIN_SEEDS seeds) against
        ``reference``, Holm-corrected over them as one family."""
        names = candidates or [r.candidate for r in self.rows
                               if r.candidate != reference and len(r.seeds) >= MIN_SEEDS]
        ref = self.row(reference)
        comparisons = {name: compare_rows(self.row(name), ref, metric) for name in names}
        return stats.judge(comparisons, margin, margin_label, lower_is_better=METRICS[metric])

    def row(self, candidate: str) -> Row:
        for row in self.rows:
            if row.candidate == candidate:
                return row
        raise KeyError(f"no results for candidate {candidate!r}; have {[r.candidate for r in self.rows]}")

    def to_text(self) -> str:
        head = (f"{'candidate':<13}{'seeds':>6}{'params':>10}{'updates':>8}{'val loss':>15}{'val BLEU':>16}"
                f"{'test BLEU':>16}{'CPU min':>9}")
        lines = [head]
        for r in self.rows:
            test = str(r.test_bleu) if r.test_bleu else "-"
            lines.append(f"{r.candidate:<13}{len(r.seeds):>6}{r.parameters:>10,}{r.steps:>8}{str(r.val_loss):>15}"
                         f"{str(r.val_bleu):>16}{test:>16}{r.cpu_minutes.mean:>9.1f}")
        machines = sorted({f"{r.machine} ({r.threads} thread{'s' * (r.threads > 1)})" for r in self.rows})
        return "\n".join(lines + ["(mean ± half the spread over seeds) " + "; ".join(machines)])


def set_fields(row: Row) -> dict[str, str]:
    """The row's aiayn-train --set fields, as typed ("max_tokens" -> "4096")."""
    return dict(item.split("=", 1) for item in row.changes.split() if "=" in item)


def budget(row: Row) -> int:
    """Training tokens the row's runs were allowed: updates times the batch's token budget
    (1,200 updates of 2,048 tokens is the budget of 600 of 4,096)."""
    return row.steps * int(set_fields(row).get("max_tokens", 1))


def same_setting(a: Row, b: Row, name: str = "b") -> None:
    """Noise is measured at one budget on one machine: raises ValueError (naming ``name``) when
    ``b`` trained on another token budget, on another processor or with other threads than ``a``."""
    for field, get in (("budget", budget), ("machine", lambda r: r.machine), ("threads", lambda r: r.threads)):
        if get(a) != get(b):
            raise ValueError(f"{name}: {b.candidate} has {field} {get(b)!r}, {a.candidate} {get(a)!r}; "
                             "compare runs of one budget on one machine")


def _values(row: Row, metric: str) -> tuple[float, ...]:
    if metric not in METRICS:
        raise ValueError(f"metric: one of {', '.join(METRICS)}, got {metric!r}")
    spread = getattr(row, metric)
    if spread is None:
        raise ValueError(f"metric: {row.candidate} has no {metric}")
    return spread.values


def compare_rows(a: Row, b: Row, metric: str = "val_bleu") -> stats.Comparison:
    """Mean of ``a`` minus mean of ``b`` over seeds: paired when both ran the same seeds with the
    same batch fields, else Welch's t (Hsu's df). Needs two seeds each, one budget, one machine."""
    same_setting(a, b)
    for name, row in (("a", a), ("b", b)):
        if len(row.seeds) < 2:
            raise ValueError(f"{name}: {row.candidate} has {len(row.seeds)} seed; one run against seeds: "
                             "one_run_against")
    batches = [{k: set_fields(r).get(k) for k in BATCH_ORDER} for r in (a, b)]
    if a.seeds == b.seeds and batches[0] == batches[1]:
        return stats.paired(_values(a, metric), _values(b, metric))
    return stats.welch(_values(a, metric), _values(b, metric), conservative=True)


def one_run_against(value: float, row: Row, metric: str = "val_bleu", steps: int | None = None,
                    machine: str | None = None, threads: int | None = None) -> stats.Comparison:
    """One new run's ``value`` against the seeds of ``row`` (a prediction interval: value minus
    their mean); ``steps``, ``machine`` and ``threads`` of the new run must be the row's."""
    for field, given in (("steps", steps), ("machine", machine), ("threads", threads)):
        if given is None:
            raise ValueError(f"{field}: say the new run's {field}; noise is only known at the row's "
                             f"({getattr(row, field)!r})")
        if given != getattr(row, field):
            raise ValueError(f"{field}: the new run has {given!r}, {row.candidate}'s seeds "
                             f"{getattr(row, field)!r}; compare runs of one budget on one machine")
    return stats.one_against_seeds(value, _values(row, metric))


def recipe_table(results, candidates=None) -> Table:
    """One row per candidate that has ranking results under ``results``/rank, best validation
    BLEU first; ``candidates`` restricts and orders nothing but the selection."""
    results = Path(results)
    files = sorted((results / "rank").glob("*_seed*.json"))
    if not files:
        raise FileNotFoundError(f"no ranking results in {results / 'rank'}: run "
                                "`python -m aiayn.experiments.recipes rank` first")
    runs: dict[str, list[dict]] = {}
    for path in files:
        record = read_results(path)
        runs.setdefault(record["values"]["candidate"], []).append(record)
    rows = []
    for name, records in runs.items():
        if candidates is not None and name not in candidates:
            continue
        records.sort(key=lambda r: r["values"]["seed"])
        v = [r["values"] for r in records]
        tests = [read_results(t)["values"]["test_2016_flickr_bleu"] for r in v
                 if (t := results / "test" / f"{name}_seed{r['seed']}.json").is_file()]
        rows.append(Row(
            candidate=name, changes=v[0]["aiayn_train"].split("--set ", 1)[-1].split(" --seed")[0],
            seeds=tuple(x["seed"] for x in v), val_loss=Spread(tuple(x["averaged_val_loss"] for x in v)),
            val_bleu=Spread(tuple(x["val_bleu"] for x in v)), test_bleu=Spread(tuple(tests)) if tests else None,
            parameters=v[0]["parameters"], steps=v[0]["steps"],
            cpu_minutes=Spread(tuple(r["cpu_seconds"] / 60 for r in records)),
            minutes=Spread(tuple(r["seconds"] / 60 for r in records)),
            threads=records[0]["threads"], machine=processor_name(records[0])))
    rows.sort(key=lambda r: -r.val_bleu.mean)
    return Table(rows)


def glue_key(name: str) -> str:
    """A candidate or configuration name as part of a glue key: "small-do0.1" -> "small_do0_1"."""
    return "".join(ch if ch.isalnum() else "_" for ch in name).replace("__", "_")


def chapter_numbers(results) -> dict[str, object]:
    """Every number the chapter's prose takes from the recipe's results files, by glue key
    (``myst_nb.glue(key, value)``), rounded as printed. Sections whose files do not exist yet
    (the budget run, the GPU run) are left out. tests/test_experiments_recipes.py checks that
    the chapter's glued values equal these."""
    results = Path(results)
    numbers: dict[str, object] = {}
    if (results / "recipes" / "rank").is_dir():
        table = recipe_table(results / "recipes")
        # The ranking's budget is that of the literature's shape (small-b2048 counts its own updates).
        numbers |= {"recipe_best": table.best.candidate, "recipe_steps": table.row("small").steps}
        for r in table.rows:
            k = f"recipe_{glue_key(r.candidate)}"
            numbers |= {f"{k}_val_bleu": round(r.val_bleu.mean, 1), f"{k}_val_bleu_spread": round(r.val_bleu.spread, 1),
                        f"{k}_val_loss": round(r.val_loss.mean, 2), f"{k}_seeds": len(r.seeds),
                        f"{k}_cpu_minutes": round(r.cpu_minutes.mean, 1)}
            if r.test_bleu:
                numbers |= {f"{k}_test_bleu": round(r.test_bleu.mean, 1),
                            f"{k}_test_bleu_spread": round(r.test_bleu.spread, 1)}
    for path in sorted((results / "budget").glob("multi30k-*.json")):
        record = read_results(path)
        values = record["values"]
        changes = values.get("changes") or {}  # a run of `budget --set`: keys budget_<change>_...
        seed = [f"seed{values['seed']}"] if values["seed"] else []  # `budget --seed 1`: budget_seed1_...
        prefix = "_".join(["budget", *(glue_key(f"{k}{v}") for k, v in changes.items()), *seed])
        numbers[f"{prefix}_machine"] = processor_name(record)  # budget_machine, budget_seed1_machine, ...
        if not changes and not seed:
            numbers |= {"budget_config": values["config"], "budget_threads": record["threads"]}
        for p in values["points"]:
            k = f"{prefix}_{p['minutes']}min"
            numbers |= {f"{k}_updates": p["step"], f"{k}_minutes": round(p["train_seconds"] / 60, 1),
                        f"{k}_val_bleu": round(p["val_bleu"], 1), f"{k}_val_loss": round(p["averaged_val_loss"], 3)}
            if "test_2016_flickr_bleu" in p:  # budgets decoded test until the test set was sealed
                numbers[f"{k}_test_bleu"] = round(p["test_2016_flickr_bleu"], 1)
    for path in sorted((results / "recipes" / "decoding").glob("*.json")):  # aiayn.experiments.decoding
        v = read_results(path)["values"]
        k = f"decoding_{glue_key(path.stem)}"
        val = {(r["beam_size"], r["alpha"]): r["val_bleu"] for r in v["grid"]}
        # Test BLEU by setting: two settings in files written before the test set was sealed, since
        # then the adopted one alone (aiayn.experiments.decoding).
        tests = v["test_bleu"] if isinstance(v["test_bleu"], dict) else {v["test_setting"]: v["test_bleu"]}
        for which in ("paper", "chosen", "adopted"):
            if which not in v:
                continue
            setting = (v[which]["beam_size"], v[which]["alpha"])
            numbers |= {f"{k}_{which}_beam": setting[0], f"{k}_{which}_alpha": setting[1],
                        f"{k}_{which}_val_bleu": round(val[setting], 1)}
            if (name := f"beam {setting[0]}, alpha {setting[1]}") in tests:
                numbers[f"{k}_{which}_test_bleu"] = round(tests[name], 1)
        for p_value in ("test_p_value", "val_p_value"):
            if p_value in v:
                numbers[f"{k}_{p_value}"] = round(v[p_value], 2)
    if (results / "gpu" / "machine.json").is_file():
        v = read_results(results / "gpu" / "machine.json")["values"]
        numbers |= {"gpu_name": v["gpu"], "gpu_matmul_tflops": round(v["matmul_bf16_tflops"]),
                    "gpu_peak_tflops": round(v["peak_bf16_tflops"])}
    for path in sorted((results / "gpu").glob("bench_multi30k-*.json")):  # benchmarks/bench_training.py
        v = read_results(path)["values"]
        k = f"gpu_bench_{glue_key(v['config'])}"
        numbers |= {f"{k}_tflop_per_step": round(v["flops_per_step"] / 1e12, 3)}
        for row, r in v["rows"].items():  # explicit, fused, torch.nn.Transformer[, "..., compiled"]
            rk = f"{k}_{glue_key(row.replace('torch.nn.Transformer', 'torch'))}"  # ..._fused_compiled
            numbers |= {f"{rk}_ms": round(1000 * r["seconds_per_step"], 1), f"{rk}_vs_torch": round(r["speed_vs_torch_nn"], 2),
                        f"{rk}_tokens_per_s": int(round(r["target_tokens_per_s"], -3)),
                        f"{rk}_mfu_percent": round(100 * r["mfu"], 1)}
    seeds: dict[str, list[dict]] = {}  # the runs of one configuration (and --set changes), by seed
    for path in sorted((results / "gpu").glob("multi30k-*_seed*.json")):
        v = read_results(path)["values"]
        # From the file name (aiayn.experiments.gpu: <configuration>[_<changes>]_seed<k>.json), so
        # that a second seed or a changed recipe gets keys of its own instead of overwriting seed 0's:
        # gpu_multi30k_small_..., gpu_multi30k_small_seed1_..., gpu_multi30k_small_max_tokens8192_...
        name, seed = path.stem.rsplit("_seed", 1)
        seeds.setdefault(name, []).append(v)
        k = f"gpu_{glue_key(name)}" + ("" if seed == "0" else f"_seed{seed}")
        if "test_2016_flickr_bleu" in v:  # a candidate (--set) is scored on validation only
            numbers[f"{k}_test_bleu"] = round(v["test_2016_flickr_bleu"], 1)
        numbers |= {f"{k}_val_bleu": round(v["val_bleu"], 1),
                    f"{k}_val_loss": round(v["averaged_val_loss"], 3), f"{k}_updates": v["steps"],
                    f"{k}_minutes": round(v["train_and_eval_seconds"] / 60, 1),
                    f"{k}_train_minutes": round(v["train_seconds"] / 60, 1),
                    f"{k}_ms_per_update": round(1000 * v["train_seconds"] / v["steps"]),
                    f"{k}_tokens_per_s": int(round(v["tokens_per_s"], -2)),
                    f"{k}_mfu_percent": round(100 * v["mfu"], 2) if v["mfu"] else None}
    for name, runs in seeds.items():  # with two seeds or more: mean and spread, as the ranking shows them
        if len(runs) > 1:
            k = f"gpu_{glue_key(name)}"
            numbers[f"{k}_seeds"] = len(runs)
            for split, key in (("test", "test_2016_flickr_bleu"), ("val", "val_bleu")):
                if not all(key in r for r in runs):
                    continue
                bleu = Spread(tuple(r[key] for r in runs))
                numbers |= {f"{k}_{split}_bleu_mean": round(bleu.mean, 1),
                            f"{k}_{split}_bleu_spread": round(bleu.spread, 1)}
    return numbers
