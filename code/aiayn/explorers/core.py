"""What every explorer is: a Vega-Lite 5 specification that a notebook output carries, with a
still image of its first view and a one-line note for the places that cannot run it.

An ``Explorer`` displays as one output with three representations:

- ``application/vnd.vegalite.v5+json``: the specification. JupyterLab renders it itself (its
  vega5 extension, which knows Vega-Lite 3 to 5, hence v5 here); the book renders it through
  _ext/explorers.py, which embeds it in the page with Vega, Vega-Lite and vega-embed bundled
  into the build, so nothing is fetched when a reader opens the page;
- ``image/png``: a still of the first view (vl-convert, when installed), for a viewer that
  renders neither (GitHub, Colab's copy: tools/export_colab.py puts the note above it);
- ``text/plain``: the note.

nbval compares the specification and the note, and skips the image, as it does for every figure:
the specifications hold data rounded to what a processor cannot move.
"""

from __future__ import annotations

import base64
import copy
import json

from aiayn.language import tr

MIME = "application/vnd.vegalite.v5+json"
SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"  # never fetched: read for its version
VEGA_LITE = "5.21"  # the Vega-Lite of the book's bundle and of the stills (vl-convert)
# vega-embed's options wherever the spec is embedded: no action menu (it links the online editor).
EMBED_OPTIONS = {"actions": False}


def note() -> str:
    """The one line shown where the explorer cannot run."""
    return tr("Interactive explorer: it runs in the book and in JupyterLab; this is a still of its first view.",
              "交互式探索图：在书中和 JupyterLab 中可以操作；这里是它初始视图的静态图。")


def still_png(spec: dict, scale: float = 1.0) -> bytes | None:
    """A PNG of the specification's first view, or None where vl-convert is not installed
    (Colab's own runs, say: the specification still displays wherever Vega-Lite renders)."""
    try:
        import vl_convert
    except ImportError:
        return None
    return vl_convert.vegalite_to_png(spec, vl_version=VEGA_LITE, scale=scale)


class Explorer:
    """One interactive figure: ``spec`` (a Vega-Lite 5 dict) and how it displays."""

    def __init__(self, spec: dict, *, still: bool = True):
        if not isinstance(spec, dict) or spec.get("$schema") != SCHEMA:
            raise ValueError(f"spec: a Vega-Lite 5 specification with $schema {SCHEMA!r}")
        self.spec, self.still = spec, still

    def to_json(self) -> str:
        return json.dumps(self.spec, ensure_ascii=False, separators=(",", ":"))

    def _repr_mimebundle_(self, include=None, exclude=None):
        data = {MIME: copy.deepcopy(self.spec), "text/plain": note()}
        png = still_png(self.spec) if self.still else None
        if png is not None:
            data["image/png"] = base64.b64encode(png).decode("ascii")
        return data, {MIME: {"embed_options": dict(EMBED_OPTIONS)}}

    def __repr__(self) -> str:
        return f"Explorer({len(self.to_json()):,} characters of Vega-Lite)"


def spec(body: dict, *, description: str) -> dict:
    """A top-level specification: the schema, a description and the course's look around ``body``."""
    return {
        "$schema": SCHEMA,
        "description": description,
        "config": {
            "font": "sans-serif",
            "view": {"stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "labelLimit": 120},
            "legend": {"labelFontSize": 11, "titleFontSize": 12},
            "title": {"fontSize": 13, "anchor": "start"},
        },
        **body,
    }


def slider(name: str, label: str, value: int, lo: int, hi: int) -> dict:
    """A parameter bound to a range input named ``name`` (what a test or a reader moves)."""
    if not lo <= value <= hi:
        raise ValueError(f"{name}: value {value} outside [{lo}, {hi}]")
    return {"name": name, "value": value,
            "bind": {"input": "range", "min": lo, "max": hi, "step": 1, "name": label + " "}}


def select(name: str, label: str, value, options: list, labels: list[str]) -> dict:
    """A parameter bound to a drop-down list named ``name``."""
    if value not in options or len(options) != len(labels):
        raise ValueError(f"{name}: value {value!r} not among the options, or labels missing")
    return {"name": name, "value": value,
            "bind": {"input": "select", "options": options, "labels": labels, "name": label + " "}}


def thousandths(values) -> list:
    """Weights in [0, 1] as integers 0..1000 (nested lists kept): a third the characters of
    '0.123', exact to the three decimals the data holds. The spec divides by 1000."""
    if isinstance(values, (list, tuple)):
        return [thousandths(v) for v in values]
    return int(round(float(values) * 1000))
