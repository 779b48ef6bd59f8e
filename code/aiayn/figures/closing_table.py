"""The closing table of the part "After the paper": each later choice against the paper's, one row
each, every cell with a number read from the results files of ``results/after_the_paper``.

    records = {name: after_the_paper.load(name) for name in CLOSING_FILES}
    headers, rows = closing_rows(records)     # change, year, what it buys, what it costs, verdict
    aiayn.show.table(headers, rows)

"Buys" and "costs" state a measured or counted quantity of the files (a score, parameters, cache
bytes, bytes held, operators), the change first and the paper's choice after "against"; a score
that was compared across seeds carries its own verdict in brackets, so that no nominal gain reads
as a measured one; the verdict column counts the file's verdicts (``after_common.verdicts``) in
the course's words.
"""

from __future__ import annotations

import numpy as np

from ..plotting import tr
from .after_the_paper import SCHEDULES, VERDICT_ZH, mean, verdict

CLOSING_FILES = ("pre_ln", "rmsnorm", "swiglu", "multi30k_base", "rope", "gqa", "memory", "decoder_only")
KINDS = ("better", "worse", "inconclusive")


def tally(verdicts: dict) -> str:
    """How many comparisons of a file got each verdict: 'beyond seed noise, better: 1 of 8;
    inconclusive: 7 of 8'. ``verdicts``: {comparison: {metric: verdict}} or {metric: verdict}."""
    found = [v for by_metric in verdicts.values()
             for v in (by_metric.values() if "verdict" not in by_metric else [by_metric])]
    if not found:
        raise ValueError("verdicts: holds no verdict")
    n = len(found)
    words = {"better": "beyond seed noise, better", "worse": "beyond seed noise, worse", "inconclusive": "inconclusive"}
    return tr("; ", "；").join(tr(f"{words[k]}: {c} of {n}", f"{VERDICT_ZH[k]}：{c}/{n}")
                               for k in KINDS for c in [sum(v["verdict"] == k for v in found)] if c)


def _judged(v: dict) -> str:
    """' (inconclusive)', ' (beyond seed noise, better)': a compared score's own verdict."""
    return tr(f" ({verdict(v)})", f"（{verdict(v)}）")


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _pre_ln(v: dict) -> tuple[str, str]:
    judged = {name: by_metric["val_loss"] for name, by_metric in v["verdicts"].items()}
    name = max(judged, key=lambda n: (judged[n]["verdict"] != "inconclusive", abs(judged[n]["difference"])))
    schedule, depth = name.rsplit("_", 1)
    depth = int(depth.removesuffix("layers"))
    runs = v["runs"][name]
    pre, post = (mean([r["val_loss"] for r in runs[arm]]) for arm in ("pre_ln", "post_ln"))
    extra = runs["pre_ln"][0]["parameters"] - runs["post_ln"][0]["parameters"]
    en, zh = SCHEDULES[schedule]
    return (tr(f"copy task, {en}, {depth} + {depth} layers: validation loss {pre:.2f} against {post:.2f}",
               f"复制任务，{zh}，{depth} + {depth} 层：验证集损失 {pre:.2f}，论文为 {post:.2f}") + _judged(judged[name]),
            tr(f"{extra:+,} parameters (a final LayerNorm per stack)", f"参数多 {extra:,} 个（每个堆叠末尾一个 LayerNorm）"))


def _multi30k(record: dict, base: dict, arm: str) -> tuple[float, float, float, float]:
    mine, theirs = record["values"]["runs"][arm], base["values"]["runs"]
    return (mean([r["val_loss"] for r in mine]), mean([r["val_loss"] for r in theirs]),
            mean([r["bleu"] for r in mine]), mean([r["bleu"] for r in theirs]))


