"""Matplotlib views of AMemOps streams: spectrogram with events and queries marked."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from memgym.datasets.amemops.config import FRAME_RATE
from memgym.datasets.amemops.records import AMemOpsStream

ROLE_COLOURS = {"target": "tab:blue", "interferer": "tab:orange", "distractor": "tab:gray", "query": "tab:red"}


def spectrogram_figure(stream: AMemOpsStream, features: np.ndarray, *, position: int | None = None) -> Figure:
    """Figure: stacked L/R log-mel (top) and an event lane (bottom) with queries labelled.

    Args:
        stream: the stream record.
        features: ``(T, 131)`` features of the stream.
        position: optional frame to mark with a vertical line (the env's playhead).
    """
    fig = Figure(figsize=(12, 4.5), layout="constrained")  # no pyplot: no global backend, nothing to close
    FigureCanvasAgg(fig)
    ax_spec, ax_events = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    seconds = stream.frames / FRAME_RATE
    mel = np.concatenate([features[:, 64:128], features[:, :64]], axis=1).T  # right on top of left
    ax_spec.imshow(mel, aspect="auto", origin="lower", extent=(0, seconds, 0, 128), cmap="magma")
    ax_spec.axhline(64, color="white", linewidth=0.5)
    ax_spec.set_yticks([32, 96], ["left", "right"])
    ax_spec.set_title(f"{stream.episode_id}  ({stream.recordings} recordings, {len(stream.items)} queries)")
    lanes = {"target": 3, "interferer": 2, "distractor": 1, "query": 0}
    for event in stream.events:
        ax_events.broken_barh(
            [(event.onset_frame / FRAME_RATE, event.frames / FRAME_RATE)],
            (lanes[event.role] - 0.4, 0.8),
            color=ROLE_COLOURS[event.role],
        )
    for item in stream.items:
        a = item.annotations
        end = (a["end_frame"] + 1) / FRAME_RATE
        ax_spec.axvline(end, color="red", linewidth=0.6, alpha=0.7)
        ax_events.text(end, 0.45, f"{a['type'][:3]}:{a['attribute'][0]}", fontsize=6, ha="right", va="bottom")
    if position is not None:
        for ax in (ax_spec, ax_events):
            ax.axvline(position / FRAME_RATE, color="cyan", linewidth=1.0)
    ax_events.set_yticks(list(lanes.values()), list(lanes))
    ax_events.set_ylim(-0.6, 3.6)
    ax_events.set_xlabel("time (s)")
    ax_events.legend(
        handles=[Patch(color=c, label=r) for r, c in ROLE_COLOURS.items()],
        fontsize=6,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    return fig


def figure_to_array(fig: Figure) -> np.ndarray:
    """``(H, W, 3)`` uint8 pixels of a figure."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
