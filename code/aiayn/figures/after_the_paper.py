"""The part "After the paper": its results files read, drawn and tabled.

Each experiment of ``aiayn.experiments.after_*`` writes ``results/after_the_paper/<name>.json``
(``load``). A lesson shows one figure or one table per change, its verdicts in the course's words
(``verdict``); the lab notebook shows every seed, the tests' p-values and where the runs ran.

    plot_pre_ln(record)         validation loss of Post-LN and Pre-LN, per schedule and depth
    plot_rope(record)           copying within and beyond the trained lengths, per position
    plot_memory(record)         bytes attention holds against n: the paper, key blocks, fused
    draw_head_sharing(...)      which key/value head each query head reads: multi-head to multi-query
    multi30k_rows(...)          arms against the base on Multi30k: headers and rows of a table
    decoder_only_rows(record)   decoder-only against encoder-decoder on the copy and reverse tasks
    verdict_rows, provenance_rows   the lab notebook's tables
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from ..data.copy_task import FIRST_SYMBOL
from ..experiments.record import REPOSITORY, processor_name, read_results
from ..plotting import tr

RESULTS = REPOSITORY / "results" / "after_the_paper"
VERDICT_ZH = {"better": "超出种子噪声，更好", "worse": "超出种子噪声，更差", "inconclusive": "无定论"}
SCHEDULES = {"warmup": ("warm-up", "预热"), "no_warmup": ("no warm-up", "不预热"),
             "warmup_x4": ("warm-up, 4x rate", "预热，4 倍学习率"),
             "no_warmup_x4": ("no warm-up, 4x rate", "不预热，4 倍学习率")}
NORMS = {"post_ln": ("Post-LN (paper)", "Post-LN（论文）"), "pre_ln": ("Pre-LN", "Pre-LN")}
POSITIONAL = {"sinusoidal": ("sinusoids (paper)", "正弦编码（论文）"), "rotary": ("rotary (RoPE)", "旋转（RoPE）")}


def load(name: str, folder=None) -> dict:
    """The results file ``<folder>/<name>.json`` (default: results/after_the_paper), checked."""
    return read_results((folder or RESULTS) / f"{name}.json")


def verdict(v: dict) -> str:
    """A verdict of ``after_common.verdicts`` in the page's language."""
    return tr(v["words"], VERDICT_ZH[v["verdict"]])


def mean(values) -> float:
    return float(np.mean(values))


def _finite_or_top(values, top: float) -> tuple[np.ndarray, np.ndarray]:
    values = np.asarray(values, dtype=float)
    bad = ~np.isfinite(values)
    return np.where(bad, top, values), bad


def plot_pre_ln(record: dict):
    """Two panels (one per depth): every seed's validation loss under each schedule, Post-LN left
    of Pre-LN, their means as bars; above each pair, the verdict. A run whose loss is not finite
    (diverged) is an x at the top."""
    v = record["values"]
    depths, schedules = v["depths"], list(v["schedules"])
    fig, axes = plt.subplots(1, len(depths), figsize=(10, 3.8), sharey=True, layout="constrained")
    finite = [x for runs in v["runs"].values() for arm in runs.values() for r in arm
              if math.isfinite(r["val_loss"]) for x in [r["val_loss"]]]
    top = 1.15 * max(finite)
    diverged = False
    for k, (ax, depth) in enumerate(zip(np.atleast_1d(axes), depths)):
        for i, schedule in enumerate(schedules):
            name = f"{schedule}_{depth}layers"
            for j, (norm, colour) in enumerate((("post_ln", "#4c72b0"), ("pre_ln", "#dd8452"))):
                losses, bad = _finite_or_top([r["val_loss"] for r in v["runs"][name][norm]], top)
                x = i + (j - 0.5) * 0.36
                ax.bar(x, losses[~bad].mean() if (~bad).any() else top, width=0.34, color=colour, alpha=0.35,
                       label=tr(*NORMS[norm]) if i == k == 0 else None)
                ax.plot(np.full(len(losses), x)[~bad], losses[~bad], "o", color=colour, ms=4)
                ax.plot(np.full(len(losses), x)[bad], losses[bad], "x", color="black", ms=7,
                        label=tr("diverged (no finite loss)", "发散（损失不是有限值）") if bad.any() and not diverged else None)
                diverged |= bool(bad.any())
            judged = v["verdicts"].get(name, {}).get("val_loss")
            if judged:
                words = {"better": ("Pre-LN lower", "Pre-LN 更低"), "worse": ("Pre-LN higher", "Pre-LN 更高"),
                         "inconclusive": ("inconclusive", "无定论")}[judged["verdict"]]
                ax.text(i, 1.02 * top, tr(*words), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(schedules)), [tr(*SCHEDULES[s]) for s in schedules], fontsize=8)
        ax.set_title(tr(f"{depth} + {depth} layers", f"{depth} + {depth} 层"), fontsize=10)
        ax.set_ylim(0, 1.12 * top)
    np.atleast_1d(axes)[0].set_ylabel(tr("validation loss (nats per token)", "验证集损失（每个词元的奈特数）"))
    fig.legend(loc="outside lower center", ncols=3, fontsize=9)
    return fig