def _rmsnorm(record: dict, base: dict) -> tuple[str, str]:
    c = record["values"]["costs"]
    arithmetic, parameters = c["arithmetic_per_element"], c["parameters_per_norm"]
    *_, bleu, bleu_base = _multi30k(record, base, "rms")
    said = _judged(record["values"]["verdicts"]["rms"]["bleu"])
    backward = {k: len(c["operators"][k]["backward"]) for k in ("rms", "layer")}
    return (tr(f"{arithmetic['rms']:.1f} operations per element against {arithmetic['layer']:.1f}, {parameters['rms']} "
               f"parameters per norm against {parameters['layer']}; Multi30k BLEU {bleu:.1f} against {bleu_base:.1f}{said}",
               f"每个元素 {arithmetic['rms']:.1f} 次运算，论文为 {arithmetic['layer']:.1f}；每个归一化层 {parameters['rms']} "
               f"个参数，论文为 {parameters['layer']}；Multi30k 上 BLEU {bleu:.1f}，论文为 {bleu_base:.1f}{said}"),
            tr(f"its backward runs {backward['rms']} PyTorch operators, LayerNorm's {backward['layer']} (this PyTorch, on a CPU); "
               "run time not measured",
               f"反向传播要调用 {backward['rms']} 个 PyTorch 算子，LayerNorm 为 {backward['layer']} 个（本课程所用的 PyTorch，CPU 上）；"
               "运行时间没有测量"))


def _swiglu(record: dict, base: dict) -> tuple[str, str]:
    loss, loss_base, bleu, bleu_base = _multi30k(record, base, "swiglu")
    d_ff = record["values"]["arms"]["swiglu"]["d_ff"]
    params, params_base = record["values"]["runs"]["swiglu"][0]["parameters"], base["values"]["runs"][0]["parameters"]
    said = {k: _judged(v) for k, v in record["values"]["verdicts"]["swiglu"].items()}
    return (tr(f"Multi30k: validation loss {loss:.2f} against {loss_base:.2f}{said['val_loss']}, "
               f"BLEU {bleu:.1f} against {bleu_base:.1f}{said['bleu']}",
               f"Multi30k：验证集损失 {loss:.2f}，论文为 {loss_base:.2f}{said['val_loss']}；"
               f"BLEU {bleu:.1f}，论文为 {bleu_base:.1f}{said['bleu']}"),
            tr(f"three weight matrices per feed-forward layer, so d_ff = {d_ff} to keep the parameters "
               f"({params:,} against {params_base:,})",
               f"每个前馈层三个权重矩阵，d_ff 降到 {d_ff} 以保持参数量（{params:,}，论文为 {params_base:,}）"))


def _rope(v: dict) -> tuple[str, str]:
    w_rot, w_sin, b_rot, b_sin = (_percent(mean([r[key] for r in v["runs"][arm]]))
                                  for key in ("exact_within", "exact_beyond") for arm in ("rotary", "sinusoidal"))
    lo, hi, top = v["beyond"]["min_len"], v["beyond"]["max_len"], v["task"]["max_len"]
    said = {k: _judged(x) for k, x in v["verdicts"].items()}
    loss_rot, loss_sin = (mean([r["val_loss_beyond"] for r in v["runs"][arm]]) for arm in ("rotary", "sinusoidal"))
    return (tr(f"nothing beyond seed noise: lengths {lo}-{hi} (never trained on) copied exactly {b_rot} against "
               f"{b_sin}{said['exact_beyond']}",
               f"没有超出种子噪声的收益：长度 {lo}-{hi}（从未训练过）完全复制正确 {b_rot}，论文为 {b_sin}{said['exact_beyond']}"),
            tr(f"lengths 1-{top} (trained on): copied exactly {w_rot} against {w_sin}{said['exact_within']}; "
               f"lengths {lo}-{hi}: validation loss {loss_rot:.2f} against {loss_sin:.2f}{said['val_loss_beyond']}",
               f"长度 1-{top}（训练过）：完全复制正确 {w_rot}，论文为 {w_sin}{said['exact_within']}；"
               f"长度 {lo}-{hi}：验证集损失 {loss_rot:.2f}，论文为 {loss_sin:.2f}{said['val_loss_beyond']}"))


