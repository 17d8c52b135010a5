"""What every memgym figure shares so that people can read it: one distinct colour and marker per
system, legends outside the data, and direct labels at the ends of lines that would overlap.

Matplotlib is imported by the callers (lazily, with the ``Agg`` backend); these helpers take its
objects.

>>> [style["color"] for style in system_styles(["a", "b", "c"]).values()]
['#1f77b4', '#ff7f0e', '#2ca02c']
>>> len({(s["color"], s["marker"]) for s in system_styles([str(i) for i in range(30)]).values()})
30
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf", "#393b79", "#e7969c", "#637939", "#843c39", "#7b4173", "#6baed6", "#fd8d3c", "#74c476",
    "#9e9ac8", "#000000",
)  # fmt: skip
"""20 colours told apart on screen and in print: matplotlib's tab10, then darker and lighter tones."""
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "p", "h")
HATCHES = ("", "//", "..", "xx", "\\\\", "oo")


def save_figure(fig: Any, path: Path, *, dpi: int, tight: bool = False) -> Path:
    """Write ``fig`` to ``path`` (its folder made as needed) at ``dpi`` dots per inch and close it
    (a pyplot figure; a bare ``Figure`` holds nothing global); returns ``path``.

    Args:
        tight: crop to what is drawn (``bbox_inches="tight"``), which keeps a legend placed
            outside the axes (:func:`legend_outside`).

    >>> import tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(2, 1))
    >>> _ = fig.add_subplot().plot([0, 1], [1, 0])
    >>> out = save_figure(fig, Path(tempfile.mkdtemp()) / "plots" / "line.png", dpi=50)
    >>> out.read_bytes()[:4] == b"\\x89PNG"
    True
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight" if tight else None)
    pyplot = sys.modules.get("matplotlib.pyplot")  # loaded by whoever made a pyplot figure
    if pyplot is not None:
        pyplot.close(fig)
    return path


def system_styles(names: Sequence[str]) -> dict[str, dict[str, str]]:
    """``{name: {"color", "marker", "hatch"}}``: a distinct colour per name for up to 20 names
    (beyond that the marker tells them apart), markers cycling with the colours; bars of the
    names after the first ten are also hatched (the later colours resemble the first ones)."""
    styles = {}
    for i, name in enumerate(dict.fromkeys(names)):
        styles[name] = {
            "color": PALETTE[i % len(PALETTE)],
            "marker": MARKERS[(i + i // len(PALETTE)) % len(MARKERS)],
            "hatch": HATCHES[(i // 10) % len(HATCHES)],
        }
    return styles


def legend_outside(fig: Any, axes: Any, *, title: str | None = None, fontsize: float = 8) -> None:
    """One legend for the figure, right of the axes (outside every panel), from the labelled
    artists of ``axes`` (an axis or a sequence of them; each label once). Save the figure with
    ``bbox_inches="tight"`` so the legend is kept."""
    seen: dict[str, Any] = {}
    for axis in axes if isinstance(axes, (list, tuple)) else getattr(axes, "flat", [axes]):
        for handle, label in zip(*axis.get_legend_handles_labels()):
            if not label.startswith("_"):
                seen.setdefault(label, handle)
    if seen:
        fig.legend(
            list(seen.values()),
            list(seen),
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            fontsize=fontsize,
            title=title,
            frameon=False,
        )


def label_line_ends(axis: Any, ends: Sequence[tuple[str, float, float, str]], *, fontsize: float = 7) -> None:
    """Write each line's label right of its last point, ``ends`` = ``(label, x, y, colour)``; labels
    that would overlap are pushed apart vertically (a thin leader joins a moved label to its point).
    Widens the x-limits on the right to make room."""
    if not ends:
        return
    low, high = axis.get_ylim()
    height_px = axis.get_window_extent().height or 1.0
    gap = (high - low) * 1.35 * fontsize / 72.0 * axis.figure.dpi / height_px  # one text line, in data units
    order = sorted(ends, key=lambda end: end[2])
    placed: list[float] = []
    for _, _, y, _ in order:
        placed.append(max(y, placed[-1] + gap) if placed else y)
    overflow = placed[-1] - high + gap / 2 if placed else 0.0
    if overflow > 0:  # shift the stack down, no lower than the axis allows
        placed = [max(low + gap / 2 + i * gap, p - overflow) for i, p in enumerate(placed)]
    x_low, x_high = axis.get_xlim()
    span = x_high - x_low
    for (label, x, y, colour), text_y in zip(order, placed):
        moved = abs(text_y - y) > gap / 4
        axis.annotate(
            label,
            xy=(x, y),
            xytext=(x + 0.04 * span, text_y),
            textcoords="data",
            fontsize=fontsize,
            color=colour,
            va="center",
            ha="left",
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 0.5} if moved else None,
            annotation_clip=False,
        )
    axis.set_xlim(x_low, x_high + 0.3 * span)
