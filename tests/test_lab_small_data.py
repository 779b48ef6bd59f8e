"""aiayn.lab.small_data and aiayn.figures.recipe: the recipe chapter's budget runs, compared over
seeds with aiayn.stats (noise only at equal updates and threads), the tables its pages show, and
its two figures."""

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest

from aiayn.experiments.record import Recorder
from aiayn.experiments.recipe_table import recipe_table
from aiayn.figures.recipe import plot_along_the_hour, plot_beam_alpha
from aiayn.show import markdown_table
from aiayn.lab import small_data


def write_run(folder, seed, changes, points, threads=2):
    """A budget results file as ``recipes budget`` writes it, with the thread count given."""
    values = {"config": "multi30k-laptop", "changes": changes, "seed": seed,
              "points": [{"minutes": m, "step": step, "val_bleu": bleu, "averaged_val_loss": loss}
                         for m, step, bleu, loss in points]}
    path = small_data.budget_path(folder, "multi30k-laptop", changes, seed)
    Recorder().write(path, values)
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record | {"threads": threads}))
    return path


def synthetic(tmp_path, offset=0.0, threads=2, steps=(650, 2000, 3950)):
    """Three seeds of the reference and two of a candidate whose loss is ``offset`` lower."""
    noise = (0.0, 0.004, -0.003)
    for seed in (0, 1, 2):
        write_run(tmp_path, seed, {}, [(m, s, 30 + noise[seed], 2.0 + noise[seed])
                                       for m, s in zip(small_data.MINUTES, steps)])
    for seed in (0, 1):
        write_run(tmp_path, seed, {"d_model": "256"}, [(m, s, 30 + noise[seed], 2.0 - offset + noise[seed])
                                                       for m, s in zip(small_data.MINUTES, (650, 2000, 3950))],
                  threads=threads)
    reference = small_data.laptop_seeds(tmp_path)
    candidate = [small_data.load_run(changes={"d_model": "256"}, seed=s, results=tmp_path) for s in (0, 1)]
    return reference, candidate


def test_committed_laptop_hour_has_three_seeds_at_the_same_updates():
    runs = small_data.laptop_seeds()
    assert [r.seed for r in runs] == [0, 1, 2] and {r.threads for r in runs} == {2}
    assert all([r.updates(m) for m in small_data.MINUTES] == [650, 2000, 3950] for r in runs)
    mean, low, high = small_data.spread(runs, 60, "val_bleu")
    assert low <= mean <= high
    headers, rows = small_data.hour_rows(runs)
    assert headers[-1] == "range" and [r[:2] for r in rows] == [["10 min", "650"], ["30 min", "2,000"], ["60 min", "3,950"]]
    assert rows[-1][-2] == f"{mean:.1f}" and rows[-1][-1] == f"{high - low:.1f}"
    markdown_table(headers, rows)  # a table show.table can render: one cell per header


def test_a_clear_difference_passes_and_an_equal_one_is_inconclusive(tmp_path):
    reference, candidate = synthetic(tmp_path / "clear", offset=0.2)
    judged = small_data.judge_along(candidate, reference, "averaged_val_loss")
    assert [j.verdict.kind for j in judged] == ["better"] * 3  # lower loss is better
    assert all(j.comparison.df == 1 and j.comparison.method == "Welch (Hsu df)" for j in judged)
    reference, candidate = synthetic(tmp_path / "equal", offset=0.0)
    assert {j.verdict.kind for j in small_data.judge_along(candidate, reference, "averaged_val_loss")} == {"inconclusive"}
    # One run against the seeds: a prediction interval; Holm's adjusted p never below the raw one.
    one = small_data.judge_along(candidate[:1], reference, "val_bleu")
    assert all(j.comparison.method == "one run against seeds" and j.adjusted_p >= j.comparison.p for j in one)


def test_noise_only_at_equal_updates_and_threads(tmp_path):
    reference, candidate = synthetic(tmp_path / "threads", offset=0.2, threads=1)
    with pytest.raises(ValueError, match="^candidate: runs of different threads"):
        small_data.compare(candidate, reference, 60, "val_bleu")
    reference, candidate = synthetic(tmp_path / "updates", offset=0.2, steps=(650, 2000, 4000))
    with pytest.raises(ValueError, match="^candidate: runs of different updates"):
        small_data.compare(candidate, reference, 60, "val_bleu")
    with pytest.raises(ValueError, match="^reference: needs 2 seeds"):
        small_data.compare(candidate, reference[:1], 10, "val_bleu")
    with pytest.raises(ValueError, match="^minutes:"):
        reference[0].value(120, "val_bleu")
    with pytest.raises(ValueError, match="^metric:"):
        reference[0].value(60, "bleu")


def test_a_change_within_runs_is_paired_and_needs_two_seeds(tmp_path):
    wide = [small_data.load_run(changes={"d_model": "256", "d_ff": "512"}, seed=s) for s in (0, 1)]
    comparison, verdict = small_data.change_between(wide, "averaged_val_loss", 60, 120)
    assert comparison.method == "paired t" and comparison.difference > 0 and verdict.kind == "worse"
    with pytest.raises(ValueError, match="^runs: a change within runs needs 2 seeds"):
        small_data.change_between(wide[:1], "val_bleu")


