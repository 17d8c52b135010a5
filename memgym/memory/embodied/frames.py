"""``frames`` and ``frames+dialogue``: raw RGB-D frames with their poses.

Every formation frame is kept (``rgb``, ``depth`` at half precision -- about 1 cm at 10 m --
and the pose) with the labels and mask coverages its detector finds (when one is configured).
Retrieval ignores the request and returns ``num_frames`` frames sampled uniformly over the
traversal (first and last included) as images. Entries: per sampled frame, ``frame_<i>`` (any reasoner may name a frame); and, for
each detected label, ``frame_<i>:<label>`` for the sampled frame where that label covers the
most pixels -- the structured reasoner's reading of "the frame that shows it best". An entry's
location is the frame's observation pose (agent base position): navigation goes to where the
frame was taken. ``frames+dialogue`` adds the full transcript.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memgym.core.errors import ConfigError
from memgym.core.registry import register_memory
from memgym.memory.embodied.evidence import Entry, VisualEvidence
from memgym.memory.embodied.visual_memory import VisualMemory, pose_of


@register_memory("frames")
class FramesMemory(VisualMemory):
    """Every RGB-D frame with its pose; evidence: ``num_frames`` uniformly sampled frames.

    Args:
        num_frames: frames given to the reasoner (the paper's default 16, ablated up to 128).
        **options: :class:`~memgym.memory.embodied.visual_memory.VisualMemory` options.
    """

    def __init__(self, num_frames: int = 16, **options: Any) -> None:
        if num_frames < 1:
            raise ConfigError(f"frames memory: num_frames must be >= 1, got {num_frames}")
        self.num_frames = int(num_frames)
        super().__init__(**options)
        self.options["num_frames"] = self.num_frames

    @classmethod
    def option_kwargs(cls, options: Any) -> dict[str, Any]:
        return {**super().option_kwargs(options), "num_frames": options.visual.num_frames}

    def _reset_store(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def _observe_frame(self, observation: Any, index: int) -> None:
        position, rotation = pose_of(observation)
        labels: dict[str, float] = {}
        if self.detector is not None:
            for detection in self.detector.detect(observation):
                labels[detection.label] = labels.get(detection.label, 0.0) + detection.coverage
        self.frames.append(
            {
                "index": index,
                "rgb": np.asarray(observation["rgb"], np.uint8).copy(),
                "depth": np.asarray(observation["depth"]).astype(np.float16),
                "position": position,
                "rotation": rotation,
                "labels": labels,
            }
        )

    def sampled(self) -> list[dict[str, Any]]:
        """The ``num_frames`` uniformly spaced frames (all of them when there are fewer)."""
        if len(self.frames) <= self.num_frames:
            return list(self.frames)
        picks = np.unique(np.linspace(0, len(self.frames) - 1, self.num_frames).round().astype(int))
        return [self.frames[i] for i in picks]

    def contents(self) -> dict[str, Any]:
        return {**super().contents(), "frames": [int(frame["index"]) for frame in self.sampled()]}

    def retrieve(self, query: Any) -> VisualEvidence:
        frames = self.sampled()
        entries = []
        for k, frame in enumerate(frames):
            entries.append(Entry(f"frame_{frame['index']}", "", _location(frame), image=k))
        best: dict[str, tuple[float, int]] = {}
        for k, frame in enumerate(frames):
            for label, coverage in frame["labels"].items():
                if label not in best or coverage > best[label][0]:
                    best[label] = (coverage, k)
        for label in sorted(best):
            frame = frames[best[label][1]]
            name = f"frame_{frame['index']}"
            entries.append(Entry(f"{name}:{label}", label, _location(frame), image=best[label][1], group=name))
        return VisualEvidence(
            entries=tuple(entries),
            images=tuple(f["rgb"] for f in frames),
            captions=tuple(f"frame_{f['index']}" for f in frames),
            dialogue=self.transcript(),
        )

    def _store_state(self) -> dict[str, Any]:
        return {
            "frames": [{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in f.items()} for f in self.frames]
        }

    def _load_store(self, state: dict[str, Any]) -> None:
        self.frames = [
            {
                "index": int(f["index"]),
                "rgb": np.asarray(f["rgb"], np.uint8),
                "depth": np.asarray(f["depth"], np.float16),
                "position": np.asarray(f["position"], float),
                "rotation": np.asarray(f["rotation"], float),
                "labels": {str(k): float(v) for k, v in f["labels"].items()},
            }
            for f in state["frames"]
        ]


def _location(frame: dict[str, Any]) -> tuple[float, float, float]:
    return tuple(float(v) for v in frame["position"])


@register_memory("frames+dialogue")
class FramesDialogueMemory(FramesMemory):
    """``frames`` plus the full transcript."""

    with_dialogue = True
    reads = FramesMemory.reads | {"dialogue"}
