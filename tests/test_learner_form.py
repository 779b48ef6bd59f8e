"""Every lesson page keeps the learner-first form (docs/writing-chapters.md).

What a learner meets on a page is measured as ../shared/notes/learner-first.md says: words of
prose outside dropdowns (the main path), and bookkeeping a reader should not have to read past.
A page under a toc part whose caption names the appendix (Appendix, Lab notebook, 附录) keeps its
bookkeeping and is measured by none of this.

- the main path of an English page ≤ 1,800 words (the preface ≤ 800), and the book's parts
  within the sizes their issues set;
- no ``{glue}`` role and no ``{literalinclude}`` in the markdown of a lesson: both show as raw
  text in JupyterLab and on Colab (the prose states numbers plainly, a hidden cell asserts them;
  library code is a listing kept by tools/listings.py);
- no ``assert`` and no ``glue(`` in a visible code cell, and at most one printed True/False
  verdict line per page: the checks live in hidden cells (tag ``remove-cell``);
- no project status (dates, owed work, next runs) in a chapter: that is results/*/STATUS.md;
- a chapter opens with its goal, reading time and prerequisites and ends with a summary and
  exercises.
"""

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = {"remove-cell", "remove-input", "hide-input", "hide-cell"}
FENCE = re.compile(r"^\s*(`{3,}|:{3,})\{([\w-]+)\}")
CJK = re.compile(r"[\u4e00-\u9fff]")
STATUS = re.compile(r"20\d\d-\d\d-\d\d|\bowed\b|next GPU run|still to run|\bcommit [0-9a-f]{7}\b|"
                    r"\b[0-9a-f]{7}\b \(|尚欠|下一次 GPU", re.I)
VERDICT = re.compile(r"\b(True|False)\]?\s*$")
APPENDIX = re.compile(r"appendix|lab notebook|附录|实验记录", re.I)
OPENING = {"en": ("**Goal:**", "**Reading time:**", "**Builds on:**"),
           "zh": ("**目标：**", "**阅读时间：**", "**前置：**")}
CLOSING = {"en": ("## Summary", "## Exercises"), "zh": ("## 小结", "## 练习")}
# The parts of the book and the most English words their main paths may hold together (issues
# 43, 44, 45, 53 and 54), the whole book's main path within learner-first.md's 25,000. The part
# "After the paper" (issue 57) is measured on its own, outside the 25,000.
PARTS = {
    "the architecture (preface, §1-§3.5)": (
        ["preface", "paper_in_one_page", "architecture_overview", "scaled_dot_product_attention",
         "multi_head_attention", "attention_in_the_model", "feed_forward_and_embeddings",
         "positional_encoding", "residual_and_layer_norm", "putting_it_together"], 10_500),
    "build it yourself": (["from_scratch", "common_mistakes"], 3_400),
    "§4-§6": (["why_self_attention", "reading_a_result", "copy_task", "training_multi30k", "multi30k_recipe",
               "model_variations", "constituency_parsing"], 8_500),
    "under the hood": (["backpropagation", "fast_decoding"], 3_100),
}
AFTER_THE_PAPER = re.compile(r"after the paper|论文之后", re.I)
AFTER_THE_PAPER_LIMIT = 5_000
PAGE_LIMIT = 1_800
LIMITS = {"preface": 800}
BOOK_LIMIT = 25_000


def words(text: str) -> int:
    """English words, plus Chinese characters / 1.6, of prose with math, code and link targets cut."""
    text = re.sub(r"\{[\w:-]+\}`[^`]*`|\$[^$]*\$|`[^`]*`|\]\([^)]*\)", " ", text)
    cjk = len(CJK.findall(text))
    return len(re.findall(r"[A-Za-z0-9][A-Za-z0-9'’\-]*", CJK.sub(" ", text))) + round(cjk / 1.6)


def main_path(markdown: str) -> str:
    """The markdown outside dropdowns, toggles and ``:class: dropdown`` blocks, without directive
    fences and options (fenced code stays here; ``words`` then cuts it with the code spans, as
    ../shared/tools/chapter_metrics.py does)."""
    stack, kept = [], []
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        m = FENCE.match(line)
        if m:
            drop = m.group(2) in ("dropdown", "toggle") or any(
                re.match(r"^\s*:class:.*dropdown", nxt) for nxt in lines[i + 1:i + 6])
            stack.append((m.group(1), drop))
            continue
        if stack and line.strip() == stack[-1][0]:
            stack.pop()
            continue
        if re.match(r"^\s*:[\w-]+:", line):
            continue
        if not any(drop for _, drop in stack):
            kept.append(line)
    return "\n".join(kept)


