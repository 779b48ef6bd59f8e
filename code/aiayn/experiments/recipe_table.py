"""The recipe ranking as a table, read from the committed results files (never typed in).

    from aiayn.experiments.recipe_table import recipe_table
    table = recipe_table("results/recipes")
    print(table.to_text())           # one row per candidate: mean and spread over seeds
    table.rows[0].val_bleu.mean      # the numbers the chapter glues
"""

import statistics
from dataclasses import dataclass
from pathlib import Path

from .record import processor_name, read_results

# A candidate is ranked once it has this many seeds; with fewer it is listed, not chosen.
MIN_SEEDS = 2
# The chapter's verdicts in its other language.
VERDICTS_ZH = {"better": "更好", "worse": "更差", "within noise": "在噪声之内"}


def compare_seeds(a, b, lower_is_better=False) -> str:
    """"better" only when every seed's value in ``a`` beats every one in ``b``, "worse" when every
    one falls behind, else "within noise": with a few seeds, their ranges are all the noise there
    is. ``lower_is_better`` for losses."""
    if lower_is_better:
        a, b = [-v for v in a], [-v for v in b]
    return "better" if min(a) > max(b) else "worse" if max(a) < min(b) else "within noise"


def lead_over_best(value: float, others, lower_is_better=False) -> float:
    """How far ``value`` is ahead of the best of ``others`` (negative when behind it); for losses,
    ``lower_is_better``. One run against several, to be judged by ``compare_difference``."""
    return min(others) - value if lower_is_better else value - max(others)


def compare_difference(difference: float, noise: float) -> str:
    """One seed against one: the difference counts only beyond ``noise``, the spread that seeds of
    one configuration showed elsewhere."""
    return "better" if difference > noise else "worse" if difference < -noise else "within noise"


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

    def compare(self, candidate: str, reference: str) -> str:
        """Returns "better", "worse" or "within noise": better only when every seed of ``candidate``
        beats every seed of ``reference`` on validation BLEU (with two seeds each, the ranges
        are all the noise there is to go by)."""
        return compare_seeds(self.row(candidate).val_bleu.values, self.row(reference).val_bleu.values)

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
                        f"{k}_val_bleu": round(p["val_bleu"], 1), f"{k}_test_bleu": round(p["test_2016_flickr_bleu"], 1),
                        f"{k}_val_loss": round(p["averaged_val_loss"], 3)}
    for path in sorted((results / "recipes" / "decoding").glob("*.json")):  # aiayn.experiments.decoding
        v = read_results(path)["values"]
        k = f"decoding_{glue_key(path.stem)}"
        val = {(r["beam_size"], r["alpha"]): r["val_bleu"] for r in v["grid"]}
        for which in ("paper", "chosen"):
            setting = (v[which]["beam_size"], v[which]["alpha"])
            numbers |= {f"{k}_{which}_beam": setting[0], f"{k}_{which}_alpha": setting[1],
                        f"{k}_{which}_val_bleu": round(val[setting], 1),
                        f"{k}_{which}_test_bleu": round(v["test_bleu"][f"beam {setting[0]}, alpha {setting[1]}"], 1)}
        if "test_p_value" in v:
            numbers[f"{k}_test_p_value"] = round(v["test_p_value"], 2)
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
        numbers |= {f"{k}_test_bleu": round(v["test_2016_flickr_bleu"], 1), f"{k}_val_bleu": round(v["val_bleu"], 1),
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
                bleu = Spread(tuple(r[key] for r in runs))
                numbers |= {f"{k}_{split}_bleu_mean": round(bleu.mean, 1),
                            f"{k}_{split}_bleu_spread": round(bleu.spread, 1)}
    return numbers
