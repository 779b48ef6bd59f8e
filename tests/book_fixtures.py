"""The built HTML book, shared by tests/test_book.py and tests/test_browser.py.

`book_html` builds the book with tools/build_book.py into a temporary folder once per test
run: under pytest-xdist the workers share one build (the first to take a file lock builds
it, the others wait and reuse it, or its failure), so two test files that land on two
workers do not build twice. Import the fixture into a test module:

    from book_fixtures import book_html  # noqa: F401  (a pytest fixture)
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The book's tools (landing.py, browser.py) are importable by the tests that use the build.
sys.path.insert(0, str(ROOT / "tools"))
import landing  # noqa: E402  (tools/landing.py, on the path just above)

LANGS = ("en", "zh")
TOCS = {"en": ROOT / "_toc.yml", "zh": ROOT / "_toc.zh.yml"}
OTHER = {"en": "zh", "zh": "en"}


def toc_docnames(lang: str) -> list[str]:
    """The root, then every `file` of the toc, in order."""
    return landing.toc_docnames(TOCS[lang])


def _build(out: Path) -> dict:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_book.py"), str(out)],
        capture_output=True, text=True, timeout=600,
    )
    return {"returncode": result.returncode, "log": result.stdout[-5000:] + result.stderr[-5000:]}


@pytest.fixture(scope="session")
def book_html(tmp_path_factory) -> Path:
    """<build>/html of a fresh build: index.html, en/, zh/."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = tmp_path_factory.getbasetemp().parent  # one folder per run, common to its workers
    else:
        shared = tmp_path_factory.getbasetemp()
    out, record = shared / "book", shared / "book-build.json"
    with open(shared / "book-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not record.exists():
            record.write_text(json.dumps(_build(out)), encoding="utf8")
        result = json.loads(record.read_text(encoding="utf8"))
    assert result["returncode"] == 0, f"tools/build_book.py failed:\n{result['log']}"
    return out / "html"
