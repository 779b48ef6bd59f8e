"""The book's landing page, <out>/html/index.html: one bilingual page (no redirect) with

- links to the English and the Chinese book at the top,
- the chapter map: paper section -> chapter in both languages; titles are read from the
  built pages, sections from PAPER_SECTIONS below,
- the results table: numbers the chapters measured, read from the committed notebooks.
  A chapter records a number with a code cell
      from myst_nb import glue
      glue("params_base", count_parameters(base), display=False)
  and glue stores it as an output whose metadata names the key. A key that no chapter in
  the table of contents records yet shows as "pending",
- how to run the course: the page "Running the book" and the commands,

styled by the book's own stylesheets (read from the built English root page), no script.

tools/build_book.py calls write_landing() after both languages have built.
"""

from __future__ import annotations

import ast
import html
import json
import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

import yaml

# Chapter file name -> the part of the paper it covers. A chapter in a table of contents
# without an entry here stops the build (add it, or "—" when no section applies).
PAPER_SECTIONS = {
    "preface": "—",
    "running_the_book": "—",
    "paper_in_one_page": "Abstract, §1, §2, §4, §7",
    "architecture_overview": "§3, §3.1, Figure 1",
    "scaled_dot_product_attention": "§3.2.1",
    "multi_head_attention": "§3.2.2",
    "attention_in_the_model": "§3.2.3",
    "feed_forward_and_embeddings": "§3.3, §3.4",
    "positional_encoding": "§3.5",
    "residual_and_layer_norm": "§3.1, §5.4",
    "putting_it_together": "§3, Table 3",
    "why_self_attention": "§4, Table 1",
    "copy_task": "§5.3, §5.4, §6.1",
    "training_multi30k": "§5, §6.1",
    "multi30k_recipe": "§5, §6.2",
    "model_variations": "§6.2, Table 3",
    "constituency_parsing": "§6.3, Table 4",
    "from_scratch": "§3",
    "backpropagation": "§3, §5.3, §5.4",
    "fast_decoding": "§6.1",
    "common_mistakes": "§3",
    "lab_training_runs": "§5, §6.1",
    "lab_recipe": "§5, §6.2",
    "reading_a_result": "§6.2, Table 3",
    "lab_model_variations": "§6.2, Table 3",
    "lab_complexity": "§4, Table 1",
    "modern_layers": "§3.1, §3.3 (after 2017)",
    "rotary_positions": "§3.5 (after 2017)",
    "modern_attention": "§3.2.2 (after 2017)",
    "decoder_only": "§3 (after 2017)",
    "lab_after_the_paper": "after 2017",
}


@dataclass(frozen=True)
class Result:
    key: str  # the glue key a chapter records the number under
    en: str
    zh: str
    reference: str  # what the paper or theory says, "" when nothing comparable exists
    fmt: Callable[[object], str]


def _millions(n) -> str:
    return f"{n:,} ({n / 1e6:.1f}M)"


RESULTS = [
    Result("sdpa_var_qk_dk1024", "Variance of q·k at dₖ = 1024 (unit-variance components)",
           "dₖ = 1024 时 q·k 的方差（各分量方差为 1）", "1024 (= dₖ)", "{:.4g}".format),
    Result("sdpa_var_scaled_dk1024", "… after dividing by √dₖ", "……除以 √dₖ 之后",
           "1", "{:.2f}".format),
    Result("pe_shift_error_magnitude", "Largest |PE[pos+k] − M_k PE[pos]|, k and pos up to 1000",
           "|PE[pos+k] − M_k PE[pos]| 的最大值（k、pos 不超过 1000）",
           "0 (exact identity)", lambda v: f"~{v:.0e}"),
    Result("ln_xavier_postln_decoder_grad_ratio",
           "Post-LN, Xavier init: decoder gradient norm, last layer / first layer",
           "Post-LN、Xavier 初始化：解码器梯度范数，最后一层 / 第一层",
           "grows with depth (Xiong et al., 2020)", "{:.2g}".format),
    Result("ln_xavier_preln_decoder_grad_ratio",
           "Pre-LN, Xavier init: the same ratio", "Pre-LN、Xavier 初始化：同一比值",
           "", "{:.2g}".format),
    Result("params_base", "Parameters, base model (shared 37000-token vocabulary)",
           "参数量，基础模型（共享 37000 词表）", "65M (Table 3)", _millions),
    Result("params_big", "Parameters, big model", "参数量，big 模型", "213M (Table 3)", _millions),
    Result("copy_task_exact_match", "Copy task: exact match of greedy decoding on held-out sequences",
           "复制任务：贪心解码在留出序列上的完全匹配率", "target 100%", "{:.1%}".format),
    Result("multi30k_bleu", "Multi30k test_2016_flickr, En→De: BLEU, beam 4 (sacreBLEU, cased, 13a)",
           "Multi30k test_2016_flickr，英→德：BLEU，束宽 4（sacreBLEU，区分大小写，13a）",
           "goal ≥ 40 in 10 min on one H100; WMT14 base model 27.3 (other test set)",
           lambda v: f"{v[0]:.1f} ({v[1]}, {v[2]})"),
    Result("decoding_multi30k_laptop_seed1_adopted_test_bleu",
           "… an hour of training on 2 CPU threads (multi30k-laptop, seed 1; beam 4, α 0.6 kept on "
           "validation; the test set decoded once, under the seal: the lab notebook)",
           "……两个 CPU 线程训练一小时（multi30k-laptop，种子 1；束宽 4、α 0.6 在验证集上保留；"
           "测试集只解码一次，封存之后：见实验记录）",
           "goal: validation BLEU ≥ 38; Wu et al. (2021), tokenised: 41.02", "{:.1f}".format),
]

