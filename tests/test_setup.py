"""tools/setup.sh's decisions, on machines this one is not: which browser the browser test gets
(tools/find_browser.py) on Debian, Ubuntu, GitHub's runners and without root, from fake PATHs
and fake apt answers; the per-user CJK font (tools/cjk_font.py) and its checksum; the rule that
a missing browser skips on a reader's machine and fails under CI=true."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import cjk_font  # noqa: E402
import find_browser  # noqa: E402
from find_browser import apt_offers_chromium, is_snap_wrapper, plan  # noqa: E402

# `apt-cache show chromium` as Debian 12 answers (abridged), and as Ubuntu answers for the only
# package it has, the snap transition (Ubuntu has no package named chromium: apt-cache prints
# nothing on stdout for it).
DEBIAN_SHOW = """Package: chromium
Version: 156.0.8078.79-1~deb12u1
Architecture: amd64
Description: web browser
 Web browser that aims to build a safer, faster, and more stable internet
 browsing experience.
"""
UBUNTU_BROWSER_SHOW = """Package: chromium-browser
Version: 2:1snap1-0ubuntu2
Description: Transitional package - chromium-browser -> chromium snap
 This is a transitional dummy package. It can safely be removed.
"""


def executable(folder: Path, name: str, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path):
    """Empty folders for /usr/bin-like PATH entries; nothing installed yet."""
    return tmp_path


def env_with(*folders: Path, **extra) -> dict:
    return {"PATH": os.pathsep.join(str(f) for f in folders), **extra}


def test_debian_with_chromium_installed_uses_it(machine):
    debian = executable(machine / "usr-bin", "chromium")
    choice = plan(env_with(machine / "usr-bin"), DEBIAN_SHOW, True, known=(str(debian),))
    assert (choice.path, choice.how) == (str(debian), "found")


def test_debian_without_a_browser_installs_the_package_when_root(machine):
    choice = plan(env_with(machine / "usr-bin"), DEBIAN_SHOW, True, known=())
    assert choice.how == "apt" and choice.path is None
    assert "installing Debian's chromium" in choice.detail


def test_debian_without_root_goes_to_playwright_and_says_why(machine):
    choice = plan(env_with(machine / "usr-bin"), DEBIAN_SHOW, False, known=())
    assert choice.how == "playwright"
    assert "needs root or sudo" in choice.detail


def test_ubuntu_snap_wrapper_is_passed_over_and_apt_is_not_tried(machine):
    wrapper = executable(machine / "usr-bin", "chromium-browser",
                         "#!/bin/sh\n# transitional wrapper\nexec /snap/bin/chromium \"$@\"\n")
    assert is_snap_wrapper(str(wrapper))
    for show in ("", UBUNTU_BROWSER_SHOW):  # no chromium package; only the snap transition
        assert not apt_offers_chromium(show)
        choice = plan(env_with(machine / "usr-bin"), show, True, known=())
        assert choice.how == "playwright", choice
        assert str(wrapper) in choice.detail and "snap" in choice.detail


def test_ubuntu_with_google_chrome_uses_it(machine):
    executable(machine / "usr-bin", "chromium-browser", "#!/bin/sh\nexec /snap/bin/chromium\n")
    chrome = executable(machine / "opt-google", "google-chrome")
    choice = plan(env_with(machine / "usr-bin", machine / "opt-google"), "", True, known=())
    assert (choice.path, choice.how) == (str(chrome), "found")


def test_github_runner_uses_its_chromium_snapshot_before_chrome(machine):
    """GitHub's Ubuntu images unpack a Chromium snapshot in /usr/local/share/chromium and link it
    as /usr/bin/chromium and chromium-browser, next to Google Chrome (runner-images'
    install-google-chrome.sh). A symlink to a real binary is not a snap wrapper."""
    real = executable(machine / "usr-local-share" / "chromium" / "chrome-linux", "chrome",
                      "\x7fELF not really\n")
    bin_dir = machine / "usr-bin"
    bin_dir.mkdir()
    (bin_dir / "chromium").symlink_to(real)
    (bin_dir / "chromium-browser").symlink_to(real)
    executable(bin_dir, "google-chrome")
    choice = plan(env_with(bin_dir), "", True, known=())
    assert choice.how == "found" and os.path.realpath(choice.path) == str(real)
    assert Path(choice.path).name == "chromium"


def test_override_wins_and_a_bad_override_says_so(machine):
    mine = executable(machine / "elsewhere", "my-chrome")
    executable(machine / "usr-bin", "chromium")
    assert plan(env_with(machine / "usr-bin", AIAYN_CHROMIUM=str(mine)), "", True).path == str(mine)
    bad = plan(env_with(machine / "usr-bin", AIAYN_CHROMIUM=str(machine / "nope")), "", True)
    assert bad.path is None and "is not an executable file" in bad.detail


def test_missing_browser_fails_under_ci_and_skips_otherwise():
    assert find_browser.missing_browser_fails({"CI": "true"})
    assert find_browser.missing_browser_fails({"CI": "1"})
    assert not find_browser.missing_browser_fails({})
    assert not find_browser.missing_browser_fails({"CI": "false"})


def test_chosen_reads_what_setup_recorded_and_falls_back_to_detection(tmp_path, monkeypatch):
    record = tmp_path / "aiayn-browser.json"
    monkeypatch.setattr(find_browser, "RECORD", record)
    browser = executable(tmp_path / "bin", "chromium")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("AIAYN_CHROMIUM", raising=False)
    monkeypatch.setattr(find_browser, "KNOWN_PATHS", ())
    record.write_text('{"path": "%s", "how": "playwright", "detail": "downloaded"}' % browser)
    assert find_browser.chosen().how == "playwright"
    record.unlink()
    assert find_browser.chosen().path == str(browser)
    browser.unlink()
    nothing = find_browser.chosen()
    assert nothing.path is None and "run tools/setup.sh, or set AIAYN_CHROMIUM" in nothing.detail


def test_command_line_reports_the_choice():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "find_browser.py")],
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.startswith("browser: "), result.stdout + result.stderr
    assert result.returncode == (0 if find_browser.chosen().path else 1)


# The per-user font: a real .deb, built here with dpkg-deb, stands in for the download.

needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is Debian/Ubuntu's")


def fake_font_deb(tmp_path: Path, content: bytes) -> Path:
    tree = tmp_path / "pkg"
    font = tree / cjk_font.FONT_FILE
    font.parent.mkdir(parents=True)
    font.write_bytes(content)
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN" / "control").write_text(
        "Package: fonts-wqy-microhei\nVersion: 0.2.0-beta-3.1\nArchitecture: all\n"
        "Maintainer: test <test@example.org>\nDescription: test package\n")
    deb = tmp_path / "fonts-wqy-microhei_0.2.0-beta-3.1_all.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree), str(deb)],
                   check=True, capture_output=True)
    return deb


@needs_dpkg
def test_font_goes_to_the_users_font_folder_when_its_checksum_matches(tmp_path):
    content = b"a font file"
    deb = fake_font_deb(tmp_path, content)
    home = tmp_path / "home"
    target = cjk_font.install_from_deb(deb, {"HOME": str(home)}, hashlib.sha256(content).hexdigest())
    assert target == home / ".local" / "share" / "fonts" / "wqy-microhei.ttc"
    assert target.read_bytes() == content
    xdg = cjk_font.install_from_deb(deb, {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg")},
                                    hashlib.sha256(content).hexdigest())
    assert xdg == tmp_path / "xdg" / "fonts" / "wqy-microhei.ttc"


@needs_dpkg
def test_font_with_another_checksum_is_refused(tmp_path):
    deb = fake_font_deb(tmp_path, b"something else")
    with pytest.raises(cjk_font.FontError, match="has sha256 .* expected " + cjk_font.SHA256):
        cjk_font.install_from_deb(deb, {"HOME": str(tmp_path / "home")})
    assert not (tmp_path / "home").exists()
    not_a_deb = tmp_path / "broken.deb"
    not_a_deb.write_bytes(b"not an archive")
    with pytest.raises(cjk_font.FontError, match="not a readable .deb"):
        cjk_font.install_from_deb(not_a_deb, {"HOME": str(tmp_path / "home")})


@pytest.mark.skipif(not Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc").is_file(),
                    reason="the system font is not installed here")
def test_pinned_checksum_is_the_distribution_font():
    system = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")
    assert hashlib.sha256(system.read_bytes()).hexdigest() == cjk_font.SHA256


@pytest.mark.parametrize("asked", ["python3.99", "{tmp}/python3.10"])
def test_a_python_asked_for_that_does_not_run_stops_setup_instead_of_falling_back(tmp_path, asked):
    """AIAYN_PYTHON is CI's Python matrix: setting up with python3 instead would report the
    other version's tests as this one's. (A pyenv shim of a version not selected is such a case.)"""
    repo = tmp_path / "repo"
    (repo / "tools").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "setup.sh", repo / "tools" / "setup.sh")
    executable(tmp_path, "python3.10", "#!/bin/sh\nexit 1\n")  # runs, but is older than 3.11
    path = os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"])  # python3 works
    result = subprocess.run(["bash", str(repo / "tools" / "setup.sh")], capture_output=True, text=True,
                            env=env_with(path, AIAYN_PYTHON=asked.format(tmp=tmp_path)))
    assert result.returncode == 1
    assert f"AIAYN_PYTHON={asked.format(tmp=tmp_path)} does not run as Python 3.11 or newer" in result.stderr
    assert not (repo / ".venv").exists()