def _gqa(record: dict, base: dict) -> tuple[str, str]:
    runs = record["values"]["runs"]
    cache = {arm: int(runs[arm][0]["cache_bytes_per_token_and_layer"]["self"]) for arm in runs}
    cache_base = int(base["values"]["runs"][0]["cache_bytes_per_token_and_layer"]["self"])
    heads = {arm: record["values"]["arms"][arm]["num_kv_heads"] for arm in runs}
    scores = {arm: _multi30k(record, base, arm) for arm in runs}
    loss, bleu = {a: x[0] for a, x in scores.items()}, {a: x[2] for a, x in scores.items()}
    loss_base = mean([r["val_loss"] for r in base["values"]["runs"]])
    bleu_base = mean([r["bleu"] for r in base["values"]["runs"]])
    said = {arm: {k: _judged(v) for k, v in record["values"]["verdicts"][arm].items()} for arm in runs}
    return (tr("cache bytes per token and self-attention layer: "
               + ", ".join(f"{cache[a]:,} with {heads[a]} K/V head{'s' * (heads[a] > 1)}" for a in runs)
               + f", against {cache_base:,}",
               "每个词元、每个自注意力层缓存的字节数：" + "，".join(f"{heads[a]} 个键/值头 {cache[a]:,}" for a in runs)
               + f"，论文为 {cache_base:,}"),
            tr("Multi30k, " + "; ".join(f"{heads[a]} K/V head{'s' * (heads[a] > 1)}: validation loss {loss[a]:.2f}"
                                        f"{said[a]['val_loss']}, BLEU {bleu[a]:.1f}{said[a]['bleu']}" for a in runs)
               + f"; against {loss_base:.2f} and {bleu_base:.1f}",
               "Multi30k 上，" + "；".join(f"{heads[a]} 个键/值头：验证集损失 {loss[a]:.2f}{said[a]['val_loss']}，"
                                         f"BLEU {bleu[a]:.1f}{said[a]['bleu']}" for a in runs)
               + f"；论文为 {loss_base:.2f} 和 {bleu_base:.1f}"))


def _memory(v: dict) -> tuple[str, str, str]:
    mib = lambda b: f"{b / 2**20:.3g} MiB"  # noqa: E731
    last = v["rows"][-1]
    n, numpy, torch = last["n"], last["numpy_float64"], last["torch_float32"]
    # the fused kernel's count sees the tensors it returns, not its scratch space (modern_attention)
    buys = tr(f"peak memory at n = {n:,}: {mib(numpy['chunked'])} over key blocks against {mib(numpy['paper'])} "
              f"(NumPy float64); PyTorch float32: key blocks {mib(torch['chunked'])}, the fused kernel's returned "
              f"tensors {mib(torch['fused'])}, against {mib(torch['paper'])}",
              f"n = {n:,} 时的峰值内存：按键分块 {mib(numpy['chunked'])}，论文为 {mib(numpy['paper'])}（NumPy float64）；"
              f"PyTorch float32：按键分块 {mib(torch['chunked'])}，融合内核返回的张量 {mib(torch['fused'])}，"
              f"论文为 {mib(torch['paper'])}")
    more = [r for r in v["rows"] if r["numpy_float64"]["chunked"] > r["numpy_float64"]["paper"]]
    costs = tr(f"a loop over blocks of {v['block']} keys", f"对每块 {v['block']} 个键循环")
    if more:
        r = more[0]
        costs += tr(f"; more at n = {r['n']}: {mib(r['numpy_float64']['chunked'])} against {mib(r['numpy_float64']['paper'])}",
                    f"；n = {r['n']} 时反而更多：{mib(r['numpy_float64']['chunked'])}，论文为 {mib(r['numpy_float64']['paper'])}")
    worst = {k: max(r["max_difference_from_paper"][k] for r in v["rows"]) for k in ("numpy_chunked", "torch_chunked", "torch_fused")}
    if worst["numpy_chunked"] >= 1e-12 or max(worst["torch_chunked"], worst["torch_fused"]) >= 1e-5:
        raise ValueError(f"memory: the outputs differ from the paper's function's by {max(worst.values()):.2g}")
    verdict = tr("no seeds to judge: a count; the outputs agree with the paper's to float64 rounding (NumPy) "
                 "and to float32 rounding (PyTorch)",
                 "无需按种子判断：这是计数；输出与论文的函数一致，NumPy 在 float64 舍入误差内，PyTorch 在 float32 舍入误差内")
    return buys, costs, verdict


