"""Where the book and its Colab copies are published, derived from _config.yml's repository.

GitHub Pages serves the repository https://github.com/<owner>/<name> at
https://<owner>.github.io/<name>/ (a repository named <owner>.github.io at the host's root);
.github/workflows/book.yml publishes _build/html there, so a chapter's page is
<site>/<lang>/chapters/<lang>/<name>.html. The same workflow pushes the exported Colab notebooks
(tools/export_colab.py) to the branch named by the book's Sphinx setting ``colab_branch``,
which _ext/colab_launch.py points the Colab button at.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "_config.yml"


def book_config(path: Path = CONFIG) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf8"))


def github_repository(config: dict) -> tuple[str, str]:
    """(owner, name) of the repository URL, which must be on github.com."""
    url = config["repository"]["url"].rstrip("/")
    prefix = "https://github.com/"
    if not url.startswith(prefix) or url[len(prefix):].count("/") != 1:
        raise ValueError(f"repository.url must be https://github.com/<owner>/<name>, not {url!r}")
    owner, name = url[len(prefix):].split("/")
    return owner, name.removesuffix(".git")


def site_url(config: dict) -> str:
    """The published book's root, ending in '/'."""
    owner, name = github_repository(config)
    host = f"https://{owner.lower()}.github.io/"
    return host if name.lower() == f"{owner.lower()}.github.io" else f"{host}{name}/"


def page_url(config: dict, lang: str, name: str, fragment: str = "") -> str:
    """The published page of chapters/<lang>/<name>."""
    url = f"{site_url(config)}{lang}/chapters/{lang}/{name}.html"
    return f"{url}#{fragment}" if fragment else url


def colab_branch(config: dict) -> str:
    return config["sphinx"]["config"]["colab_branch"]


def github_file_url(config: dict, path: str, raw: bool = False) -> str:
    """A file of the repository at the book's branch: its GitHub page, or its raw bytes."""
    owner, name = github_repository(config)
    branch = config["repository"]["branch"]
    if raw:
        return f"https://raw.githubusercontent.com/{owner}/{name}/{branch}/{path}"
    return f"https://github.com/{owner}/{name}/blob/{branch}/{path}"
