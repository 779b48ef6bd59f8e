"""What a user gives the command-line tools, read with errors a user can act on.

Each problem the user can fix (a device that is not there, a checkpoint that is missing or is
not one, an input file that is missing, a folder, not UTF-8 or empty) ends the program with one
line on stderr, ``<prog>: error: <what>; <what to do>``, and exit status 2. Anything else is a
bug and keeps its traceback.
"""

import sys
from pathlib import Path
from typing import NoReturn

import torch

from ..data.tokenizer import SubwordTokenizer
from .checkpoint import CheckpointError, build_model, load_checkpoint


def fail(prog: str, message: str) -> NoReturn:
    """A user's mistake: one line on stderr, exit status 2, no traceback."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def check_device(prog: str, device: str) -> None:
    try:
        kind = torch.device(device).type
    except RuntimeError:
        fail(prog, f"--device {device!r} is not a device; use cpu, cuda or cuda:N")
    if kind == "cuda" and not torch.cuda.is_available():
        fail(prog, f"--device {device} but PyTorch sees no CUDA GPU here; use --device cpu")


def load_translator(prog: str, path: str, device: str):
    """(model, tokenizer) from an aiayn-train checkpoint, or one line saying what is wrong."""
    todo = "pass a checkpoint written by aiayn-train, e.g. runs/multi30k-cpu/averaged.pt"
    try:
        ckpt = load_checkpoint(path)
        metadata = ckpt.get("metadata")
        if not (isinstance(metadata, dict) and isinstance(metadata.get("tokenizer"), str)):
            raise CheckpointError("it holds no tokenizer (aiayn-train stores one in every checkpoint)")
        model = build_model(ckpt, device)
        try:
            tokenizer = SubwordTokenizer.from_str(metadata["tokenizer"])
        except Exception as err:  # the tokenizers library reports bad JSON as a bare Exception
            raise CheckpointError(f"its tokenizer cannot be read ({err})") from err
    except FileNotFoundError:
        fail(prog, f"checkpoint {path} not found; {todo} (aiayn-train --config multi30k-cpu "
                   "writes that one)")
    except IsADirectoryError:
        fail(prog, f"checkpoint {path} is a folder; pass a file in it, e.g. "
                   f"{Path(path) / 'averaged.pt'} (what aiayn-train writes into --out)")
    except PermissionError:
        fail(prog, f"checkpoint {path} cannot be read (permission denied); check its permissions")
    except CheckpointError as err:  # load_checkpoint names the file; the checks after it do not
        fail(prog, f"{err if str(path) in str(err) else f'checkpoint {path}: {err}'}; {todo}")
    return model, tokenizer


def read_sentences(prog: str, file: str | None) -> list[str]:
    """The lines of ``file`` (stdin if None), decoded as UTF-8; one line saying what is wrong if
    the file cannot be read, is not UTF-8 text, or holds no sentence."""
    where = f"input file {file}" if file else "standard input"
    try:
        if file:
            data = Path(file).read_bytes()
        elif hasattr(sys.stdin, "buffer"):
            data = sys.stdin.buffer.read()
        else:  # a text stream already (a test's StringIO)
            data = sys.stdin.read().encode("utf-8")
    except FileNotFoundError:
        fail(prog, f"{where} not found; pass a text file with one English sentence per line")
    except IsADirectoryError:
        fail(prog, f"{where} is a folder; pass a text file with one English sentence per line")
    except PermissionError:
        fail(prog, f"{where} cannot be read (permission denied); check its permissions")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        fail(prog, f"{where} is not UTF-8 text (byte 0x{data[err.start]:02x} at offset "
                   f"{err.start}); save it as UTF-8 (e.g. iconv -t UTF-8)")
    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        fail(prog, f"{where} is empty: nothing to translate; give one English sentence per line")
    return lines
