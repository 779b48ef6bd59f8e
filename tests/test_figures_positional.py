"""aiayn.figures.positional: the clock hands are the table's own numbers, the counter counts,
and the drawing works in both languages, deterministically."""

import warnings

import numpy as np
import pytest

from aiayn.figures.positional import clock_hands, counter_bits, draw_clock_hands
from aiayn.np.embeddings import sinusoidal_table
from figure_helpers import png


def test_a_hand_is_a_pair_of_the_table_pointing_at_twelve_for_position_0():
    hands = clock_hands(10, 8)
    table = sinusoidal_table(10, 8)
    assert hands.shape == (10, 4, 2)
    np.testing.assert_array_equal(hands[3, 2], table[3, 4:6])  # pair 2 = dimensions 4, 5
    np.testing.assert_array_equal(hands[0], [[0.0, 1.0]] * 4)  # sin 0, cos 0: twelve o'clock
    np.testing.assert_allclose(np.linalg.norm(hands, axis=-1), 1.0)  # on the unit circle
    # Pair 0 turns by 1 radian per position, clockwise from twelve (x = sin, y = cos).
    np.testing.assert_allclose(hands[1, 0], [np.sin(1.0), np.cos(1.0)])


def test_the_counter_counts():
    bits = counter_bits(16, 4)
    assert [int((b * 2 ** np.arange(4)).sum()) for b in bits] == list(range(16))
    with pytest.raises(ValueError, match="num_bits"):
        counter_bits(4, 0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_drawing_has_a_row_per_pair_and_a_clock_per_position(style, monkeypatch, caplog, lang):
    monkeypatch.setenv("AIAYN_LANG", lang)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph warns
        fig = draw_clock_hands(num_positions=12, d_model=8)
        fig.canvas.draw()
    assert not caplog.records, [r.getMessage() for r in caplog.records]  # mathtext logs missing glyphs
    counter, clocks = fig.axes
    assert len(counter.patches) == len(clocks.patches) == 12 * 4
    assert len(clocks.lines) == 12 * 4
    labels = [t.get_text() for t in clocks.get_yticklabels()]
    assert labels[0].endswith("(1)") and labels[3].endswith("(1/1,000)")
    assert ("pair" if lang == "en" else "对") in labels[0]


def test_the_drawing_is_deterministic_and_refuses_an_odd_width(style):
    assert png(draw_clock_hands()) == png(draw_clock_hands())
    with pytest.raises(ValueError, match="d_model"):
        draw_clock_hands(d_model=7)