GLUE_PREFIX = "application/papermill.record/"


def toc_docnames(toc: Path) -> list[str]:
    """The root, then every `file` of a table of contents, in order."""
    def walk(entry):
        if isinstance(entry, dict):
            for key, value in entry.items():
                yield from [value] if key in ("root", "file") else walk(value)
        elif isinstance(entry, list):
            for item in entry:
                yield from walk(item)

    return list(walk(yaml.safe_load(toc.read_text(encoding="utf8"))))


def toc_parts(toc: Path) -> dict[str, str]:
    """docname -> the caption of the toc part that opens with it (the root: ''), so a list of
    chapters in toc order can show where each part begins."""
    data = yaml.safe_load(toc.read_text(encoding="utf8"))
    starts = {data["root"]: ""}
    for part in data.get("parts", []):
        if part.get("chapters"):
            starts[part["chapters"][0]["file"]] = part.get("caption", "")
    return starts


class _TitleParser(HTMLParser):
    def __init__(self):
        super().__init__()
        self.title, self._inside = "", False

    def handle_starttag(self, tag, attrs):
        self._inside = self._inside or tag == "title"

    def handle_endtag(self, tag):
        self._inside = self._inside and tag != "title"

    def handle_data(self, data):
        if self._inside:
            self.title += data


def page_title(page: Path) -> str:
    """The page's own title: Sphinx writes '<page> — <book>' into <title>."""
    parser = _TitleParser()
    parser.feed(page.read_text(encoding="utf8"))
    return parser.title.split(" \u2014 ")[0].strip()


def glued_values(notebook: Path) -> dict[str, object]:
    """key -> value of every myst_nb.glue() output in a committed notebook."""
    values = {}
    for cell in json.loads(notebook.read_text(encoding="utf8"))["cells"]:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if scrap:
                text = output["data"][scrap.get("mime_prefix", "") + "text/plain"]
                values[scrap["name"]] = ast.literal_eval("".join(text))
    return values


def measured_results(root: Path, docnames: dict[str, list[str]]) -> dict[str, tuple[object, str]]:
    """key -> (value, chapter name) over the notebooks in both tables of contents. The code
    cells of a chapter are identical in both languages, so must be the glued numbers."""
    found: dict[str, tuple[object, str]] = {}
    for en_doc, zh_doc in zip(docnames["en"], docnames["zh"]):
        name = en_doc.rsplit("/", 1)[-1]
        en_nb, zh_nb = root / f"{en_doc}.ipynb", root / f"{zh_doc}.ipynb"
        if not en_nb.is_file():
            continue
        en_values, zh_values = glued_values(en_nb), glued_values(zh_nb)
        if en_values != zh_values:
            raise ValueError(f"{name}: glued values differ between en and zh: {en_values} != {zh_values}")
        for key, value in en_values.items():
            if key in found:
                raise ValueError(f"glue key {key!r} is recorded by both {found[key][1]} and {name}")
            found[key] = (value, name)
    return found


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _zh(text: str) -> str:
    return f'<span lang="zh-CN">{_e(text)}</span>'