def _decoder_only(v: dict) -> tuple[str, str]:
    exact = {task: {arm: _percent(mean([r["exact_match"] for r in runs])) for arm, runs in arms.items()}
             for task, arms in v["runs"].items()}
    names = {"copy": ("copy", "复制"), "reverse": ("reverse", "反转")}
    ed, do = v["models"]["encoder_decoder"], v["models"]["decoder_only"]
    p_ed, p_do = v["parameters"]["encoder_decoder"], v["parameters"]["decoder_only"]
    said = {task: _judged(v["verdicts"][task]["exact_match"]) for task in exact}
    return (tr("one stack, one sequence; nothing beyond seed noise in copying exactly: "
               + "; ".join(f"{names[t][0]} {e['decoder_only']} against {e['encoder_decoder']}{said[t]}" for t, e in exact.items()),
               "一个堆叠、一条序列；完全匹配率的差异没有超出种子噪声："
               + "；".join(f"{names[t][1]} {e['decoder_only']}，论文为 {e['encoder_decoder']}{said[t]}" for t, e in exact.items())),
            tr(f"the source read under the causal mask too; {do['num_layers']} layers (d_ff = {do['d_ff']}) for "
               f"{ed['num_layers']} + {ed['num_layers']} (d_ff = {ed['d_ff']}) to hold the parameters ({p_do:,} against {p_ed:,})",
               f"源序列也在因果掩码下读；{do['num_layers']} 层（d_ff = {do['d_ff']}），论文为 {ed['num_layers']} + "
               f"{ed['num_layers']} 层（d_ff = {ed['d_ff']}），参数量相当（{p_do:,}，论文为 {p_ed:,}）"))


def closing_rows(records: dict) -> tuple[list, list]:
    """The part's closing table from ``records`` ({name: record} for every name of
    ``CLOSING_FILES``, as ``after_the_paper.load`` reads them): headers and one row per change."""
    missing = [name for name in CLOSING_FILES if name not in records]
    if missing:
        raise ValueError(f"records: lacks {', '.join(missing)} (needs every file of CLOSING_FILES)")
    base = records["multi30k_base"]
    v = {name: r["values"] for name, r in records.items()}
    memory_buys, memory_costs, memory_verdict = _memory(v["memory"])
    rows = [
        [tr("Pre-LN (normalise the branch)", "Pre-LN（在分支上归一化）"), tr("2019 (GPT-2); analysed 2020 (Xiong et al.)", "2019（GPT-2）；2020 年 Xiong 等人分析"),
         *_pre_ln(v["pre_ln"]), tally(v["pre_ln"]["verdicts"])],
        ["RMSNorm", tr("2019 (Zhang & Sennrich)", "2019（Zhang 和 Sennrich）"), *_rmsnorm(records["rmsnorm"], base),
         tally(v["rmsnorm"]["verdicts"])],
        ["SwiGLU", tr("2020 (Shazeer)", "2020（Shazeer）"), *_swiglu(records["swiglu"], base), tally(v["swiglu"]["verdicts"])],
        [tr("rotary positions (RoPE)", "旋转位置编码（RoPE）"), tr("2021 (Su et al.)", "2021（Su 等人）"), *_rope(v["rope"]),
         tally(v["rope"]["verdicts"])],
        [tr("grouped-query / multi-query attention", "分组查询 / 多查询注意力"),
         tr("2019 (Shazeer), 2023 (Ainslie et al.)", "2019（Shazeer）、2023（Ainslie 等人）"), *_gqa(records["gqa"], base),
         tally(v["gqa"]["verdicts"])],
        [tr("attention over key blocks, fused kernels", "按键分块的注意力、融合内核"),
         tr("2021 (Rabe & Staats), 2022 (Dao et al.)", "2021（Rabe 和 Staats）、2022（Dao 等人）"),
         memory_buys, memory_costs, memory_verdict],
        [tr("decoder-only", "仅解码器"), tr("2018 (Liu et al.; Radford et al.)", "2018（Liu 等人；Radford 等人）"), *_decoder_only(v["decoder_only"]),
         tally(v["decoder_only"]["verdicts"])],
    ]
    headers = [tr("change", "改动"), tr("year", "年份"), tr("what it buys on these tasks", "在这些任务上的收益"),
               tr("what it costs", "代价"), tr("verdict", "结论")]
    return headers, rows