def toc_parts(lang: str) -> list[tuple[str, list[str]]]:
    """(caption, page names) of the language's table of contents, in order; the root first."""
    toc = yaml.safe_load((ROOT / ("_toc.yml" if lang == "en" else f"_toc.{lang}.yml")).read_text(encoding="utf8"))
    parts = [("", [Path(toc["root"]).name])]
    for part in toc.get("parts", []):
        names = []
        for chapter in part.get("chapters", []):
            names.append(Path(chapter["file"]).name)
            names += [Path(s["file"]).name for s in chapter.get("sections", [])]
        parts.append((part.get("caption", ""), names))
    return parts


def toc_pages(lang: str) -> list[tuple[str, bool]]:
    """(page name, is it in an appendix part) in the order of the language's table of contents."""
    return [(name, bool(APPENDIX.search(caption))) for caption, names in toc_parts(lang) for name in names]


def after_the_paper(lang: str = "en") -> list[str]:
    return [n for caption, names in toc_parts(lang) if AFTER_THE_PAPER.search(caption) for n in names]


def page_path(lang: str, name: str) -> Path:
    base = ROOT / "chapters" / lang / name
    return base.with_suffix(".ipynb") if base.with_suffix(".ipynb").exists() else base.with_suffix(".md")


def cells(path: Path) -> list[dict]:
    if path.suffix == ".md":
        return [{"cell_type": "markdown", "source": path.read_text(encoding="utf8"), "metadata": {}}]
    nb = json.loads(path.read_text(encoding="utf8"))
    for c in nb["cells"]:
        c["source"] = c["source"] if isinstance(c["source"], str) else "".join(c["source"])
    return nb["cells"]


def visible(cell: dict) -> bool:
    return cell["cell_type"] == "code" and not HIDDEN & set(cell.get("metadata", {}).get("tags", []))


def measure(path: Path) -> dict:
    r = dict(core=0, roles=[], includes=0, asserts=0, glue=0, verdicts=[], status=[])
    for c in cells(path):
        src = c["source"]
        if c["cell_type"] == "markdown":
            r["core"] += words(main_path(src))
            r["roles"] += re.findall(r"\{glue(?::\w+)?\}`[^`]*`", src)
            r["includes"] += len(re.findall(r"\{literalinclude\}", src))
            r["status"] += [l.strip()[:100] for l in src.splitlines() if STATUS.search(l)]
        elif visible(c):
            r["asserts"] += len(re.findall(r"^\s*assert\b", src, re.M))
            r["glue"] += src.count("glue(")
            for out in c.get("outputs", []):
                text = "".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", ""))
                r["verdicts"] += [l for l in text.splitlines() if VERDICT.search(l)]
    return r


LESSONS = [(lang, name) for lang in ("en", "zh") for name, appendix in toc_pages(lang) if not appendix]


@pytest.mark.parametrize("lang, name", LESSONS, ids=lambda x: x)
def test_a_lesson_keeps_its_bookkeeping_off_the_page(lang, name):
    r = measure(page_path(lang, name))
    assert not r["roles"], f"{{glue}} roles in the prose (raw text in JupyterLab and Colab): {r['roles'][:5]}"
    assert not r["includes"], "{literalinclude} in the prose: use a listing (tools/listings.py)"
    assert r["asserts"] == 0 and r["glue"] == 0, (
        f"{r['asserts']} assert(s) and {r['glue']} glue( call(s) in visible code cells: move them "
        "to a hidden check cell (tag remove-cell)")
    assert len(r["verdicts"]) <= 1, f"printed True/False verdict lines (print an error size): {r['verdicts'][:5]}"
    assert not r["status"], f"project status in a chapter (results/*/STATUS.md holds it): {r['status'][:3]}"


@pytest.mark.parametrize("lang, name", [(l, n) for l, n in LESSONS if n != "preface"], ids=lambda x: x)
def test_a_chapter_opens_with_its_goal_and_closes_with_summary_and_exercises(lang, name):
    page = cells(page_path(lang, name))
    markdown = [c["source"] for c in page if c["cell_type"] == "markdown"]
    opening = "\n".join(markdown[:2])
    missing = [m for m in OPENING[lang] if m not in opening]
    assert not missing, f"the first markdown cells should state {missing}"
    headings = [l.strip() for src in markdown for l in src.splitlines() if l.startswith("## ")]
    assert [h for h in headings if h in CLOSING[lang]] == list(CLOSING[lang]), headings[-4:]


