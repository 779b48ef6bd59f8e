"""Binder (mybinder.org, repo2docker) builds the course's environment from binder/: tested
offline as far as it goes. The files agree with the README's set-up (the same pins, the CPU
torch index, the same font, a Python the course supports, JupyterLab as the interface), and
postBuild, run in a fresh virtual environment from a clean copy of this commit, installs the
course package and clears a stale matplotlib font cache. Not testable here: mybinder.org itself."""

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BINDER = ROOT / "binder"
sys.path.insert(0, str(ROOT / "tools"))
import cjk_font  # noqa: E402


def test_binder_uses_the_same_pins_and_the_cpu_torch():
    lines = [l.strip() for l in (BINDER / "requirements.txt").read_text(encoding="utf8").splitlines()
             if l.strip() and not l.startswith("#")]
    assert "-r ../requirements.txt" in lines  # the very pins tools/setup.sh installs
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines
    pins = (ROOT / "requirements.txt").read_text(encoding="utf8")
    assert "jupyterlab==" in pins  # Binder opens JupyterLab (launch_buttons.notebook_interface)
    assert "jupyterlab-myst==" in pins  # ... which renders the chapters' MyST, as tools/lab.sh's does
    assert "torch==" in pins


def test_binder_python_and_font_are_those_of_the_set_up():
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf8").strip()
    assert runtime in ("python-3.11", "python-3.12")
    assert cjk_font.PACKAGE in (BINDER / "apt.txt").read_text(encoding="utf8").split()
    assert "fonts-wqy-microhei" in (ROOT / "tools" / "setup.sh").read_text(encoding="utf8")


def test_post_build_installs_the_course_in_a_fresh_environment(tmp_path):
    post_build = BINDER / "postBuild"
    assert post_build.stat().st_mode & 0o111, "binder/postBuild must be executable"
    # A clean copy of this commit, as repo2docker checks it out.
    checkout = tmp_path / "repo"
    checkout.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive.stdout, check=True)
    # A fresh environment whose dependencies (Binder's image has installed them from
    # requirements.txt by now) come through a .pth line; the course package is not there.
    env_dir = tmp_path / "venv"
    # pip, like the dependencies, comes through the .pth line (ensurepip would add 10 s).
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.check_output([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   text=True).strip()
    Path(site, "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = dict(os.environ, PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}",
               MPLCONFIGDIR=str(tmp_path / "mpl"), PIP_NO_INPUT="1",
               PIP_NO_BUILD_ISOLATION="0")  # setuptools is reachable: skip the isolated build env (speed)
    assert subprocess.run([str(python), "-c", "import aiayn"], env=env, capture_output=True).returncode != 0
    stale = tmp_path / "mpl" / "fontlist-v390.json"
    stale.parent.mkdir()
    stale.write_text("{}")
    result = subprocess.run(["bash", str(checkout / "binder" / "postBuild")], cwd=checkout, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    where = subprocess.run([str(python), "-c", "import aiayn, aiayn.pt.model; print(aiayn.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()) == checkout / "code" / "aiayn" / "__init__.py"
    assert not stale.exists(), "postBuild must drop matplotlib's font cache"
