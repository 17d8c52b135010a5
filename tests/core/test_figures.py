"""Figure helpers: distinct styles, legends outside the data, line labels that do not overlap."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.text import Text

from memgym.core.figures import label_line_ends, legend_outside, system_styles


def test_twelve_systems_get_twelve_colours():
    styles = system_styles([f"m{i}" for i in range(12)])
    assert len({s["color"] for s in styles.values()}) == 12


def test_legend_sits_right_of_every_panel():
    fig, axes = plt.subplots(1, 2)
    for axis in axes:
        axis.plot([0, 1], [0, 1], label="a")
        axis.plot([0, 1], [1, 0], label="b")
    fig.tight_layout()
    legend_outside(fig, list(axes))
    fig.canvas.draw()
    legend = fig.legends[0].get_window_extent()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["a", "b"]  # each label once
    assert all(legend.x0 >= axis.get_window_extent().x1 for axis in axes)
    plt.close(fig)


def test_line_labels_of_coinciding_lines_do_not_overlap():
    fig, axis = plt.subplots(figsize=(4, 3))
    axis.set_ylim(0, 100)
    ends = []
    for name, colour in (("semantics", "C0"), ("speaker", "C1"), ("paralinguistic", "C2"), ("sound", "C3")):
        axis.plot([8, 16], [100, 100], color=colour)  # four lines on top of each other
        ends.append((name, 16.0, 100.0, colour))
    label_line_ends(axis, ends)
    fig.canvas.draw()
    boxes = [Text.get_window_extent(text) for text in axis.texts]  # the words, not their leaders
    assert len(boxes) == 4
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)
    plt.close(fig)