def test_the_chapter_verdicts_from_the_committed_files():
    """What the lesson's twist says, pinned here too: a re-run that changes a verdict fails."""
    small = small_data.laptop_seeds()
    dropout = [small_data.load_run(changes={"dropout": "0.1"})]
    wide = [small_data.load_run(changes={"d_model": "256", "d_ff": "512"}, seed=s) for s in (0, 1)]
    kinds = lambda runs, metric: [j.verdict.kind for j in small_data.judge_along(runs, small, metric)]
    assert kinds(dropout, "averaged_val_loss") == ["better", "better", "worse"]
    assert kinds(wide, "averaged_val_loss") == ["better", "inconclusive", "inconclusive"]
    assert kinds(dropout, "val_bleu") == kinds(wide, "val_bleu") == ["inconclusive"] * 3
    table = recipe_table(small_data.REPOSITORY / "results" / "recipes")
    for metric in ("val_bleu", "val_loss"):
        assert {v.kind for _, _, v in small_data.ranking(table, metric=metric).values()} == {"inconclusive"}
    headers, rows = small_data.ranking_rows(table)
    assert [r[-1] for r in rows].count("inconclusive") == 5 and ["small", "(the reference)"] == [rows[3][0], rows[3][-1]]
    markdown_table(headers, rows)


def test_the_lessons_table_says_beyond_seed_noise_or_inconclusive(monkeypatch):
    small = small_data.laptop_seeds()
    dropout = [small_data.load_run(changes={"dropout": "0.1"})]
    judged = {"dropout 0.1, loss": small_data.judge_along(dropout, small, "averaged_val_loss"),
              "dropout 0.1, BLEU": small_data.judge_along(dropout, small, "val_bleu")}
    headers, rows = small_data.along_rows(judged, {"dropout 0.1, loss": 3})
    assert headers[1:] == ["650 updates (10 min)", "2,000 updates (30 min)", "3,950 updates (60 min)"]
    assert rows[0][1:] == ["-0.280: better, beyond seed noise", "-0.102: better, beyond seed noise",
                           "+0.067: worse, beyond seed noise"]
    assert all(cell.endswith(": inconclusive") for cell in rows[1][1:])
    assert not any(word in " ".join(map(str, [*headers, *sum(rows, [])])) for word in ("Holm", "p ", "t-test"))
    monkeypatch.setenv("AIAYN_LANG", "zh")
    assert small_data.seed_noise(judged["dropout 0.1, loss"][2].verdict) == "更差，超出种子噪声"
    with pytest.raises(ValueError, match="^verdict:"):
        small_data.seed_noise(small_data.stats.Verdict("equivalent", "±1"))
    lab = small_data.verdict_rows("dropout 0.1", judged["dropout 0.1, loss"])
    assert len(lab[0]) == len(small_data.verdict_headers("against")) and lab[0][3] == "单次运行对多个种子（预测区间）"
    monkeypatch.setenv("AIAYN_LANG", "en")
    assert small_data.method_label("one run against seeds") == "one run against seeds"


def test_machine_is_a_factor_a_comparison_can_be_restricted_to(tmp_path):
    small = small_data.laptop_seeds()
    assert small_data.machines(small) == {"AMD EPYC": ["multi30k-laptop", "multi30k-laptop_seed1"],
                                          "Intel Xeon": ["multi30k-laptop_seed2"]}
    epyc = small_data.on_machine(small, "AMD EPYC")
    assert [r.seed for r in epyc] == [0, 1]
    with pytest.raises(ValueError, match="^machine: none of the runs ran on 'Apple M2'"):
        small_data.on_machine(small, "Apple M2")


@pytest.mark.parametrize("lang, label", [("en", "validation BLEU"), ("zh", "验证集 BLEU")])
def test_the_figures_draw_with_labels_in_the_notebooks_language(lang, label, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", lang)
    small = small_data.laptop_seeds()
    dropout = [small_data.load_run(changes={"dropout": "0.1"})]
    wide = [small_data.load_run(changes={"d_model": "256", "d_ff": "512"}, seed=s) for s in (0, 1)]
    fig, axes = plt.subplots(1, 2)
    plot_along_the_hour(axes, small, dropout, wide, {("dropout", "averaged_val_loss"): [10, 30, 60]})
    assert axes[1].get_title(loc="left") == label
    filled = [l for l in axes[0].lines if l.get_marker() == "s" and l.get_markerfacecolor() != "white"]
    assert len(filled) == 3  # dropout 0.1's three budgets beyond seed noise in loss (as given), hollow elsewhere
    legend = [t.get_text() for t in axes[1].get_legend().get_texts()]
    assert not any("Holm" in t for t in legend) and legend[-1] == {"en": "hollow: inconclusive", "zh": "空心：无定论"}[lang]
    fig, ax = plt.subplots()
    grid = [{"beam_size": b, "alpha": a, "val_bleu": 30 + b - a} for b in (1, 4, 5) for a in (0.0, 0.6)]
    plot_beam_alpha(ax, grid, paper=(4, 0.6), chosen=(5, 0.0))
    assert ax.get_ylabel() == label and len(ax.get_legend().get_texts()) == 4  # two alphas, the paper's, the best
    plt.close("all")
