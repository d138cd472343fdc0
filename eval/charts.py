"""How every report of the project draws: matplotlib into files only (the Agg backend, no display
on servers). `figure` and `png` draw without pyplot's global state (eval's run reports); `pyplot`
is for the reports written with pyplot's figures (the demo's, the search's, ToM-Synth's stats)."""
from __future__ import annotations

import io
from typing import Any


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(width: float, height: float) -> Any:
    """A figure on the Agg canvas, laid out by matplotlib's constrained layout."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def png(fig: Any) -> bytes:
    """The figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
