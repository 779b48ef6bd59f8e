"""The public workflows (.github/workflows): valid for GitHub Actions by its published schema
(check-jsonschema's vendored copy, no network), clean YAML (yamllint), and doing what the README
promises: CI runs the README's test command on ubuntu-latest for Python 3.11 and 3.12 with pip
cached; the book workflow builds with the README's book command; neither installs anything the
README's commands do not."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent
YAMLLINT_RULES = ("{extends: default, rules: {line-length: {max: 110}, document-start: disable, "
                  "truthy: {check-keys: false}}}")  # `on:` is GitHub's key, not a boolean


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / name).read_text(encoding="utf8"))


def test_workflows_exist():
    assert {p.name for p in WORKFLOWS} == {"ci.yml", "book.yml", "gpu.yml"}


@pytest.mark.parametrize("tool", [
    [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows"],
    [str(BIN / "yamllint"), "--strict", "-d", YAMLLINT_RULES],
], ids=["actions-schema", "yamllint"])
def test_workflows_pass_the_linters(tool):
    result = subprocess.run(tool + [str(p) for p in WORKFLOWS], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_linters_catch_a_broken_workflow(tmp_path):
    """The schema check is not vacuous: a job without runs-on and a step with an unknown key fail."""
    broken = tmp_path / "broken.yml"
    broken.write_text("name: x\non: push\njobs:\n  test:\n    steps:\n      - rnu: echo hi\n")
    result = subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema",
                             "vendor.github-workflows", str(broken)], capture_output=True, text=True)
    assert result.returncode != 0


def test_ci_runs_the_readme_test_command_on_both_pythons_with_pip_cached():
    job = load("ci.yml")["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["strategy"]["matrix"]["python-version"] == ["3.11", "3.12"]
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "${{ matrix.python-version }}"
    assert setup["with"]["cache"] == "pip"
    assert "requirements.txt" in setup["with"]["cache-dependency-path"]
    assert job["env"]["AIAYN_PYTHON"] == "python"  # .venv is built with the matrix's Python
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash .ci/run"]


def test_book_workflow_uses_only_the_readme_book_command_and_the_colab_export():
    build = load("book.yml")["jobs"]["build"]
    assert [s["run"] for s in build["steps"] if "run" in s] == [
        "bash tools/book.sh", ".venv/bin/python tools/export_colab.py _build/colab"]
    setup = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["cache"] == "pip"


def test_setup_honours_the_python_the_workflow_chose():
    setup = (ROOT / "tools" / "setup.sh").read_text(encoding="utf8")
    assert 'if [ -n "${AIAYN_PYTHON:-}" ]; then candidates=("$AIAYN_PYTHON")' in setup


def test_gpu_job_runs_the_gpu_check_on_a_self_hosted_gpu_runner_by_hand_and_weekly():
    workflow = load("gpu.yml")
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as a boolean
    assert set(triggers) == {"workflow_dispatch", "schedule"}
    assert triggers["schedule"][0]["cron"].split()[-1] == "1"  # weekly
    job = workflow["jobs"]["gpu"]
    assert job["runs-on"] == ["self-hosted", "gpu"]
    # The command a person runs by hand on a CUDA machine, and nothing else; no CPU wheel index
    # (the pinned torch must come as PyPI's CUDA build).
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash tools/gpu_check.sh"]
    assert "PIP_EXTRA_INDEX_URL" not in str(workflow)


def test_gpu_check_covers_the_training_chapters_in_both_languages_and_refuses_a_cpu(tmp_path):
    script = (ROOT / "tools" / "gpu_check.sh").read_text(encoding="utf8")
    setup = 'bash "$root/tools/setup.sh"\n'
    assert setup in script
    assert "chapters/en/training_multi30k.ipynb chapters/zh/training_multi30k.ipynb" in script
    assert "tests/test_core_torch_vs_nn.py" in script
    import torch
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the refusal cannot be shown here")
    # On a CPU-only machine it stops with exit status 2 and one line, before any test runs: the
    # script, set-up left out, in a copy of the tree that holds only it and this .venv.
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "gpu_check.sh").write_text(script.replace(setup, ""), encoding="utf8")
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    result = subprocess.run(["bash", str(tmp_path / "tools" / "gpu_check.sh")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "gpu_check: this torch sees no CUDA device; run it on a machine with an NVIDIA GPU and its driver"]
