"""The Colab set-up cell (tools/colab_cell.py, code/aiayn/colab.py), proven offline:

- every chapter notebook starts with the same cell, hidden from the book, and records its
  language in its metadata;
- outside Colab the cell does nothing (no import beyond sys, no file, no environment change);
- on a "Colab" simulated here, the cell's own code, run in a fresh virtual environment that
  does not have the course package, clones the repository (a local copy of this commit, on the
  branch _config.yml names), installs the package, calls apt for the font (a stand-in apt-get
  records the call), downloads Multi30k from a local mirror and checks it, and leaves the kernel
  in chapters/<lang> of the clone, where `import aiayn`, the exercises and the labels' language
  all resolve as in a checkout.
What cannot be tested offline: Colab itself, GitHub, and its apt mirror.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import colab_cell  # noqa: E402
from browser import serve  # noqa: E402  (serves a folder on 127.0.0.1: here, a Multi30k mirror)

DATA = Path(os.environ.get("AIAYN_DATA", ROOT.parent / "shared" / "data")) / "multi30k"
NOTEBOOKS = colab_cell.notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT / "chapters").as_posix())
def test_every_chapter_starts_with_the_same_hidden_set_up_cell(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "code" and first.get("id") == colab_cell.CELL_ID, \
        "run `.venv/bin/python tools/colab_cell.py` to insert the Colab set-up cell"
    assert first.source == colab_cell.cell_source(), "the cell differs: run tools/colab_cell.py"
    assert first.metadata.get("tags") == ["remove-cell"]
    assert first.outputs == []
    assert nb.metadata["aiayn"]["lang"] == path.parent.name


def test_cell_installs_from_the_branch_the_book_is_built_from():
    repository = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["repository"]
    source = colab_cell.cell_source()
    assert f'"--branch", "{repository["branch"]}"' in source and f'"{repository["url"]}"' in source


def test_cell_does_nothing_outside_colab(tmp_path):
    probe = f"""
import os, sys, json
before = (set(sys.modules), list(sys.path), dict(os.environ), os.getcwd(), sorted(os.listdir('.')))
namespace = {{}}
exec({colab_cell.cell_source()!r}, namespace)
after = (set(sys.modules), list(sys.path), dict(os.environ), os.getcwd(), sorted(os.listdir('.')))
print(json.dumps({{"same": before == after, "names": sorted(k for k in namespace if k != "__builtins__")}}))
"""
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report == {"same": True, "names": ["sys"]}


FAKE_MESSAGE = '''def blocking_request(request, timeout_sec=None):
    assert request == "get_ipynb"
    return {"ipynb": {"metadata": {"aiayn": {"lang": "zh"}}}}
'''
FAKE_APT = '#!/bin/sh\necho "$@" >> "$APT_LOG"\n'


@pytest.mark.skipif(not (DATA / "train.en.gz").is_file(), reason=f"no Multi30k at {DATA} to serve")
def test_cell_sets_up_a_fresh_environment_like_colab(tmp_path):
    branch = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["repository"]["branch"]
    remote = tmp_path / "remote.git"  # this commit, as GitHub would serve it
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(ROOT), "push", "-q", str(remote), f"HEAD:refs/heads/{branch}"],
                   check=True, capture_output=True)
    # A fresh environment without the course package. The course's dependencies are reachable
    # through a .pth line (as Colab has numpy, torch, ... preinstalled); that line is not a site
    # folder, so the editable install of aiayn living there is not: `import aiayn` fails.
    env_dir = tmp_path / "venv"
    # pip, like the dependencies, comes through the .pth line (ensurepip would add 10 s).
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                        text=True).strip())
    (site / "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    missing = subprocess.run([str(python), "-c", "import aiayn"], capture_output=True, text=True)
    assert missing.returncode != 0 and "No module named 'aiayn'" in missing.stderr
    # Colab's module, and apt, as stand-ins.
    fake = tmp_path / "fake"
    (fake / "google" / "colab").mkdir(parents=True)
    (fake / "google" / "colab" / "__init__.py").write_text("")
    (fake / "google" / "colab" / "_message.py").write_text(FAKE_MESSAGE)
    (fake / "bin").mkdir()
    (fake / "bin" / "apt-get").write_text(FAKE_APT)
    (fake / "bin" / "apt-get").chmod(0o755)
    content = tmp_path / "content"
    content.mkdir()
    clone = content / "attention-is-all-you-need"
    source = colab_cell.cell_source()
    url = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf8"))["repository"]["url"]
    assert source.count(f'"{url}"') == 1 and source.count(f'"{colab_cell.CLONE}"') == 1
    source = source.replace(f'"{url}"', f'"file://{remote}"').replace(f'"{colab_cell.CLONE}"', f'"{clone}"')
    check = """
import hashlib, os, sys
import aiayn, aiayn.grading, aiayn.plotting
from aiayn.data import multi30k
print("AIAYN", aiayn.__file__)
print("CWD", os.getcwd())
print("LANG", aiayn.plotting.current_language())
print("EXERCISES", aiayn.grading.exercises_dir())
print("DATA", os.environ["AIAYN_DATA"])
print("TRAIN", len(multi30k.load_split("train")[0]))
"""
    script = (f"import sys\nsys.path.insert(0, {str(fake)!r})\nimport google.colab\n"
              f"exec({source!r})\nexec({check!r})\n")
    with serve(DATA) as url_of_mirror:
        env = dict(os.environ, PATH=f"{fake / 'bin'}{os.pathsep}{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}",
                   APT_LOG=str(tmp_path / "apt.log"), AIAYN_MULTI30K_URL=url_of_mirror,
                   MPLCONFIGDIR=str(tmp_path / "mpl"), PIP_NO_INPUT="1",
               PIP_NO_BUILD_ISOLATION="0")  # setuptools is reachable: skip the isolated build env (speed)
        env.pop("AIAYN_DATA", None)
        result = subprocess.run([str(python), "-c", script], cwd=content, env=env,
                                capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
    assert lines["Colab"].startswith("set-up done"), result.stdout
    assert Path(lines["AIAYN"]) == clone / "code" / "aiayn" / "__init__.py"
    assert Path(lines["CWD"]) == clone / "chapters" / "zh"
    assert lines["LANG"] == "zh"
    assert Path(lines["EXERCISES"]) == clone / "exercises"
    assert Path(lines["DATA"]) == content / "aiayn-data"
    assert lines["TRAIN"] == "29000"
    assert sorted(p.name for p in (content / "aiayn-data" / "multi30k").iterdir()) == \
        sorted(p.name for p in DATA.iterdir() if p.name.endswith(".gz"))
    assert "install -y -qq fonts-wqy-microhei" in (tmp_path / "apt.log").read_text()
