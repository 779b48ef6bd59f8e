"""The one checklist of the practice chapters: what to check before trusting a Transformer.

The common-mistakes chapter shows each mistake failing and displays the list from here (a
hidden-input cell calls ``show_checklist()``); the from-scratch chapter, which comes before it,
links there. There is one list, in English and in Chinese. Formulas are written in plain Unicode (QKᵀ/√d_k), not as $...$ math:
the book renders a Markdown output as CommonMark, where math would show as raw dollars.

Each item names where a reader sees the mistake happen: the sections of the common-mistakes
chapter (``mistakes``) and the plausible wrong files in ``tests/wrong_solutions/`` that the
graders must reject (``wrong_solutions``; tests/test_exercises.py runs every one of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from .plotting import current_language


@dataclass(frozen=True)
class Item:
    en: str
    zh: str
    mistakes: tuple[int, ...] = ()  # section numbers of the common-mistakes chapter
    wrong_solutions: tuple[str, ...] = ()  # file stems in tests/wrong_solutions/


ITEMS: tuple[Item, ...] = (
    Item("Scores are QKᵀ/√d_k: the keys transposed on their last two axes (`-1, -2`, not a fixed "
         "rank), divided by √d_k (not by d_k, not forgotten). Test with sizes that all differ, "
         "T_q ≠ T_k ≠ d_k, where a wrong transpose cannot hide.",
         "分数是 QKᵀ/√d_k：转置的是键的最后两个轴（`-1, -2`，不要写死维数），再除以 √d_k"
         "（不是 d_k，也不能漏掉）。用各个尺寸互不相同的形状测试，T_q ≠ T_k ≠ d_k，转置错了就藏不住。",
         (2, 4), ("sdpa_missing_scale", "sdpa_divides_by_d_k")),
    Item("Softmax over the keys (the last axis), after subtracting each row's maximum and without "
         "writing into its input: every query's weights sum to 1.",
         "softmax 作用在键上（最后一个轴），先减去每行的最大值，也不改写输入：每个查询的权重之和为 1。",
         (5,), ("sdpa_softmax_wrong_axis", "masked_softmax_no_max_shift", "masked_softmax_in_place")),
    Item("Heads: `(B, T, d_model)` → `(B, T, H, d_k)` → transpose → `(B, H, T, d_k)`, and back "
         "with a transpose and `.reshape` (`.view` after a transpose fails); one batched product "
         "for all heads, no loop over them.",
         "多头：`(B, T, d_model)` → `(B, T, H, d_k)` → 转置 → `(B, H, T, d_k)`；合并时先转置再 "
         "`.reshape`（转置之后 `.view` 会报错）；所有头用一次批量乘法，不对头循环。",
         (1, 3), ("mha_split_heads_without_transpose",)),
    Item("One mask convention: boolean, `True` = may attend; anything else is refused, not guessed at.",
         "只有一种掩码约定：布尔型，`True` 表示可以关注；其他写法一律拒绝，而不是去猜。",
         (6,), ("sdpa_inverted_mask",)),
    Item("A padding mask has shape `(B, 1, 1, T_k)`: it hides keys, never queries. The encoder uses "
         "it alone: changing a later token must change the earlier outputs.",
         "填充掩码的形状是 `(B, 1, 1, T_k)`：它屏蔽的是键，从不屏蔽查询。编码器只用它：改变后面的词元，"
         "前面位置的输出必须随之改变。",
         (7, 10)),
    Item("A query whose keys are all masked gets zero weights and a zero output: not NaN (from "
         "−∞), not a uniform row (from −10⁹). Test that row.",
         "所有键都被屏蔽的查询，权重和输出都是零：不是 NaN（来自 −∞），也不是均匀的一行"
         "（来自 −10⁹）。专门测试这一行。",
         (8,), ("masked_softmax_nan_row", "sdpa_large_negative_fill")),
    Item("The causal mask lets position i see the positions j ≤ i, itself included; the target mask is "
         "padding AND causal. Changing a future token must not change an earlier output.",
         "因果掩码让位置 i 看到 j ≤ i 的位置，包括它自己；目标掩码是填充掩码与因果掩码取“与”。"
         "改变未来的词元，不能改变前面的输出。",
         (9,), ("causal_mask_blocks_diagonal", "causal_mask_sees_next_token", "target_mask_or")),
    Item("Positional encoding: sine on the even columns, cosine on the odd ones, exponent "
         "2i/d_model with i the index of the pair.",
         "位置编码：偶数列用正弦，奇数列用余弦，指数是 2i/d_model，i 是“对”的序号。",
         (), ("positional_sin_cos_swapped",)),
    Item("Embeddings are multiplied by √d_model before the positions are added.",
         "嵌入先乘以 √d_model，再加上位置编码。",
         (), ("transformer_no_embedding_scale",)),
    Item("LayerNorm divides by √(σ² + ε) with the biased variance; compare it "
         "with `nn.LayerNorm` on inputs of tiny variance as well.",
         "层归一化除以 √(σ² + ε)，方差用有偏估计；与 `nn.LayerNorm` 比较时，"
         "也要用方差极小的输入。",
         (11,), ("layer_norm_std_plus_eps", "layer_norm_unbiased_variance")),
    Item("The paper is Post-LN, LayerNorm(x + Sublayer(x)); Pre-LN is a later "
         "variant with a final LayerNorm per stack. One order for both stacks.",
         "论文是 Post-LN，即 LayerNorm(x + Sublayer(x))；Pre-LN 是后来的变体，"
         "每个层堆叠末尾多一个层归一化。两个层堆叠用同一种顺序。",
         (12, 13), ("encoder_layer_pre_ln",)),
    Item("Cross-attention takes its queries from the decoder and its keys and values from the "
         "encoder output.",
         "交叉注意力的查询来自解码器，键和值来自编码器的输出。",
         (), ("decoder_cross_attention_ignores_memory",)),
    Item("Greedy decoding reads the logits of the last position, stops a row at `</s>` and runs "
         "the encoder once.",
         "贪心解码读取最后一个位置的 logits，某一行生成 `</s>` 后就停下，编码器只运行一次。",
         (), ("greedy_decode_first_position", "greedy_decode_ignores_eos", "greedy_decode_reencodes")),
    Item("Weights and inputs of zero mean; look at the entropy of the attention weights before "
         "trusting a test.",
         "权重和输入的均值为零；相信一个测试之前，先看看注意力权重的熵。",
         (14,)),
    Item("Train until the task is solved (exact-match decoding of held-out data), not for a fixed "
         "handful of steps.",
         "一直训练到任务解决为止（留出数据逐字解码正确），而不是训练固定的寥寥几步。",
         (15,)),
)


def checklist_markdown(lang: str | None = None) -> str:
    """The checklist as a numbered Markdown list in ``lang`` ('en' or 'zh'; default: the
    notebook's language, as ``aiayn.plotting.tr`` decides)."""
    lang = current_language() if lang is None else lang
    if lang not in ("en", "zh"):
        raise ValueError(f"lang must be 'en' or 'zh', not {lang!r}")
    return "\n".join(f"{i}. {getattr(item, lang)}" for i, item in enumerate(ITEMS, start=1))


def show_checklist(lang: str | None = None):
    """An ``IPython.display.Markdown`` of the list: the book and JupyterLab render it."""
    from IPython.display import Markdown

    return Markdown(checklist_markdown(lang))