def plot_rope(record: dict):
    """Left: the share of held-out sequences copied exactly, within the trained lengths (1-10) and
    beyond (11-20), per arm (bars: the mean; dots: seeds). Right: beyond the trained lengths, the
    share of target tokens predicted right under teacher forcing, position by position (mean over
    seeds), beside a guess; the positions a training target reaches are shaded."""
    v = record["values"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    trained = v["task"]["max_len"] + 1  # a target of max_len symbols and </s>
    right.axvspan(0.5, trained + 0.5, color="#eeeeee", label=tr("positions seen in training", "训练中见过的位置"))
    for j, (arm, colour) in enumerate((("sinusoidal", "#4c72b0"), ("rotary", "#dd8452"))):
        runs = v["runs"][arm]
        for i, key in enumerate(("exact_within", "exact_beyond")):
            shares = 100 * np.array([r[key] for r in runs])
            x = i + (j - 0.5) * 0.36
            left.bar(x, shares.mean(), width=0.34, color=colour, alpha=0.35, label=tr(*POSITIONAL[arm]) if i == 0 else None)
            left.plot(np.full(len(shares), x), shares, "o", color=colour, ms=4)
        accuracy = 100 * np.mean([r["position_accuracy_beyond"] for r in runs], axis=0)
        right.plot(np.arange(1, len(accuracy) + 1), accuracy, "o-", color=colour, ms=3, label=tr(*POSITIONAL[arm]))
    symbols = v["task"]["vocab_size"] - FIRST_SYMBOL
    right.axhline(100 / symbols, color="gray", ls=":", label=tr(f"a guess among the {symbols} symbols", f"在 {symbols} 个符号中随机猜"))
    lo, hi = v["beyond"]["min_len"], v["beyond"]["max_len"]
    left.set_xticks([0, 1], [tr(f"lengths 1-{v['task']['max_len']} (trained)", f"长度 1-{v['task']['max_len']}（训练过）"),
                             tr(f"lengths {lo}-{hi} (never seen)", f"长度 {lo}-{hi}（从未见过）")])
    left.set_ylabel(tr("copied exactly (%)", "完全复制正确（%）"))
    left.set_ylim(0, 105)
    left.legend(fontsize=8, loc="upper right")
    right.set_xlabel(tr(f"target position (sequences of {lo}-{hi} symbols)", f"目标位置（{lo}-{hi} 个符号的序列）"))
    right.set_ylabel(tr("tokens right (%)", "预测正确的词元（%）"))
    right.set_ylim(0, 105)
    right.legend(fontsize=8, loc="lower left")
    return fig


def plot_memory(record: dict, ax=None):
    """Peak bytes against the sequence length n (log-log): the paper's function, the online
    softmax over key blocks (NumPy float64, PyTorch float32) and PyTorch's fused kernel, beside
    the n x n score matrix in float64."""
    v = record["values"]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    n = [r["n"] for r in v["rows"]]
    mib = lambda path: [r[path[0]][path[1]] / 2**20 for r in v["rows"]]  # noqa: E731
    lines = [(("numpy_float64", "paper"), "o-", "#4c72b0", ("NumPy float64, the paper's function", "NumPy float64，论文的函数")),
             (("numpy_float64", "chunked"), "s-", "#dd8452", (f"NumPy float64, key blocks of {v['block']}", f"NumPy float64，每块 {v['block']} 个键")),
             (("torch_float32", "paper"), "o--", "#4c72b0", ("PyTorch float32, the paper's function", "PyTorch float32，论文的函数")),
             (("torch_float32", "chunked"), "s--", "#dd8452", (f"PyTorch float32, key blocks of {v['block']}", f"PyTorch float32，每块 {v['block']} 个键")),
             (("torch_float32", "fused"), "^--", "#55a868", ("PyTorch float32, F.scaled_dot_product_attention", "PyTorch float32，F.scaled_dot_product_attention"))]
    ax.loglog(n, [r["score_matrix_bytes"]["float64"] / 2**20 for r in v["rows"]], ":", color="gray",
              label=tr("one n x n score matrix, float64", "一个 n × n 分数矩阵，float64"))
    for path, style, colour, label in lines:
        ax.loglog(n, mib(path), style, color=colour, ms=4, label=tr(*label))
    ax.set_xticks(n, [str(x) for x in n])
    ax.minorticks_off()
    ax.set_xlabel(tr("sequence length n (one head, d_k = 64)", "序列长度 n（一个头，d_k = 64）"))
    ax.set_ylabel(tr("peak memory (MiB)", "峰值内存（MiB）"))
    ax.legend(fontsize=7)
    return ax


def draw_head_sharing(num_heads: int = 8, kv_heads=(8, 2, 1)):
    """One panel per number of key/value heads G: the h query heads on top, the G key/value heads
    below (what the cache keeps), a line from query head i to the head it reads, i // (h / G)."""
    fig, axes = plt.subplots(1, len(kv_heads), figsize=(3.4 * len(kv_heads), 2.6), layout="constrained")
    names = {num_heads: ("multi-head (paper)", "多头（论文）"), 1: ("multi-query", "多查询")}
    for ax, g in zip(np.atleast_1d(axes), kv_heads):
        if num_heads % g:
            raise ValueError(f"kv_heads: {g} does not divide num_heads={num_heads}")
        group = num_heads // g
        kv_x = [(j + 0.5) * num_heads / g - 0.5 for j in range(g)]  # each under its group's middle
        for i in range(num_heads):
            ax.plot([i, kv_x[i // group]], [1, 0], color="#999999", lw=0.8, zorder=1)
            ax.scatter(i, 1, s=120, marker="s", color="#4c72b0", zorder=2)
        ax.scatter(kv_x, [0] * g, s=120, marker="s", color="#dd8452", zorder=2)
        ax.text(-0.6, 1, "Q", ha="right", va="center")
        ax.text(-0.6, 0, "K, V", ha="right", va="center")
        label = names.get(g, ("grouped-query", "分组查询"))
        ax.set_title(tr(f"{label[0]}: {g} K/V", f"{label[1]}：{g} 个键/值头"), fontsize=10)
        ax.set_xlim(-1.6, num_heads - 0.4)
        ax.set_ylim(-0.4, 1.4)
        ax.axis("off")
    return fig


def multi30k_rows(record: dict, base: dict, labels: dict, extra=()) -> tuple[list, list]:
    """The base and each arm of a Multi30k file: parameters, mean validation loss and BLEU over the
    seeds, and each arm's verdicts. ``labels``: "base" and each arm -> its name on the page;
    ``extra``: (header, {"base" or arm: cell}) columns put after the name."""
    headers = [tr("model", "模型"), *(h for h, _ in extra), tr("parameters", "参数量"),
               tr("validation loss", "验证集损失"), "BLEU", tr("verdict: loss", "结论：损失"), tr("verdict: BLEU", "结论：BLEU")]
    runs = {"base": base["values"]["runs"], **record["values"]["runs"]}
    rows = []
    for name, label in labels.items():
        judged = record["values"]["verdicts"].get(name)
        rows.append([label, *(cells[name] for _, cells in extra), f"{runs[name][0]['parameters']:,}",
                     f"{mean([r['val_loss'] for r in runs[name]]):.2f}", f"{mean([r['bleu'] for r in runs[name]]):.1f}",
                     verdict(judged["val_loss"]) if judged else "—", verdict(judged["bleu"]) if judged else "—"])
    return headers, rows


def decoder_only_rows(record: dict) -> tuple[list, list]:
    """Per task and model: parameters, mean validation loss and exact match, the verdicts."""
    v = record["values"]
    headers = [tr("task", "任务"), tr("model", "模型"), tr("parameters", "参数量"), tr("validation loss", "验证集损失"),
               tr("copied exactly", "完全匹配率"), tr("verdict: loss", "结论：损失"), tr("verdict: exact", "结论：完全匹配率")]
    names = {"copy": tr("copy", "复制"), "reverse": tr("reverse", "反转"),
             "encoder_decoder": tr("encoder-decoder (paper)", "编码器-解码器（论文）"), "decoder_only": tr("decoder-only", "仅解码器")}
    rows = []
    for task, arms in v["runs"].items():
        for arm, runs in arms.items():
            judged = v["verdicts"].get(task) if arm == "decoder_only" else None
            rows.append([names[task], names[arm], f"{runs[0]['parameters']:,}", f"{mean([r['val_loss'] for r in runs]):.3f}",
                         f"{100 * mean([r['exact_match'] for r in runs]):.1f}%",
                         verdict(judged["val_loss"]) if judged else "—", verdict(judged["exact_match"]) if judged else "—"])
    return headers, rows


def _values(xs, digits: int) -> str:
    return ", ".join(f"{x:.{digits}f}" for x in xs)


def verdict_rows(verdicts: dict, digits: int = 3) -> tuple[list, list]:
    """The lab notebook's table of ``after_common.verdicts``' output ({comparison: {metric: ...}}):
    per comparison and metric, the base's and the arm's value seed by seed, the mean paired
    difference, the paired t-test's p, Holm's p over the family and the verdict."""
    headers = [tr("comparison", "比较"), tr("metric", "指标"), tr("base, by seed", "对照，逐个种子"),
               tr("arm, by seed", "改动，逐个种子"), tr("mean difference", "平均差"), "p", tr("p (Holm)", "p（Holm）"), tr("verdict", "结论")]
    rows = [[name, metric, _values(v["base"], digits), _values(v["arm"], digits), f"{v['difference']:+.{digits}f}",
             f"{v['p']:.3g}", f"{v['holm_p']:.3g}", verdict(v)]
            for name, by_metric in verdicts.items() for metric, v in by_metric.items()]
    return headers, rows


def provenance_rows(records: dict) -> tuple[list, list]:
    """One row per results file: command, commit, processor, threads, CPU time."""
    headers = [tr("file", "文件"), tr("command", "命令"), tr("commit", "提交"), tr("processor", "处理器"), tr("threads", "线程"),
               tr("CPU time", "CPU 时间")]
    rows = [[f"`{name}.json`", f"`{r['command']}`", r["commit"], processor_name(r), r["threads"],
             tr(f"{r['cpu_seconds'] / 60:.0f} min", f"{r['cpu_seconds'] / 60:.0f} 分钟")] for name, r in records.items()]
    return headers, rows


def detectable_rows(verdicts: dict, digits: int = 3, most_seeds: int = 100) -> tuple[list, list]:
    """The lab notebook's table of what each inconclusive comparison of ``after_common.verdicts``'
    output would need (``aiayn.stats.detectable_difference``, paired): its mean difference, the
    spread s_d of its seed-by-seed differences, the smallest mean difference that would pass with
    these seeds, alone (5 %) and at Holm's strictest threshold over the file's m comparisons
    (5 % / m), and the seeds a side at which the observed difference would pass at each level
    were s_d to stay as measured ("> most_seeds" beyond; "—" where s_d or the difference is 0)."""
    from ..stats import ALPHA, detectable_difference

    if not isinstance(most_seeds, int) or most_seeds < 2:
        raise ValueError(f"most_seeds: needs an integer of at least 2, got {most_seeds!r}")
    m = sum(len(by_metric) for by_metric in verdicts.values())

    def seeds(s_d: float, difference: float, alpha: float) -> str:
        if s_d == 0 or difference == 0:
            return "—"
        n = next((n for n in range(2, most_seeds + 1)
                  if detectable_difference(s_d, n, paired=True, alpha=alpha) <= abs(difference)), None)
        return str(n) if n else f"> {most_seeds}"

    headers = [tr("comparison", "比较"), tr("metric", "指标"), tr("mean difference", "平均差"), "s_d",
               tr("passes at these seeds: alone", "当前种子数下可检出的最小差：单独检验"), tr(f"among {m}", f"{m} 项中检验"),
               tr("seeds for this difference: alone", "检出此差所需种子数：单独检验"), tr(f"among {m}", f"{m} 项中检验")]
    rows = []
    for name, by_metric in verdicts.items():
        for metric, v in by_metric.items():
            if v["verdict"] != "inconclusive":
                continue
            d = np.subtract(v["arm"], v["base"])
            s_d, n = float(np.std(d, ddof=1)), len(d)
            rows.append([name, metric, f"{v['difference']:+.{digits}f}", f"{s_d:.{digits}f}",
                         *(f"{detectable_difference(s_d, n, paired=True, alpha=a):.{digits}f}" for a in (ALPHA, ALPHA / m)),
                         *(seeds(s_d, v["difference"], a) for a in (ALPHA, ALPHA / m))])
    return headers, rows
