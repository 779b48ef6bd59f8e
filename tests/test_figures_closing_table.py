"""The closing table of "After the paper" (aiayn.figures.closing_table): one row per change, its
numbers read from the committed results files, in both languages; it refuses what it cannot read."""

import copy

import pytest

from aiayn.experiments.after_common import verdicts
from aiayn.figures import after_the_paper as after
from aiayn.figures.closing_table import CLOSING_FILES, closing_rows, tally


@pytest.fixture(scope="module")
def records():
    return {name: after.load(name) for name in CLOSING_FILES}


def test_a_row_per_change_with_the_files_numbers_in_english(records, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "en")
    headers, rows = closing_rows(records)
    assert headers == ["change", "year", "what it buys on these tasks", "what it costs", "verdict"]
    assert [r[0] for r in rows] == ["Pre-LN (normalise the branch)", "RMSNorm", "SwiGLU", "rotary positions (RoPE)",
                                    "grouped-query / multi-query attention", "attention over key blocks, fused kernels",
                                    "decoder-only"]
    assert all(len(r) == 5 and all(isinstance(c, str) and c for c in r) for r in rows)
    pre_ln, rms, swiglu, rope, gqa, memory, decoder_only = rows
    v = records["pre_ln"]["values"]
    post = after.mean([r["val_loss"] for r in v["runs"]["no_warmup_x4_2layers"]["post_ln"]])
    assert "no warm-up, 4x rate, 2 + 2 layers" in pre_ln[2] and f"against {post:.2f}" in pre_ln[2]
    assert pre_ln[3].startswith("+256 parameters") and pre_ln[4] == "beyond seed noise, better: 1 of 8; inconclusive: 7 of 8"
    assert "4.0 operations per element against 7.0" in rms[2] and "14 PyTorch operators" in rms[3]
    assert swiglu[4] == "beyond seed noise, better: 1 of 2; inconclusive: 1 of 2" and "d_ff = 341" in swiglu[3]
    assert "lengths 11-20" in rope[2] and "lengths 1-10" in rope[3]
    assert "512 with 2 K/V heads, 256 with 1 K/V head, against 1,024" in gqa[2]
    assert "n = 4,096" in memory[2] and memory[4].startswith("no seeds")
    assert decoder_only[4] == "inconclusive: 4 of 4" and "233,856 against 234,368" in decoder_only[3]
    # a compared score carries its own verdict: no nominal gain reads as a measured one
    assert pre_ln[2].endswith("(beyond seed noise, better)") and rms[2].endswith("BLEU 17.8 against 17.2 (inconclusive)")
    assert rope[2].startswith("nothing beyond seed noise") and rope[2].endswith("(inconclusive)")
    assert rope[3].endswith("(beyond seed noise, worse)") and "validation loss" in rope[3]
    assert memory[2].count("MiB") == 5 and "returned tensors" in memory[2] and "float32 rounding" in memory[4]
    assert pre_ln[1].startswith("2019 (GPT-2)") and "run time not measured" in rms[3]
    assert "1 K/V head: validation loss 3.36 (beyond seed noise, worse), BLEU 16.3 (inconclusive)" in gqa[3]
    assert decoder_only[2].count("(inconclusive)") == 2


def test_the_same_rows_in_chinese(records, monkeypatch):
    monkeypatch.setenv("AIAYN_LANG", "zh")
    headers, rows = closing_rows(records)
    assert headers == ["改动", "年份", "在这些任务上的收益", "代价", "结论"]
    assert rows[0][4] == "超出种子噪声，更好：1/8；无定论：7/8" and rows[-1][4] == "无定论：4/4"
    assert "论文为 1,024" in rows[4][2] and "against" not in " ".join(c for r in rows for c in r)
    assert rows[3][3].endswith("（超出种子噪声，更差）") and "inconclusive" not in " ".join(c for r in rows for c in r)
    assert rows[5][4].endswith("PyTorch 在 float32 舍入误差内") and "LayerNorm 为 1 个" in rows[1][3]
    assert rows[6][2].startswith("一个堆叠、一条序列；完全匹配率的差异没有超出种子噪声：复制 ")


def test_tally_counts_each_verdict_of_a_file():
    def runs(values):
        return [{"seed": s, "x": x} for s, x in enumerate(values)]
    base = runs([1.0, 2.0, 3.0])
    judged = verdicts({"worse": (runs([11.0, 12.1, 12.9]), base), "noisy": (runs([1.2, 1.9, 3.5]), base)}, {"x": True})
    assert tally(judged) == "beyond seed noise, worse: 1 of 2; inconclusive: 1 of 2"
    assert tally(judged["noisy"]) == "inconclusive: 1 of 1"  # {metric: verdict}
    with pytest.raises(ValueError, match="verdicts"):
        tally({})


def test_it_refuses_missing_files_and_outputs_that_disagree(records):
    with pytest.raises(ValueError, match="records: lacks gqa"):
        closing_rows({k: r for k, r in records.items() if k != "gqa"})
    broken = copy.deepcopy(records)
    broken["memory"]["values"]["rows"][0]["max_difference_from_paper"]["numpy_chunked"] = 0.1
    with pytest.raises(ValueError, match="memory"):
        closing_rows(broken)
