"""What the figure tests share: a PNG of a figure (deterministic bytes, no timestamp) and the
texts drawn on it. The course's matplotlib style for a test is the ``style`` fixture of
tests/conftest.py."""

import io


def png(fig) -> bytes:
    """The figure as PNG bytes; the same figure gives the same bytes (no software stamp)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def texts(fig) -> list[str]:
    """Every text drawn in the figure's axes (boxes, notes, labels placed with ``ax.text``)."""
    return [t.get_text() for ax in fig.axes for t in ax.texts]
