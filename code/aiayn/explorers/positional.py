"""The positional-encoding explorer: pick a pair of dimensions (2i, 2i+1), a position and an
offset k. Left, the pair as a clock hand, (PE[pos, 2i], PE[pos, 2i+1]) = (sin(pos w_i),
cos(pos w_i)) on the unit circle, at pos and at pos + k: whatever pos is, the second hand is the
first turned by k w_i, the rotation M_k. Right, PE[pos] . PE[pos+k] = sum_i cos(k w_i) against
the offset, the chosen k marked: the similarity of two positions depends on their distance only.

The hands are computed by the reader's browser from the formula (w_i = 10000^(-2i/d_model)),
the dot products by ``aiayn.lab.positional.offset_dot_product`` (three decimals);
tests/test_explorers_browser.py compares what the browser draws with the NumPy table.
"""

from __future__ import annotations

import numpy as np

from aiayn.lab.positional import offset_dot_product
from aiayn.language import tr

from .core import Explorer, slider, spec

SIZE = 240  # pixels, each panel


def positional_explorer(d_model: int = 128, *, pair: int = 0, pos: int = 5, k: int = 3,
                        max_offset: int = 50, max_pos: int = 50) -> Explorer:
    """Sliders: the pair i (0 .. d_model/2 - 1), the position pos (0 .. max_pos) and the offset
    k (-max_offset .. max_offset); the arguments give their first values."""
    for name, value in (("d_model", d_model), ("max_offset", max_offset), ("max_pos", max_pos)):
        if not isinstance(value, int) or value < 2:
            raise ValueError(f"{name}: an integer of at least 2, got {value!r}")
    if d_model % 2:
        raise ValueError(f"d_model={d_model} must be even: sin and cos fill dimensions in pairs")
    offsets = np.arange(-max_offset, max_offset + 1)
    dots = [{"k": int(o), "dot": round(float(v), 3)} for o, v in zip(offsets, offset_dot_product(offsets, d_model))]
    hand = tr("hand", "指针")
    angle = "(pos + k) * omega"
    circle = {
        "width": SIZE, "height": SIZE,
        "title": tr("pair i as a clock hand at pos and pos + k", "第 i 对是时钟指针：pos 与 pos + k"),
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "scale": {"domain": [-1.15, 1.15]},
                  "title": "PE[pos, 2i] = sin(pos·ω_i)"},
            "y": {"field": "y", "type": "quantitative", "scale": {"domain": [-1.15, 1.15]},
                  "title": "PE[pos, 2i+1] = cos(pos·ω_i)"},
        },
        "layer": [
            {"data": {"sequence": {"start": 0, "stop": 361, "as": "deg"}},
             "transform": [{"calculate": "sin(datum.deg * PI / 180)", "as": "x"},
                           {"calculate": "cos(datum.deg * PI / 180)", "as": "y"}],
             "mark": {"type": "line", "color": "#cccccc", "strokeWidth": 1}, "encoding": {"order": {"field": "deg"}}},
            {"data": {"sequence": {"start": 0, "stop": max_pos + max_offset + 1, "as": "p"}},
             "transform": [{"calculate": "sin(datum.p * omega)", "as": "x"},
                           {"calculate": "cos(datum.p * omega)", "as": "y"}],
             "mark": {"type": "point", "filled": True, "size": 12, "color": "#bbbbbb"}},
            {"data": {"values": [{"hand": "pos", "at": 0}, {"hand": "pos + k", "at": 1}]},
             "transform": [{"calculate": f"datum.at == 0 ? pos * omega : {angle}", "as": "a"},
                           {"calculate": "sin(datum.a)", "as": "x"}, {"calculate": "cos(datum.a)", "as": "y"},
                           {"calculate": "round(datum.x * 1000) / 1000", "as": "sin"},
                           {"calculate": "round(datum.y * 1000) / 1000", "as": "cos"}],
             "layer": [
                 {"mark": {"type": "rule", "strokeWidth": 3},
                  "encoding": {"x2": {"datum": 0}, "y2": {"datum": 0},
                               "color": {"field": "hand", "type": "nominal", "title": hand,
                                         "scale": {"domain": ["pos", "pos + k"], "range": ["#1f77b4", "#d62728"]},
                                         "legend": {"orient": "bottom"}}}},
                 {"mark": {"type": "point", "filled": True, "size": 90},
                  "encoding": {"color": {"field": "hand", "type": "nominal"},
                               "tooltip": [{"field": "hand", "title": hand}, {"field": "sin", "title": "sin"},
                                           {"field": "cos", "title": "cos"}]}},
             ]},
            {"data": {"values": [{}]},
             "mark": {"type": "text", "align": "left", "x": 4, "y": 10, "fontSize": 11},
             "encoding": {"text": {"value": {"expr": tr(
                 "'turned by k·ω_i = ' + format(k * omega, '.3f') + ' rad, whatever pos is'",
                 "'转过 k·ω_i = ' + format(k * omega, '.3f') + ' 弧度，与 pos 无关'")}},
                          "x": {"value": 4}, "y": {"value": 10}}},
        ],
    }
    curve = {
        "width": SIZE, "height": SIZE,
        "title": tr(f"all {d_model // 2} pairs: PE[pos] · PE[pos+k]", f"全部 {d_model // 2} 对：PE[pos] · PE[pos+k]"),
        "data": {"values": dots},
        "encoding": {"x": {"field": "k", "type": "quantitative", "title": tr("offset k", "偏移 k")},
                     "y": {"field": "dot", "type": "quantitative", "title": "PE[pos] · PE[pos+k]"}},
        "layer": [
            {"mark": {"type": "line", "color": "#555555"}},
            {"transform": [{"filter": "datum.k == k"}],
             "mark": {"type": "point", "filled": True, "size": 90, "color": "#d62728"},
             "encoding": {"tooltip": [{"field": "k", "title": "k"}, {"field": "dot", "title": "PE[pos] · PE[pos+k]"}]}},
            {"transform": [{"filter": "datum.k == k"}],
             "mark": {"type": "text", "align": "left", "dx": 8, "dy": -8, "fontSize": 11},
             "encoding": {"text": {"field": "dot", "type": "quantitative", "format": ".2f"}}},
        ],
    }
    body = {
        "params": [
            slider("pair", tr("pair i", "第 i 对"), pair, 0, d_model // 2 - 1),
            slider("pos", "pos", pos, 0, max_pos),
            slider("k", tr("offset k", "偏移 k"), k, -max_offset, max_offset),
            {"name": "d_model", "value": d_model},
            {"name": "omega", "expr": "pow(10000, -2 * pair / d_model)"},
        ],
        "hconcat": [circle, curve],
        "spacing": 30,
    }
    return Explorer(spec(body, description=tr(
        "The sinusoidal positional encoding: one pair as a clock hand at pos and pos + k, and the "
        "dot product of two positions against their offset.",
        "正弦位置编码：一对维度在 pos 与 pos + k 处的时钟指针，以及两个位置的点积随偏移的变化。")))
