"""`bash tools/lab.sh` started for a headless browser: tests/test_jupyterlab.py and
tools/screenshots.py open chapters in it.

    with jupyterlab() as lab:                  # 127.0.0.1, a free port, a random token
        open_notebook(page, lab, "chapters/en/positional_encoding.ipynb")

The server is the reader's own command, lab.sh, run with its usual set-up; only what a test
must not leave behind is redirected: JupyterLab's settings, workspaces, runtime and data
folders and the checkpoints it writes on opening a notebook go to a temporary folder, whose settings switch off autosave (running a cell must not
rewrite a chapter), the news prompt and the notebook's windowing (every cell is rendered, so
the whole page can be read, not only what is on screen).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


@dataclass(frozen=True)
class Lab:
    base: str  # http://127.0.0.1:<port>
    token: str
    log: Path
    notebook_dir: Path  # what it serves: the checkout, or a copy of it

    def url(self, notebook: str) -> str:
        """The JupyterLab page that opens <notebook> (e.g. chapters/en/x.ipynb) alone (?reset: no
        tabs of an earlier visit)."""
        return f"{self.base}/lab/tree/{notebook}?reset&token={self.token}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(notebook_dir: Path | None = None, start_timeout: float = 120) -> Iterator[Lab]:
    """lab.sh serving the checkout (or `notebook_dir`, a copy of it to try changes on)."""
    with tempfile.TemporaryDirectory(prefix="aiayn-lab-") as tmp:
        tmp = Path(tmp)
        for name, values in SETTINGS.items():
            path = tmp / "settings" / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf8")
        env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
                   JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTER_DATA_DIR=str(tmp / "data"),
                   OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        if notebook_dir:
            env["AIAYN_NOTEBOOK_DIR"] = str(notebook_dir)
        port, token, log = _free_port(), secrets.token_hex(16), tmp / "lab.log"
        with open(log, "w") as out:
            server = subprocess.Popen(
                ["bash", str(ROOT / "tools" / "lab.sh"), "--no-browser", "--ip=127.0.0.1",
                 f"--port={port}", f"--IdentityProvider.token={token}",
                 # JupyterLab checkpoints a notebook when it opens it: not into chapters/.
                 f"--FileCheckpoints.checkpoint_dir={tmp / 'checkpoints'}"],
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        lab = Lab(f"http://127.0.0.1:{port}", token, log, Path(notebook_dir or ROOT))
        try:
            _wait_until_up(lab, server, start_timeout)
            yield lab
        finally:
            server.terminate()  # lab.sh execs jupyter: this is the server, which stops its kernels
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_until_up(lab: Lab, server: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"tools/lab.sh exited ({server.returncode}):\n{lab.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{lab.base}/api/status?token={lab.token}", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"JupyterLab did not answer in {timeout:.0f} s:\n{lab.log.read_text()[-3000:]}")


# Resolves when every markdown cell of the open notebook is rendered, by jupyterlab-myst
# (div.myst) or by JupyterLab's own renderer (which leaves MyST raw): their numbers.
RENDERED_JS = """(expected) => new Promise(resolve => {
    const t0 = Date.now();
    (function poll() {
        const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
        const cells = panel ? panel.querySelectorAll('.jp-MarkdownCell') : [];
        const myst = panel ? panel.querySelectorAll('.jp-MarkdownCell div.myst').length : 0;
        const plain = panel ? panel.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown').length : 0;
        if ((cells.length === expected && myst + plain >= expected) || Date.now() - t0 > 60000) {
            resolve({cells: cells.length, myst: myst, plain: plain});
        } else { setTimeout(poll, 200); }
    })();
})"""


def open_notebook(page, lab: Lab, notebook: str) -> dict:
    """Open <notebook> (e.g. chapters/en/x.ipynb) and wait until its markdown is rendered; returns the counts of
    markdown cells, those jupyterlab-myst rendered, and those rendered without it."""
    import nbformat

    nb = nbformat.read(lab.notebook_dir / notebook, as_version=4)
    expected = sum(c.cell_type == "markdown" for c in nb.cells)
    page.goto(lab.url(notebook))
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell", timeout=90_000)
    counts = page.evaluate(RENDERED_JS, expected)
    page.evaluate("document.fonts.ready")
    return dict(expected=expected, **counts)