def chapter_titles(html_dir: Path, docnames: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """chapter name -> {lang: title read from the built page}, in table-of-contents order."""
    titles: dict[str, dict[str, str]] = {}
    for lang, docs in docnames.items():
        for doc in docs:
            titles.setdefault(doc.rsplit("/", 1)[-1], {})[lang] = page_title(html_dir / lang / f"{doc}.html")
    return titles


def _links(name: str, titles: dict[str, str]) -> tuple[str, str]:
    return (f'<a href="en/chapters/en/{name}.html">{_e(titles["en"])}</a>',
            f'<a href="zh/chapters/zh/{name}.html" lang="zh-CN">{_e(titles["zh"])}</a>')


def chapter_rows(titles: dict[str, dict[str, str]], parts: dict[str, dict[str, str]] | None = None) -> list[str]:
    """One row per chapter in reading order; ``parts`` (chapter name -> {lang: caption} of the
    part it opens) adds a heading row where each part of the book begins."""
    rows = []
    for name, both in titles.items():
        if name not in PAPER_SECTIONS:
            raise ValueError(f"tools/landing.py: add chapter {name!r} to PAPER_SECTIONS "
                             "(the paper section it covers, or '—')")
        caption = (parts or {}).get(name)
        if caption and caption.get("en"):
            rows.append(f'<tr class="part"><th colspan="3">{_e(caption["en"])} {_zh(caption["zh"])}</th></tr>')
        en, zh = _links(name, both)
        rows.append(f"<tr><td>{_e(PAPER_SECTIONS[name])}</td><td>{en}</td><td>{zh}</td></tr>")
    return rows


def result_rows(measured: dict[str, tuple[object, str]], titles: dict[str, dict[str, str]]) -> list[str]:
    rows = []
    for result in RESULTS:
        if result.key in measured:
            value, name = measured[result.key]
            shown, where = _e(result.fmt(value)), "<br>".join(_links(name, titles[name]))
        else:
            shown, where = 'pending <span lang="zh-CN">（待完成）</span>', "—"
        rows.append(
            f'<tr data-key="{_e(result.key)}"><td>{_e(result.en)}<br>{_zh(result.zh)}</td>'
            f'<td class="num">{shown}</td><td>{_e(result.reference) or "—"}</td><td>{where}</td></tr>'
        )
    return rows


class _Stylesheets(HTMLParser):
    """The href of every <link rel="stylesheet"> of a page."""

    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "link" and attrs.get("rel") == "stylesheet" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def theme_stylesheets(html_dir: Path, page: str) -> list[str]:
    """The book's stylesheets (theme, fonts, sphinx-design, the course's own), as the built
    page html_dir/<page>.html links them, made relative to html_dir, where index.html sits."""
    parser = _Stylesheets()
    parser.feed((html_dir / f"{page}.html").read_text(encoding="utf8"))
    if not any("pydata-sphinx-theme.css" in h for h in parser.hrefs):
        raise ValueError(f"{page}.html links no theme stylesheet: {parser.hrefs}")
    folder = posixpath.dirname(page)
    return [posixpath.normpath(posixpath.join(folder, h.split("?")[0])) + ("?" + h.split("?", 1)[1] if "?" in h else "")
            for h in parser.hrefs]


# The theme's page skeleton (pydata-sphinx-theme / sphinx-book-theme class names), light mode
# set in the markup: the landing page has no script.
PAGE = """<!DOCTYPE html>
<html lang="en" data-theme="light" data-mode="light">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{en_title} · {zh_title_text}</title>
{stylesheets}
</head>
<body class="aiayn-landing">
<div class="bd-container">
<div class="bd-container__inner bd-page-width">
<main id="main-content" class="bd-main" role="main">
<div class="bd-content">
<div class="bd-article-container">
<article class="bd-article">
<nav class="languages">
  <a class="btn btn-outline-primary" href="{en_url}" hreflang="en">English</a>
  <a class="btn btn-outline-primary" href="{zh_url}" hreflang="zh-CN" lang="zh-CN">中文</a>
</nav>
<h1>{en_title}<br>{zh_title}</h1>
<p>A bilingual, executable walkthrough of Vaswani et al.,
<a href="https://arxiv.org/abs/1706.03762">Attention Is All You Need</a> (2017): every component
in NumPy and in PyTorch, every claim backed by a code cell.<br>
<span lang="zh-CN">逐节精读这篇论文：每个组件都有 NumPy 与 PyTorch 两种实现，每个论断都有可运行的代码为证。</span></p>

<section id="chapters">
<h2>Chapters <span lang="zh-CN">章节</span></h2>
<p>In reading order: build the model (§3) and train one yourself before the results.<br>
<span lang="zh-CN">按阅读顺序排列：先搭建模型（§3）并亲手训练一个，再看实验结果。</span></p>
<div class="pst-scrollable-table-container">
<table class="table chapter-map">
<thead><tr><th>Paper <span lang="zh-CN">论文</span></th><th>English</th><th lang="zh-CN">中文</th></tr></thead>
<tbody>
{chapters}
</tbody>
</table>
</div>
</section>

<section id="results">
<h2>Measured results <span lang="zh-CN">实测结果</span></h2>
<p>Numbers the chapters measured when they were last run (read from the committed notebooks).<br>
<span lang="zh-CN">各章节最近一次运行时测得的数值（取自仓库中已执行的 notebook）。</span></p>
<div class="pst-scrollable-table-container">
<table class="table">
<thead><tr><th>Quantity <span lang="zh-CN">量</span></th><th>Measured <span lang="zh-CN">实测</span></th>
<th>Paper or theory <span lang="zh-CN">论文／理论</span></th><th>Chapter <span lang="zh-CN">章节</span></th></tr></thead>
<tbody>
{results}
</tbody>
</table>
</div>
</section>

<section id="run">
<h2>Run it yourself <span lang="zh-CN">自己运行</span></h2>
<p>Every chapter page has buttons to download the notebook or open it on Binder or Colab;
{running_en} says how to run the chapters in JupyterLab on your own machine or on a GPU.<br>
<span lang="zh-CN">每个章节页面都可以下载 notebook，或在 Binder、Colab 上打开；{running_zh}介绍如何在自己的机器上用 JupyterLab 运行各章，或在 GPU 上运行。</span></p>
<div class="highlight"><pre><code>git clone {repo_url}
cd {repo_name}
bash tools/lab.sh    # the chapters in JupyterLab, MyST rendered
bash tools/book.sh   # build this site into _build/html
bash tools/test.sh   # run every test and re-run every chapter notebook</code></pre></div>
</section>
</article>
</div>
</div>
</main>
</div>
</div>
</body>
</html>
"""

RUNNING_PAGE = "running_the_book"


def write_landing(html_dir: Path, root: Path, config: dict[str, dict]) -> Path:
    """Write html_dir/index.html; `config` maps each language to its book configuration."""
    docnames = {lang: toc_docnames(root / config[lang]["sphinx"]["config"]["external_toc_path"])
                for lang in ("en", "zh")}
    stripped = [[d.rsplit("/", 1)[-1] for d in docnames[lang]] for lang in ("en", "zh")]
    if stripped[0] != stripped[1]:
        raise ValueError(f"the two tables of contents list different chapters: {stripped}")
    titles = chapter_titles(html_dir, docnames)
    captions = {lang: toc_parts(root / config[lang]["sphinx"]["config"]["external_toc_path"]) for lang in ("en", "zh")}
    parts = {en_doc.rsplit("/", 1)[-1]: {"en": captions["en"][en_doc], "zh": captions["zh"][zh_doc]}
             for en_doc, zh_doc in zip(docnames["en"], docnames["zh"]) if en_doc in captions["en"]}
    repo_url = config["en"]["repository"]["url"]
    running = {lang: next((d for d in docnames[lang] if d.endswith(f"/{RUNNING_PAGE}")), None) for lang in ("en", "zh")}
    running_en = (f'<a href="en/{running["en"]}.html">{_e(titles[RUNNING_PAGE]["en"])}</a>'
                  if running["en"] else "the preface")
    running_zh = (f'<a href="zh/{running["zh"]}.html">{_e(titles[RUNNING_PAGE]["zh"])}</a>'
                  if running["zh"] else "前言")
    page = PAGE.format(
        stylesheets="\n".join(f'<link rel="stylesheet" href="{_e(h)}">'
                               for h in theme_stylesheets(html_dir, f"en/{docnames['en'][0]}")),
        running_en=running_en, running_zh=running_zh,
        en_title=_e(config["en"]["title"]), zh_title=_zh(config["zh"]["title"]),
        zh_title_text=_e(config["zh"]["title"]),
        en_url=f"en/{docnames['en'][0]}.html", zh_url=f"zh/{docnames['zh'][0]}.html",
        chapters="\n".join(chapter_rows(titles, parts)),
        results="\n".join(result_rows(measured_results(root, docnames), titles)),
        repo_url=_e(repo_url), repo_name=_e(repo_url.rstrip("/").rsplit("/", 1)[-1]),
    )
    target = html_dir / "index.html"
    target.write_text(page, encoding="utf8")
    return target
