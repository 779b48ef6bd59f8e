"""aiayn.checklist: one list for the two practice chapters, in both languages, whose pointers
(sections of the common-mistakes chapter, wrong files of the graders) lead somewhere real."""

import json
import re
from pathlib import Path

import pytest

from aiayn.checklist import ITEMS, checklist_markdown, show_checklist
from aiayn.grading import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
WRONG = ROOT / "tests" / "wrong_solutions"
HAN = re.compile(r"[\u4e00-\u9fff]")


def mistake_headings(lang: str) -> set[int]:
    nb = json.loads((ROOT / "chapters" / lang / "common_mistakes.ipynb").read_text(encoding="utf8"))
    text = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return {int(n) for n in re.findall(r"^### (\d+)\.", text, re.M)}


def test_every_item_is_written_in_both_languages():
    for item in ITEMS:
        assert item.en.strip() and not HAN.search(item.en), item.en
        assert HAN.search(item.zh), item.zh
        # The same code in both: the languages differ in prose only.
        assert re.findall(r"`[^`]+`", item.en) == re.findall(r"`[^`]+`", item.zh), item.en
        # No $...$ math: the book renders a Markdown output as CommonMark, dollars and all.
        assert "$" not in item.en + item.zh, item.en


def test_the_list_is_numbered_markdown_in_the_language_asked_for():
    en, zh = checklist_markdown("en").splitlines(), checklist_markdown("zh").splitlines()
    assert len(en) == len(zh) == len(ITEMS)
    assert en[0].startswith("1. Scores are") and zh[0].startswith("1. 分数是")
    assert en[-1].startswith(f"{len(ITEMS)}. ")
    assert show_checklist("zh").data == checklist_markdown("zh")


def test_the_language_follows_the_notebook_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("AIAYN_LANG", raising=False)
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert checklist_markdown() == checklist_markdown("zh")
    monkeypatch.setenv("AIAYN_LANG", "en")
    assert checklist_markdown() == checklist_markdown("en")


def test_a_wrong_language_is_named():
    with pytest.raises(ValueError, match="lang must be 'en' or 'zh'"):
        checklist_markdown("fr")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_item_points_at_a_section_of_the_common_mistakes_chapter_or_a_wrong_file(lang):
    sections = mistake_headings(lang)
    for item in ITEMS:
        assert item.mistakes or item.wrong_solutions, item.en
        assert set(item.mistakes) <= sections, (item.en, sorted(sections))
    # Every section of the chapter is on the list.
    assert sections == {n for item in ITEMS for n in item.mistakes}


def test_every_wrong_file_named_exists_and_belongs_to_a_graded_exercise():
    for stem in (s for item in ITEMS for s in item.wrong_solutions):
        path = WRONG / f"{stem}.py"
        assert path.is_file(), path
        exercise = re.search(r"^exercise: (\S+)$", path.read_text(encoding="utf8"), re.M)
        assert exercise and exercise.group(1) in REGISTRY, stem