@pytest.mark.parametrize("name", [n for n, appendix in toc_pages("en") if not appendix])
def test_an_english_page_main_path_is_short(name):
    core = measure(page_path("en", name))["core"]
    limit = LIMITS.get(name, PAGE_LIMIT)
    assert core <= limit, f"{name}: {core} words of prose outside dropdowns (at most {limit})"


@pytest.mark.parametrize("part", PARTS)
def test_a_part_of_the_book_is_within_its_size(part):
    names, limit = PARTS[part]
    sizes = {n: measure(page_path("en", n))["core"] for n in names}
    assert sum(sizes.values()) <= limit, f"{part}: {sum(sizes.values())} words (at most {limit}): {sizes}"


def test_the_main_path_of_the_book_is_within_its_size():
    later = set(after_the_paper())
    total = sum(measure(page_path("en", n))["core"] for n, appendix in toc_pages("en") if not appendix and n not in later)
    assert total <= BOOK_LIMIT, f"{total} words outside dropdowns and the appendix (at most {BOOK_LIMIT})"


def test_the_part_after_the_paper_is_within_its_own_size():
    sizes = {n: measure(page_path("en", n))["core"] for n in after_the_paper()}
    assert sum(sizes.values()) <= AFTER_THE_PAPER_LIMIT, f"After the paper: {sum(sizes.values())} words: {sizes}"


BUILDS_ON = {"en": "**Builds on:**", "zh": "**前置：**"}


def prerequisites(lang: str, name: str) -> list[str]:
    """The pages a chapter's "Builds on" line links, by name."""
    opening = "\n".join(c["source"] for c in cells(page_path(lang, name))[:4] if c["cell_type"] == "markdown")
    line = next((l for l in opening.splitlines() if BUILDS_ON[lang] in l), "")
    return [Path(target).stem for target in re.findall(r"\]\(([\w./-]+?\.(?:ipynb|md))\)", line)]


@pytest.mark.parametrize("lang, name", [(l, n) for l, n in LESSONS if n != "preface"], ids=lambda x: x)
def test_a_page_builds_only_on_pages_before_it(lang, name):
    """The reading order is the toc's: a page's prerequisites come before it (issue 53)."""
    order = [n for n, _ in toc_pages(lang)]
    later = [p for p in prerequisites(lang, name) if p not in order or order.index(p) >= order.index(name)]
    assert not later, f"{lang}/{name} builds on {later}, which the table of contents puts after it (or lacks)"


def test_prerequisites_are_read_from_the_builds_on_line():
    assert prerequisites("en", "putting_it_together") and prerequisites("zh", "putting_it_together")


def test_main_path_measures_what_a_reader_reads():
    page = ("Attention is all.\n\n:::{dropdown} Deeper\nhidden words here\n:::\n\n"
            "```{admonition} Note\n:class: dropdown\nfolded too\n```\n\n"
            "::::{tab-set}\n:::{tab-item} NumPy\nshown\n:::\n::::\n注意力机制")
    assert main_path(page).split() == ["Attention", "is", "all.", "shown", "注意力机制"]
    assert words(main_path(page)) == 4 + round(5 / 1.6)


# Statistics vocabulary (issue 54): test names, p-values and corrections live in the lab-notebook
# appendix and in dropdowns; a lesson says "beyond seed noise" or "inconclusive" and links the
# one page that teaches how to read a result (reading_a_result, which is excepted).
STATISTICS = re.compile(r"\bHolm\b|\bp\s*[=<>≤]\s*0?\.\d|\bTOST\b|\bt-tests?\b|\bWelch\b|\bpermutation tests?\b|"
                        r"\bbootstrap\w*|\bequivalence (?:margin|test)|\brandomi[sz]ation tests?\b", re.I)
STATISTICS_LIMIT = 8


def statistics_words(name: str) -> list[str]:
    text = "\n".join(main_path(c["source"]) for c in cells(page_path("en", name)) if c["cell_type"] == "markdown")
    return STATISTICS.findall(re.sub(r"```.*?```", " ", text, flags=re.S))


def test_statistics_words_stay_off_the_lessons():
    found = {n: statistics_words(n) for n, appendix in toc_pages("en")
             if not appendix and n != "reading_a_result"}
    found = {n: w for n, w in found.items() if w}
    total = sum(len(w) for w in found.values())
    assert total <= STATISTICS_LIMIT, f"{total} statistics words in the lessons' main path (at most {STATISTICS_LIMIT}): {found}"


def test_statistics_words_are_found():
    assert STATISTICS.findall("a paired t-test, Holm-corrected, p = 0.03; TOST; a permutation test") == [
        "t-test", "Holm", "p = 0.0", "TOST", "permutation test"]
