"""Multi30k (task 1, English-German): the parallel text of the training chapter.

Files are gzip text, one sentence per line; line i of ``<split>.en.gz`` translates line i of
``<split>.de.gz``. They live in ``<data_dir>/multi30k/``. A missing file is downloaded from the
upstream repository; every file, downloaded or already there, must match the sha256 below
(taken from the files' published copies), so a truncated or edited file is an error, never a
silently shorter corpus.

    en, de = load_split("train")          # 29000 sentence pairs

Every problem with the data (no folder configured, a file missing that cannot be downloaded,
a damaged file) raises a ``DataUnavailable`` whose message names the file and says what to
do; ``aiayn-train`` prints that one line and exits with status 2.
"""

import gzip
import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
import zlib
from pathlib import Path

SPLITS = ("train", "val", "test_2016_flickr")
LANGUAGES = ("en", "de")
# $AIAYN_MULTI30K_URL names a mirror (the files and their sha256 must be the same); the
# Colab set-up test serves them from 127.0.0.1.
BASE_URL = os.environ.get("AIAYN_MULTI30K_URL",
                          "https://github.com/multi30k/dataset/raw/master/data/task1/raw/")
SHA256 = {
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.de.gz": "726e39b2fa9eb9ffb6dc763fb35a179f80fae06ffc5d28b6ace5faa883de28a6",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.de.gz": "f0cba2f995189cf5770f29a8a9a537a3ad3f51657ad873405082ff6863a5e75a",
    "test_2016_flickr.en.gz": "611d361c6334bc7246101d48097c13cf5c4413c5befc793cc629934359d532d9",
    "test_2016_flickr.de.gz": "9204244e408ccb38d2a55cfcd344df15005fc42a07a6e55ca6c52b6ababb8cc8",
}
NUM_LINES = {"train": 29000, "val": 1014, "test_2016_flickr": 1000}
# <repository>/../shared/data: where a checkout of the course finds the data next to it.
_BESIDE_REPOSITORY = Path(__file__).resolve().parents[3].parent / "shared" / "data"
_WHERE = "set AIAYN_DATA (aiayn-train: --data-dir) to the folder that holds multi30k/"


class DataUnavailable(Exception):
    """The corpus cannot be read: the message names the file and says what to do."""


class DataError(DataUnavailable, ValueError):
    """No data folder, or a file that is damaged or not what it should be."""


class DownloadError(DataUnavailable, RuntimeError):
    """A missing file that could not be downloaded, or whose download was damaged."""


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The folder that holds ``multi30k/``: the argument, else ``$AIAYN_DATA``, else
    ``../shared/data`` beside the repository when that exists."""
    chosen = data_dir or os.environ.get("AIAYN_DATA") or (
        _BESIDE_REPOSITORY if _BESIDE_REPOSITORY.is_dir() else None)
    if not chosen:
        raise DataError(
            "no data folder: pass data_dir=... (aiayn-train: --data-dir) or set the environment "
            "variable AIAYN_DATA to a folder (e.g. `export AIAYN_DATA=$HOME/aiayn-data`); "
            "Multi30k is read from, or downloaded into, its subfolder multi30k/")
    return Path(chosen)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(name: str, target: Path) -> None:
    """Downloads to a temporary file in the target's folder, checks it, then renames it:
    an interrupted or corrupted download never leaves a file under the final name."""
    data_dir_existed = target.parent.parent.exists()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise DataError(f"{target} is missing and its folder cannot be created ({err.strerror}); "
                        f"{_WHERE}") from err
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=target.parent)
    try:
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(BASE_URL + name, timeout=60) as r:
                while block := r.read(1 << 20):
                    out.write(block)
        except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
            typo = "" if data_dir_existed else f" ({target.parent.parent} did not exist: a typo?)"
            raise DownloadError(
                f"{target} is missing and downloading {BASE_URL + name} failed "
                f"({getattr(err, 'reason', None) or err}); put the six Multi30k files in "
                f"{target.parent} yourself, or {_WHERE}{typo}") from err
        actual = sha256_of(Path(tmp))
        if actual != SHA256[name]:
            raise DownloadError(
                f"downloaded {BASE_URL + name} but its sha256 is {actual}, expected "
                f"{SHA256[name]}; nothing was saved. Try again later, or download the file "
                f"yourself into {target.parent}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def ensure_file(name: str, folder: Path) -> Path:
    """``folder/name``, downloaded if missing, and verified against its sha256."""
    if name not in SHA256:
        raise ValueError(f"unknown Multi30k file {name!r}; known: {sorted(SHA256)}")
    path = folder / name
    if not path.exists():
        _download(name, path)
    actual = sha256_of(path)
    if actual != SHA256[name]:
        raise DataError(
            f"{path} is corrupt or incomplete: sha256 {actual}, expected {SHA256[name]}. "
            "Delete the file; it will be downloaded again on the next call")
    return path


def _read_lines(path: Path) -> list[str]:
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
            text = f.read()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise DataError(f"{path} does not decompress ({err}); delete it to download it again") from err
    # split("\n"), not splitlines(): the latter also splits at U+2028 and friends.
    return text.removesuffix("\n").split("\n") if text else []


def load_split(split: str, data_dir: str | os.PathLike | None = None) -> tuple[list[str], list[str]]:
    """(English sentences, German sentences) of ``split`` in "train", "val", "test_2016_flickr"."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    folder = resolve_data_dir(data_dir) / "multi30k"
    en, de = (_read_lines(ensure_file(f"{split}.{lang}.gz", folder)) for lang in LANGUAGES)
    if not len(en) == len(de) == NUM_LINES[split]:
        raise DataError(f"{folder}: {split} has {len(en)} English and {len(de)} German lines, "
                        f"expected {NUM_LINES[split]} of each; delete the two files to download "
                        "them again")
    return en, de
