"""The drawings and tables of the part "After the paper" (aiayn.figures.after_the_paper): they draw
in both languages without missing glyphs or warnings, show what the records hold (verdicts made by
the experiments' own ``verdicts``), and refuse what they cannot draw."""

import json
import math
import warnings

import pytest
from matplotlib.collections import PathCollection
from matplotlib.patches import Rectangle

from aiayn.experiments.after_common import MULTI30K_METRICS, verdicts
from aiayn.figures import after_the_paper as after
from figure_helpers import png, texts

SCHEDULES = ("warmup", "no_warmup", "warmup_x4", "no_warmup_x4")


def copy_runs(losses, exact=1.0, **extra):
    return [{"seed": s, "val_loss": x, "exact_match": exact, "diverged": not math.isfinite(x), "parameters": 1000, **extra}
            for s, x in enumerate(losses)]


def pre_ln_record():
    runs = {}
    for schedule in SCHEDULES:
        for depth in (2, 6):
            post = copy_runs([2.0, 2.1, 2.2] if schedule != "no_warmup_x4" or depth == 2 else [float("nan"), 2.4, 2.5])
            pre = copy_runs([1.0, 1.05, 1.15] if schedule == "warmup" else [2.0, 2.2, 2.1])
            runs[f"{schedule}_{depth}layers"] = {"post_ln": post, "pre_ln": pre}
    finite = {n: a for n, a in runs.items() if all(math.isfinite(r["val_loss"]) for arm in a.values() for r in arm)}
    judged = verdicts({n: (a["pre_ln"], a["post_ln"]) for n, a in finite.items()}, {"val_loss": True})
    return {"values": {"depths": [2, 6], "schedules": {s: {} for s in SCHEDULES}, "runs": runs, "verdicts": judged}}


def rope_record():
    def runs(within, beyond, accuracy):
        return [{"seed": s, "exact_within": within, "exact_beyond": beyond, "position_accuracy_beyond": accuracy,
                 "exact_by_length": {str(n): beyond for n in range(11, 21)}} for s in range(3)]
    return {"values": {"task": {"vocab_size": 14, "max_len": 10}, "beyond": {"min_len": 11, "max_len": 20},
                       "runs": {"sinusoidal": runs(1.0, 0.0, [1.0] * 11 + [0.1] * 10),
                                "rotary": runs(0.98, 0.2, [1.0] * 11 + [0.5] * 10)}}}


def memory_record():
    rows = [{"n": n, "numpy_float64": {"paper": 12 * n * n, "chunked": 3000 * n},
             "torch_float32": {"paper": 8 * n * n, "chunked": 1500 * n, "fused": 600 * n},
             "score_matrix_bytes": {"float64": 8 * n * n, "float32": 4 * n * n}} for n in (128, 256, 512)]
    return {"values": {"block": 128, "rows": rows}}


