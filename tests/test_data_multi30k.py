"""aiayn.data.multi30k: reading the shared copy, refusing damaged files, downloading safely."""

import functools
import hashlib
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from aiayn.data import multi30k

ROOT = Path(__file__).resolve().parents[1]
# CI clones the repository with shared/ beside it; a local run may point AIAYN_DATA elsewhere.
DATA = Path(os.environ.get("AIAYN_DATA") or ROOT.parent / "shared" / "data")
needs_data = pytest.mark.skipif(not (DATA / "multi30k").is_dir(),
                                reason=f"Multi30k not found in {DATA}/multi30k (set AIAYN_DATA)")


def copy_split(split: str, folder: Path) -> Path:
    (folder / "multi30k").mkdir(parents=True, exist_ok=True)
    for lang in ("en", "de"):
        shutil.copy(DATA / "multi30k" / f"{split}.{lang}.gz", folder / "multi30k")
    return folder / "multi30k"


@needs_data
def test_every_split_loads_with_the_published_line_counts():
    for split, n in multi30k.NUM_LINES.items():
        en, de = multi30k.load_split(split, DATA)
        assert len(en) == len(de) == n
        assert all(isinstance(s, str) for s in en[:10] + de[:10])
    en, de = multi30k.load_split("train", DATA)
    assert en[0] == "Two young, White males are outside near many bushes."
    assert de[0] == "Zwei junge weiße Männer sind im Freien in der Nähe vieler Büsche."
    # The corpus's quirks survive: lines holding only "@@" (README) keep their places.
    assert de[16509] == de[16663] == "@@"


@needs_data
def test_data_dir_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("AIAYN_DATA", str(DATA))
    assert len(multi30k.load_split("val")[0]) == 1014


def test_no_data_dir_says_how_to_set_one(monkeypatch, tmp_path):
    monkeypatch.delenv("AIAYN_DATA", raising=False)
    monkeypatch.setattr(multi30k, "_BESIDE_REPOSITORY", tmp_path / "absent")
    with pytest.raises(ValueError, match="AIAYN_DATA"):
        multi30k.load_split("val")


def test_unknown_split_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="split must be one of"):
        multi30k.load_split("test2017", tmp_path)


@needs_data
@pytest.mark.parametrize("damage", ["flip one byte", "truncate"])
def test_a_damaged_file_is_an_error_naming_it(tmp_path, damage):
    folder = copy_split("val", tmp_path)
    path = folder / "val.de.gz"
    data = bytearray(path.read_bytes())
    if damage == "flip one byte":
        data[len(data) // 2] ^= 0x01
    else:
        data = data[: len(data) - 100]
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError) as err:
        multi30k.load_split("val", tmp_path)
    message = str(err.value)
    assert "val.de.gz" in message and multi30k.SHA256["val.de.gz"] in message
    assert hashlib.sha256(bytes(data)).hexdigest() in message and "Delete" in message


@needs_data
def test_line_counts_are_checked(tmp_path, monkeypatch):
    copy_split("val", tmp_path)
    monkeypatch.setitem(multi30k.NUM_LINES, "val", 1000)
    with pytest.raises(ValueError, match="1014 English and 1014 German lines, expected 1000"):
        multi30k.load_split("val", tmp_path)


def test_a_file_that_is_not_gzip_is_an_error(tmp_path, monkeypatch):
    (tmp_path / "multi30k").mkdir()
    for lang in ("en", "de"):
        fake = tmp_path / "multi30k" / f"val.{lang}.gz"
        fake.write_bytes(b"not gzip at all\n")
        monkeypatch.setitem(multi30k.SHA256, fake.name, multi30k.sha256_of(fake))
    with pytest.raises(ValueError, match="does not decompress"):
        multi30k.load_split("val", tmp_path)


class _Server:
    """Serves a folder on 127.0.0.1; ``corrupt=True`` flips one byte of every file served."""

    def __init__(self, folder: Path, corrupt: bool = False):
        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def copyfile(self, source, outputfile):
                data = bytearray(source.read())
                if corrupt:
                    data[10] ^= 0xFF
                outputfile.write(bytes(data))

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@needs_data
def test_missing_files_are_downloaded_verified_and_kept(tmp_path, monkeypatch):
    served = copy_split("val", tmp_path / "upstream")
    target = tmp_path / "local"
    with _Server(served) as server:
        monkeypatch.setattr(multi30k, "BASE_URL", server.url)
        en, de = multi30k.load_split("val", target)
    assert len(en) == len(de) == 1014
    assert sorted(p.name for p in (target / "multi30k").iterdir()) == ["val.de.gz", "val.en.gz"]
    assert (target / "multi30k" / "val.en.gz").read_bytes() == (served / "val.en.gz").read_bytes()


@needs_data
def test_a_corrupted_download_leaves_nothing_behind(tmp_path, monkeypatch):
    served = copy_split("val", tmp_path / "upstream")
    target = tmp_path / "local"
    with _Server(served, corrupt=True) as server:
        monkeypatch.setattr(multi30k, "BASE_URL", server.url)
        with pytest.raises(RuntimeError, match="sha256") as err:
            multi30k.load_split("val", target)
    assert "val.en.gz" in str(err.value) and "nothing was saved" in str(err.value)
    assert list((target / "multi30k").iterdir()) == []  # no partial file, no temporary file


def test_a_download_that_cannot_connect_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setattr(multi30k, "BASE_URL", "http://127.0.0.1:9/")  # nothing listens: refused
    with pytest.raises(multi30k.DownloadError) as err:
        multi30k.load_split("val", tmp_path / "data")
    message = str(err.value)
    assert f"{tmp_path / 'data' / 'multi30k' / 'val.en.gz'} is missing and downloading" in message
    assert "Connection refused" in message and "AIAYN_DATA" in message and "--data-dir" in message
    assert "did not exist: a typo?" in message
    assert isinstance(err.value, (multi30k.DataUnavailable, RuntimeError))
    assert list((tmp_path / "data" / "multi30k").iterdir()) == []  # no partial file
    with pytest.raises(multi30k.DataError):  # a ValueError too, as before
        monkeypatch.delenv("AIAYN_DATA", raising=False)
        monkeypatch.setattr(multi30k, "_BESIDE_REPOSITORY", tmp_path / "absent")
        multi30k.load_split("val")
