"""Structure of chapters/: the two languages mirror each other, tocs list every page, and
committed notebooks are executed and clean. Fast: no book build, no kernel."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import execute_notebooks  # noqa: E402  (tools/execute_notebooks.py)
from execute_notebooks import OVERWRITTEN  # noqa: E402
CHAPTERS = ROOT / "chapters"
LANGS = ("en", "zh")
TOCS = {"en": ROOT / "_toc.yml", "zh": ROOT / "_toc.zh.yml"}
PAGE_SUFFIXES = (".md", ".ipynb")


def pages(lang: str) -> set[str]:
    """Page paths relative to chapters/<lang>/, with suffix."""
    folder = CHAPTERS / lang
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.suffix in PAGE_SUFFIXES and ".ipynb_checkpoints" not in p.parts
    }


NOTEBOOKS = sorted(p for p in pages("en") | pages("zh") if p.endswith(".ipynb"))
# Every chapter notebook; not chapters/start_here.ipynb, the generated list of links that
# `bash tools/lab.sh` opens first (no code: tests/test_start_page.py checks it).
START_PAGE = CHAPTERS / "start_here.ipynb"
ALL_NOTEBOOKS = sorted(
    p for p in CHAPTERS.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p != START_PAGE
)


def load_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell: dict) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def toc_files(entry) -> list[str]:
    """Every `root`/`file` of a toc, in order."""
    found = []
    if isinstance(entry, dict):
        for key, value in entry.items():
            if key in ("root", "file"):
                found.append(value)
            else:
                found += toc_files(value)
    elif isinstance(entry, list):
        for item in entry:
            found += toc_files(item)
    return found


def toc_shape(entry, lang: str):
    """The toc with language-specific parts neutralised: file paths lose chapters/<lang>/,
    titles and captions (translated) are dropped."""
    if isinstance(entry, dict):
        return {
            key: toc_shape(value, lang)
            for key, value in entry.items()
            if key not in ("title", "caption")
        }
    if isinstance(entry, list):
        return [toc_shape(item, lang) for item in entry]
    if isinstance(entry, str):
        return entry.removeprefix(f"chapters/{lang}/")
    return entry


def test_both_languages_have_the_same_pages():
    assert pages("en"), "no pages under chapters/en"
    assert pages("en") == pages("zh")


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_pair_has_identical_code_cells(name):
    en, zh = (load_notebook(CHAPTERS / lang / name) for lang in LANGS)
    # Plot labels differ through aiayn.plotting.tr(), never through the code.
    assert [source(c) for c in code_cells(en)] == [source(c) for c in code_cells(zh)]


@pytest.mark.parametrize("lang", LANGS)
def test_toc_lists_exactly_the_pages_of_its_language(lang):
    toc = yaml.safe_load(TOCS[lang].read_text(encoding="utf8"))
    listed = toc_files(toc)
    assert all(f.startswith(f"chapters/{lang}/") for f in listed), listed
    listed_pages = {f.removeprefix(f"chapters/{lang}/") for f in listed}
    on_disk = {p.rsplit(".", 1)[0] for p in pages(lang)}
    assert listed_pages == on_disk
    assert len(listed) == len(listed_pages), "a page is listed twice"


def test_tocs_have_the_same_structure():
    en, zh = (yaml.safe_load(TOCS[lang].read_text(encoding="utf8")) for lang in LANGS)
    assert toc_shape(en, "en") == toc_shape(zh, "zh")


# Outputs must not depend on the machine that ran the notebook.
MACHINE_SPECIFIC = re.compile(
    r"0x[0-9a-f]{6,}"  # memory addresses
    r"|/tmp/|/home/|/root/|/Users/|/work/|site-packages|[A-Za-z]:\\\\"  # local paths
)


def output_texts(cell: dict):
    for out in cell.get("outputs", []):
        if "text" in out:
            yield "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
        for mime, value in out.get("data", {}).items():
            if mime.startswith("text/"):
                yield "".join(value) if isinstance(value, list) else value
        if out["output_type"] == "error":
            yield "\n".join(out.get("traceback", []))


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.relative_to(CHAPTERS).as_posix())
def test_notebook_is_committed_executed_and_clean(path):
    cells = code_cells(load_notebook(path))
    counts = [c["execution_count"] for c in cells]
    # One top-to-bottom run in one kernel: every cell executed, counts increasing.
    assert None not in counts, "unexecuted code cells: run the notebook and save it"
    assert counts == sorted(counts) and len(set(counts)) == len(counts), counts
    assert any(c["outputs"] for c in cells), "no outputs committed: nbval would compare nothing"
    for i, cell in enumerate(cells):
        for out in cell["outputs"]:
            # stderr (warnings, "Glyph missing") must be fixed, not committed; the book build
            # rejects it too (execute.stderr_output: warn + -W).
            assert not (out["output_type"] == "stream" and out["name"] == "stderr"), (
                f"code cell {i} has stderr output: {''.join(out['text'])[:200]}"
            )
            assert out["output_type"] != "error", f"code cell {i} raised"
        for text in output_texts(cell):
            match = MACHINE_SPECIFIC.search(text)
            assert match is None, f"code cell {i}: machine-specific output {match.group()!r}"
        # Saved as a notebook front end shows them (tools/execute_notebooks.py): one stream
        # output per run of prints, no progress-bar states a carriage return overwrote. The book
        # renders each stream output as its own block, so a progress bar would print hundreds.
        streams = [(o["output_type"], o.get("name")) for o in cell["outputs"]]
        assert all(a != b or a[0] != "stream" for a, b in zip(streams, streams[1:])), (
            f"code cell {i}: consecutive stream outputs; run tools/execute_notebooks.py --tidy {path.name}")
        for out in cell["outputs"]:
            if out["output_type"] == "stream":
                text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
                assert not OVERWRITTEN.search(text), (
                    f"code cell {i}: text overwritten by a carriage return; run tools/execute_notebooks.py --tidy")


def test_stream_merging_is_nbconverts():
    """tools/execute_notebooks.py merges streams as nbconvert's CoalesceStreamsPreprocessor does:
    a tqdm bar's redraws, prints around it, stderr between, a figure in the middle."""
    nbformat = pytest.importorskip("nbformat")
    preprocessors = pytest.importorskip("nbconvert.preprocessors")
    stream = nbformat.v4.new_output
    outputs = [stream("stream", name="stdout", text="start\n"),
               *(stream("stream", name="stdout", text=f"\rtrain: {k:3d}%|{'#' * (k // 10):<10}|") for k in range(0, 101, 5)),
               stream("stream", name="stdout", text="\nloss 4.21\r\n"),
               stream("stream", name="stderr", text="a warning\n"),
               stream("stream", name="stdout", text="\rbeam: 1/2\rbeam: 2/2\n"),
               stream("display_data", data={"text/plain": "<Figure>"}),
               stream("stream", name="stdout", text="done\n")]
    saved = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=outputs)]))
    ours, theirs = nbformat.reads(saved, 4), nbformat.reads(saved, 4)
    execute_notebooks.coalesce_streams(ours)
    preprocessors.CoalesceStreamsPreprocessor().preprocess(theirs, {})
    assert ours == theirs
    assert ours.cells[0].outputs[0].text == "start\ntrain: 100%|##########|\nloss 4.21\r\n"
    assert len(ours.cells[0].outputs) == 5


def test_nbval_collects_every_chapter_notebook():
    assert ALL_NOTEBOOKS, "no notebooks under chapters/"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "--nbval",
         "-p", "no:cacheprovider", "chapters"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    collected = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    expected = {p.relative_to(ROOT).as_posix() for p in ALL_NOTEBOOKS}
    assert expected <= collected, f"not collected by nbval: {sorted(expected - collected)}"