def multi30k_records():
    def runs(losses, bleus, parameters):
        return [{"seed": s, "val_loss": x, "bleu": b, "parameters": parameters} for s, (x, b) in enumerate(zip(losses, bleus))]
    base = {"values": {"runs": runs([3.3, 3.2, 3.4], [19.0, 20.0, 21.0], 1_693_696)}}
    arm = runs([3.1, 3.02, 3.18], [19.5, 20.1, 21.2], 1_690_624)
    record = {"values": {"runs": {"swiglu": arm},
                         "verdicts": verdicts({"swiglu": (arm, base["values"]["runs"])}, MULTI30K_METRICS)}}
    return record, base


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_figures_draw_in_both_languages(style, monkeypatch, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        figures = [after.plot_pre_ln(pre_ln_record()), after.plot_rope(rope_record()),
                   after.plot_memory(memory_record()).figure, after.draw_head_sharing(8, (8, 2, 1))]
        for fig in figures:
            fig.canvas.draw()
    pre_ln, rope, memory, sharing = figures
    # Pre-LN: two panels, a bar per norm and schedule, every seed a dot, the one diverged run an x at the top.
    assert len(pre_ln.axes) == 2 and all(sum(isinstance(p, Rectangle) for p in ax.patches) == 8 for ax in pre_ln.axes)
    crosses = [line for line in pre_ln.axes[1].lines if line.get_marker() == "x" and len(line.get_xdata())]
    assert len(crosses) == 1 and crosses[0].get_ydata()[0] > 2.5
    lower = "Pre-LN lower" if lang == "en" else "Pre-LN 更低"
    assert texts(pre_ln).count(lower) == 2  # the warm-up schedule, at both depths, beyond seed noise
    # RoPE: the trained positions shaded up to max_len + 1 (</s>), one line per arm over 21 positions.
    left, right = rope.axes
    assert [len(line.get_xdata()) for line in right.lines] == [21, 21, 2]  # the arms, then a guess among 10 symbols
    assert list(right.lines[2].get_ydata()) == [10, 10]
    (span,) = right.patches  # axvspan: a Rectangle in matplotlib >= 3.9, a Polygon before
    assert (span.get_x() + span.get_width() if isinstance(span, Rectangle) else max(span.get_xy()[:, 0])) == 11.5
    # Memory: the score matrix's line and five measured ones, log-log.
    ax = memory.axes[0]
    assert len(ax.lines) == 6 and ax.get_xscale() == ax.get_yscale() == "log"
    # Heads: every query head joined to one key/value head, 8 per panel.
    assert [len(ax.lines) for ax in sharing.axes] == [8, 8, 8]
    assert [sum(len(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection)) for ax in sharing.axes] == [16, 10, 9]
    assert png(figures[0]) == png(figures[0])


def test_head_sharing_refuses_groups_that_do_not_divide_the_heads(style):
    with pytest.raises(ValueError, match="kv_heads"):
        after.draw_head_sharing(8, (3,))


def test_a_multi30k_table_shows_the_means_and_the_verdicts_of_the_file(monkeypatch):
    record, base = multi30k_records()
    headers, rows = after.multi30k_rows(record, base, {"base": "ReLU", "swiglu": "SwiGLU"},
                                        [("width", {"base": "512", "swiglu": "341"})])
    assert headers[:2] == ["model", "width"] and len(headers) == 7
    assert rows[0] == ["ReLU", "512", "1,693,696", "3.30", "20.0", "—", "—"]
    judged = record["values"]["verdicts"]["swiglu"]
    assert rows[1][:5] == ["SwiGLU", "341", "1,690,624", "3.10", "20.3"]
    assert rows[1][5:] == [judged["val_loss"]["words"], judged["bleu"]["words"]]
    assert judged["val_loss"]["verdict"] == "better" and rows[1][5] == "beyond seed noise, better"  # about 0.2 lower on every seed
    monkeypatch.setenv("AIAYN_LANG", "zh")
    _, rows = after.multi30k_rows(record, base, {"base": "ReLU", "swiglu": "SwiGLU"})
    assert rows[1][-2:] == ["超出种子噪声，更好", "无定论"]


def test_the_decoder_only_table_has_a_row_per_task_and_model(monkeypatch):
    arms = {"encoder_decoder": copy_runs([0.5, 0.6], exact=0.9), "decoder_only": copy_runs([0.4, 0.45], exact=1.0)}
    record = {"values": {"runs": {"copy": arms, "reverse": arms},
                         "verdicts": verdicts({t: (arms["decoder_only"], arms["encoder_decoder"]) for t in ("copy", "reverse")},
                                              {"val_loss": True, "exact_match": False})}}
    headers, rows = after.decoder_only_rows(record)
    assert len(headers) == 7 and [r[:2] for r in rows] == [["copy", "encoder-decoder (paper)"], ["copy", "decoder-only"],
                                                           ["reverse", "encoder-decoder (paper)"], ["reverse", "decoder-only"]]
    assert rows[0][3:] == ["0.550", "90.0%", "—", "—"] and rows[1][3:5] == ["0.425", "100.0%"]
    assert rows[1][6] == "inconclusive"  # every seed moved by exactly 0.1: no spread, p = 1
    monkeypatch.setenv("AIAYN_LANG", "zh")
    headers, _ = after.decoder_only_rows(record)
    assert headers[4] == "完全匹配率" and headers[6] == "结论：完全匹配率"  # a rate, not "all correct"


def test_the_lab_tables_show_every_seed_the_tests_and_the_provenance(monkeypatch):
    record, _ = multi30k_records()
    headers, rows = after.verdict_rows(record["values"]["verdicts"], digits=2)
    v = record["values"]["verdicts"]["swiglu"]["val_loss"]
    assert headers[5:7] == ["p", "p (Holm)"] and rows[0][:5] == ["swiglu", "val_loss", "3.30, 3.20, 3.40", "3.10, 3.02, 3.18", "-0.20"]
    assert rows[0][5:] == [f"{v['p']:.3g}", f"{v['holm_p']:.3g}", "beyond seed noise, better"]
    runs = {"gqa": {"command": "python -m aiayn.experiments.after_gqa", "commit": "abc1234", "threads": 1,
                    "machine": "Intel(R) Xeon(R) Processor; 2 logical CPUs", "cpu_seconds": 1830.0}}
    _, rows = after.provenance_rows(runs)
    assert rows == [["`gqa.json`", "`python -m aiayn.experiments.after_gqa`", "abc1234", "Intel Xeon", 1, "30 min"]]
    monkeypatch.setenv("AIAYN_LANG", "zh")  # every header in Chinese, with full-width brackets
    assert after.verdict_rows(record["values"]["verdicts"])[0][5:7] == ["p", "p（Holm）"]
    assert after.provenance_rows(runs)[0][2] == "提交"


def test_load_reads_a_results_file_and_names_a_missing_one(tmp_path):
    record = {"values": {"x": 1}, "command": "c", "commit": "abc1234", "machine": "m", "threads": 1, "seconds": 1.0}
    (tmp_path / "memory.json").write_text(json.dumps(record))
    assert after.load("memory", tmp_path) == record
    with pytest.raises(FileNotFoundError, match="rope.json"):
        after.load("rope", tmp_path)


def test_the_detectable_table_says_what_each_inconclusive_comparison_would_need():
    import numpy as np

    from aiayn.stats import detectable_difference

    def runs(values):
        return [{"seed": s, "x": x} for s, x in enumerate(values)]
    base = runs([1.0, 2.0, 3.0])
    judged = verdicts({"clear": (runs([1.5, 2.5, 3.5]), base),        # every seed moved by 0.5: no spread
                       "noisy": (runs([1.2, 1.9, 3.5]), base),        # d = 0.2, -0.1, 0.5
                       "shifted": (runs([11.0, 12.1, 12.9]), base)},  # beyond seed noise: not a row
                      {"x": True})
    assert judged["shifted"]["x"]["verdict"] == "worse" and judged["noisy"]["x"]["verdict"] == "inconclusive"
    headers, rows = after.detectable_rows(judged)
    assert headers[5] == headers[7] == "among 3" and [r[:2] for r in rows] == [["clear", "x"], ["noisy", "x"]]
    assert rows[0][3:] == ["0.000", "0.000", "0.000", "—", "—"]
    s_d = float(np.std([0.2, -0.1, 0.5], ddof=1))
    assert rows[1][2:6] == ["+0.200", f"{s_d:.3f}", f"{detectable_difference(s_d, 3, paired=True):.3f}",
                            f"{detectable_difference(s_d, 3, paired=True, alpha=0.05 / 3):.3f}"]
    alone = int(rows[1][6])
    assert detectable_difference(s_d, alone, paired=True) <= 0.2 < detectable_difference(s_d, alone - 1, paired=True)
    assert rows[1][7] == "> 100" or int(rows[1][7]) > alone
    with pytest.raises(ValueError, match="most_seeds"):
        after.detectable_rows(judged, most_seeds=1)


def test_the_detectable_table_in_chinese_names_the_test(monkeypatch):
    def runs(values):
        return [{"seed": s, "x": x} for s, x in enumerate(values)]
    judged = verdicts({"noisy": (runs([1.2, 1.9, 3.5]), runs([1.0, 2.0, 3.0]))}, {"x": True})
    monkeypatch.setenv("AIAYN_LANG", "zh")
    headers, _ = after.detectable_rows(judged)
    assert headers[4:] == ["当前种子数下可检出的最小差：单独检验", "1 项中检验", "检出此差所需种子数：单独检验", "1 项中检验"]
