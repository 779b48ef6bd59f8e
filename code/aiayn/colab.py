"""What a chapter's first cell does on Google Colab, and only there.

Every chapter notebook starts with the same short cell (tools/colab_cell.py writes it): outside
Colab it does nothing; on Colab it clones this repository at the branch the book was built from,
puts its ``code/`` folder on ``sys.path`` (so ``import aiayn`` works without restarting the
kernel) and calls ``set_up``, which

1. installs the course package in editable mode with the extras Colab lacks (``code[colab]``:
   myst-nb for ``glue``, sacreBLEU, tokenizers); Colab's own torch, numpy and matplotlib stay,
2. installs the CJK font (apt ``fonts-wqy-microhei``; Colab runs as root) and makes matplotlib
   reload its font list, so Chinese plot labels render,
3. downloads Multi30k into ``aiayn-data`` beside the clone (``/content/aiayn-data``; each file
   checked against its sha256 by ``aiayn.data.multi30k``) and points ``$AIAYN_DATA`` at it,
4. enters ``chapters/<lang>/`` of the clone, the notebook's language read from the notebook's
   own metadata (``metadata.aiayn.lang``), so labels come out in that language and exercises
   are found, as when the chapter runs from a checkout.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

FONT_PACKAGE = "fonts-wqy-microhei"


def notebook_language(default: str = "en") -> str:
    """'zh' or 'en' from the running notebook's metadata, asked of Colab's front end."""
    try:
        from google.colab import _message  # only exists on Colab
        notebook = _message.blocking_request("get_ipynb", timeout_sec=30)["ipynb"]
        lang = notebook["metadata"]["aiayn"]["lang"]
    except Exception:  # an older front end, or a notebook without the metadata: English labels
        return default
    return lang if lang in ("en", "zh") else default


def _run(cmd: list[str], what: str) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip()[-800:]
        raise RuntimeError(f"Colab set-up could not {what}: `{' '.join(cmd)}` failed:\n{tail}")


def install_font() -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", FONT_PACKAGE]):
        result = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if result.returncode != 0:
            raise RuntimeError(f"Colab set-up could not install the CJK font: `{' '.join(cmd)}` "
                               f"failed:\n{(result.stderr or result.stdout).strip()[-800:]}")
    import matplotlib.font_manager as font_manager
    # The font list is cached: rebuild it so the new font is found in this session.
    font_manager.fontManager = font_manager._load_fontmanager(try_read_cache=False)


def download_data(folder: str | Path) -> Path:
    from .data.multi30k import LANGUAGES, SPLITS, ensure_file
    target = Path(folder) / "multi30k"
    for split in SPLITS:
        for lang in LANGUAGES:
            ensure_file(f"{split}.{lang}.gz", target)
    os.environ["AIAYN_DATA"] = str(folder)
    return target


def set_up(repository: str) -> str:
    """Steps 1–4 above, for a clone at ``repository``; returns a one-line summary."""
    repo = Path(repository)
    _run([sys.executable, "-m", "pip", "install", "-q", "-e", f"{repo / 'code'}[colab]"],
         "install the course package")
    importlib.invalidate_caches()  # packages installed a moment ago become importable now
    install_font()
    data = download_data(repo.parent / "aiayn-data")
    lang = notebook_language()
    os.chdir(repo / "chapters" / lang)
    return f"Colab set-up done: course from {repo}, data in {data}, labels in {lang}"
