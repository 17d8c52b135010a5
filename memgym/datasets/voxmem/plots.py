"""Figures of a VoxMem dataset: history layouts and a cue / cue-removed pair."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memgym.datasets.voxmem.records import VoxMemEpisode

ROLE_COLOURS = {"filler": "#c8c8c8", "haystack": "#f28e2b", "evidence": "#4e79a7"}


def history_layout_figure(episodes: Sequence[VoxMemEpisode]):
    """One row per episode: its sessions left to right, width = tokens, coloured by role.

    Shows where evidence and haystack sessions sit in each history (spread uniformly) and, for
    one item at several budgets, that the longer history extends the shorter one.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    figure, axis = plt.subplots(figsize=(10, 0.45 * len(episodes) + 1.2))
    for row, episode in enumerate(episodes):
        start = 0
        for session in episode.sessions:
            axis.barh(row, session.tokens, left=start, color=ROLE_COLOURS[session.role], edgecolor="white", height=0.8)
            start += session.tokens
    axis.set_yticks(range(len(episodes)), [f"{e.items[0].annotations['cell']} @{e.budget}" for e in episodes])
    axis.invert_yaxis()
    axis.set_xlabel("tokens (Whisper-encoder audio tokens + text tokens)")
    axis.legend(handles=[Patch(color=c, label=r) for r, c in ROLE_COLOURS.items()], loc="lower right", fontsize=8)
    axis.set_title("History layout: sessions by role")
    figure.tight_layout()
    return figure


def cue_pair_figure(dataset_dir: Path, episodes: Sequence[VoxMemEpisode]):
    """Log spectrograms of the first cue-bearing user turn and its cue-removed pair (``None`` if none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import soundfile

    turn = next(
        (t for e in episodes for s in e.sessions for t in s.turns if t.cue != "neutral" and t.plain_audio), None
    )
    if turn is None:
        return None
    figure, axes = plt.subplots(2, 1, figsize=(10, 4.5), sharex=True)
    for axis, path, title in (
        (axes[0], turn.audio, f"with cue: {turn.cue}" + (f" + {turn.sound}" if turn.sound else "")),
        (axes[1], turn.plain_audio, "cue and sound removed (paired rendition)"),
    ):
        audio, rate = soundfile.read(str(Path(dataset_dir) / path), dtype="float32")
        axis.specgram(audio + 1e-7 * np.random.default_rng(0).standard_normal(audio.size), Fs=rate, NFFT=512)
        axis.set_ylabel("Hz")
        axis.set_title(f'"{turn.text}" - {title}', fontsize=9)
    axes[1].set_xlabel("seconds")
    figure.tight_layout()
    return figure
