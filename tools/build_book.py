"""Build the bilingual HTML book: two Sphinx builds of one source tree.

    python tools/build_book.py [OUT]        # OUT defaults to <repo>/_build

writes OUT/html/en/ (English), OUT/html/zh/ (Chinese) and OUT/html/index.html (the
bilingual landing page: chapter map, measured results, how to run; tools/landing.py);
OUT/html is what gets published. Each language builds in its own
work folder OUT/sphinx/<lang>/ (myst-nb writes jupyter_execute/ next to Sphinx's output
folder, which must not land in OUT/html), and its html/ is moved into place when both
builds succeed. OUT/html and OUT/sphinx are deleted first: builds are always clean,
because incremental builds skip pages whose sources did not change even when code/ did.

How: for each language, the Jupyter Book configuration is _config.yml deep-merged with
_config.<lang>.yml when that overlay exists (only zh has one: Chinese title, language
zh_CN, toc _toc.zh.yml). Jupyter Book's own translation (jupyter_book.config.get_final_config,
what `jupyter-book build` uses) turns it into Sphinx settings, and Sphinx runs with
warnings as errors (-W, no --keep-going). `jupyter-book build --config` takes a file, not
a merged dict, hence this script instead of the CLI. The two languages build in parallel
in child processes (`--lang en|zh`), so each has a fresh Sphinx/docutils state.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

import landing  # tools/landing.py, next to this script

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "zh")


def deep_merge(base: dict, overlay: dict) -> dict:
    """`base` updated with `overlay`; nested dicts merge, everything else is replaced."""
    merged = dict(base)
    for key, value in overlay.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def book_config(lang: str) -> dict:
    """The Jupyter Book (YAML-level) configuration of one language."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))
    overlay = ROOT / f"_config.{lang}.yml"
    if overlay.exists():
        config = deep_merge(config, yaml.safe_load(overlay.read_text(encoding="utf8")))
    return config


def build_one(lang: str, out: Path) -> int:
    """One Sphinx HTML build into out/sphinx/<lang>/html; returns Sphinx's status code."""
    from jupyter_book.config import get_final_config
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxWarning
    from sphinx.util.console import nocolor
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    config = book_config(lang)
    sphinx_config, _ = get_final_config(
        user_yaml=config,
        cli_config={"latex_individualpages": False},
        sourcedir=ROOT,
        raise_on_invalid=True,
    )
    # `jupyter-book build` resolves local extension folders against the config file.
    for folder in config["sphinx"]["local_extensions"].values():
        sys.path.insert(0, str(ROOT / folder))
    nocolor()  # the output goes to a log file
    try:
        with patch_docutils(ROOT), docutils_namespace():
            app = Sphinx(
                srcdir=ROOT,
                confdir=None,  # no conf.py: every setting comes from sphinx_config
                outdir=out / "sphinx" / lang / "html",
                doctreedir=out / "sphinx" / lang / "doctrees",
                buildername="html",
                confoverrides=sphinx_config,
                freshenv=True,
                warningiserror=True,
                keep_going=False,
            )
            app.build(force_all=True)
    except SphinxWarning as warning:  # -W raises at the first warning: show it, not a traceback
        print(f"\nWarning, treated as error:\n{warning}", file=sys.stderr)
        return 1
    return app.statuscode


def build_all(out: Path) -> int:
    if out == ROOT or out in ROOT.parents:
        sys.exit(f"refusing to use {out} as the output folder: it holds the repository")
    for stale in (out / "html", out / "sphinx"):
        shutil.rmtree(stale, ignore_errors=True)
    (out / "sphinx").mkdir(parents=True)

    start = time.monotonic()
    logs = {lang: out / "sphinx" / f"{lang}.log" for lang in LANGS}
    procs = {}
    for lang in LANGS:
        with open(logs[lang], "w", encoding="utf8") as log:
            procs[lang] = subprocess.Popen(
                [sys.executable, __file__, "--lang", lang, str(out)],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
            )
    failed = [lang for lang, proc in procs.items() if proc.wait() != 0]
    for lang in LANGS:
        if lang in failed:
            print(f"---- {lang} build FAILED; its log ({logs[lang]}):")
            print(logs[lang].read_text(encoding="utf8"))
    if failed:
        return 1

    (out / "html").mkdir()
    for lang in LANGS:
        shutil.move(out / "sphinx" / lang / "html", out / "html" / lang)
    landing.write_landing(out / "html", ROOT, {lang: book_config(lang) for lang in LANGS})
    print(f"built {out / 'html'} (en, zh) in {time.monotonic() - start:.0f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "_build"), help="output folder")
    parser.add_argument("--lang", choices=LANGS, help="build one language only (internal)")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if args.lang:
        return build_one(args.lang, out)
    return build_all(out)


if __name__ == "__main__":
    sys.exit(main())
