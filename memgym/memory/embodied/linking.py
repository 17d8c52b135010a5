"""Linkers: ground dialogue turns to 3D-Mem snapshots during formation (DialogMem's linked dialogue).

A :class:`Linker` gets :class:`LinkInputs` (the memory's turns, snapshots, instances, which
instances each frame showed, and the reasoner) and returns snapshot id -> indices of the turns
linked to it; at evaluation a retrieved snapshot carries only its linked turns. Linkers are
registered in :data:`LINKERS` by name:

* ``clip`` (:class:`ClipLinker`) -- each turn's utterance (without the speaker) is embedded with
  a CLIP text tower and linked to the ``top_k`` snapshots whose scene images are most similar
  (cosine; ties to the earlier snapshot);
* ``vlm`` (:class:`VLMLinker`) -- the reasoner is shown the objects detected in the frame the turn
  was heard at (``LINK [...]`` line, :data:`memgym.backends.structured.LINK_PREFIX`; largest
  coverage first; the frame's image too, unless the reasoner's ``accepts_images`` is False or it
  reads facts) and names the one the turn refers to; the turn is linked to every snapshot
  holding that object (none when the reasoner names none);
* ``controlled`` (:mod:`memgym.memory.embodied.controlled_linker`) -- a ground-truth intervention
  that reads the episode's annotations.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.backends.structured import LINK_PREFIX
from memgym.core.chat import ImagePart, Message, TextPart
from memgym.core.errors import ConfigError, MemgymError
from memgym.core.protocols import Reasoner
from memgym.core.registry import LINKERS, register_linker
from memgym.memory.embodied.covisibility import Snapshot
from memgym.memory.embodied.object_map import Instance


@dataclasses.dataclass(frozen=True)
class LinkInputs:
    """What a linker sees after formation.

    Attributes:
        turns: ``(frame, "Speaker: utterance")`` in the order heard.
        snapshots: the memory's snapshots.
        instances: the fused instances (snapshot objects are their ids).
        frame_objects: frame index -> instance id -> coverage of that frame.
        reasoner: the bound reasoner (None when none is bound).
        images: frame index -> ``(H, W, 3) uint8`` image of the frames with detections.
    """

    turns: Sequence[tuple[int, str]]
    snapshots: Sequence[Snapshot]
    instances: Sequence[Instance]
    frame_objects: Mapping[int, Mapping[str, float]]
    reasoner: Reasoner | None = None
    images: Mapping[int, np.ndarray] = dataclasses.field(default_factory=dict)


class Linker(abc.ABC):
    """Links dialogue turns to snapshots during formation (see the module docstring)."""

    @classmethod
    def from_options(cls, options: Mapping[str, Any], device: str = "cpu") -> Linker:
        """Build from the eval's ``link.*`` options (each linker reads the ones it takes)."""
        return cls()

    def bind_episode(self, episode: Any) -> None:  # noqa: B027 (an optional hook)
        """The episode about to be played (read by linkers that read annotations). Default: ignored."""

    @abc.abstractmethod
    def link(self, inputs: LinkInputs) -> dict[str, list[int]]:
        """Snapshot id -> indices into ``inputs.turns`` linked to it."""


def utterance(line: str) -> str:
    """The words of a ``"Speaker: utterance"`` line without the speaker."""
    return line.split(": ", 1)[1] if ": " in line else line


def snapshots_holding(snapshots: Sequence[Snapshot], instance_id: str) -> list[str]:
    """Ids of the snapshots whose objects include ``instance_id``."""
    return [s.id for s in snapshots if instance_id in s.objects]


@register_linker("clip")
class ClipLinker(Linker):
    """Turn text vs snapshot scene images under CLIP (module docstring).

    Args:
        encoder: an :class:`~memgym.memory.embodied.encoders.ImageTextEncoder` (or anything with
            ``encode_images`` / ``encode_texts`` returning unit ``(N, D)`` rows).
        top_k: snapshots linked per turn.
    """

    def __init__(self, encoder: Any, top_k: int = 1) -> None:
        if top_k < 1:
            raise ConfigError(f"clip linker: top_k must be >= 1, got {top_k}")
        self.encoder = encoder
        self.top_k = top_k

    @classmethod
    def from_options(cls, options: Mapping[str, Any], device: str = "cpu") -> ClipLinker:
        from memgym.memory.embodied.encoders import ImageTextEncoder

        model = str(options.get("clip_model", "") or "")
        if not model:
            raise ConfigError("the clip linker needs a CLIP model: link.clip_model=<folder or hub id>")
        return cls(ImageTextEncoder(model, device), int(options.get("top_k", 1)))

    def link(self, inputs: LinkInputs) -> dict[str, list[int]]:
        if not inputs.turns or not inputs.snapshots:
            return {}
        images = self.encoder.encode_images([s.image for s in inputs.snapshots])
        texts = self.encoder.encode_texts([utterance(line) for _, line in inputs.turns])
        similarity = texts @ images.T  # (turns, snapshots)
        links: dict[str, list[int]] = {}
        for t, row in enumerate(similarity):
            for k in np.argsort(-row, kind="stable")[: self.top_k]:
                links.setdefault(inputs.snapshots[int(k)].id, []).append(t)
        return links


LINK_SYSTEM_PROMPT = (
    "A resident said something while a robot was looking around. The objects the robot saw at that moment "
    "are listed with their ids. Reply with the id of the object the remark is about, or 'unknown', and nothing else."
)


def link_messages(remark: str, candidates: Sequence[tuple[str, str]], image: np.ndarray | None = None) -> list[Message]:
    """The chat asking which of ``candidates`` (``(instance id, label)``) ``remark`` refers to,
    with the view it was heard at when ``image`` is given."""
    listed = json.dumps([{"id": i, "label": label} for i, label in candidates])
    parts: list[Any] = [] if image is None else [ImagePart(np.asarray(image, np.uint8))]
    parts.append(TextPart(f"{LINK_PREFIX}{listed}\nRemark: {remark}"))
    return [Message.text("system", LINK_SYSTEM_PROMPT), Message("user", tuple(parts))]


def parse_link(reply: str, candidates: Sequence[tuple[str, str]]) -> str | None:
    """The candidate id named in ``reply`` (the earliest named), None when none is."""
    tokens = re.findall(r"\w+", reply)  # ids are word characters: quotes, brackets, punctuation drop
    ids = {i for i, _ in candidates}
    return next((t for t in tokens if t in ids), None)


@register_linker("vlm")
class VLMLinker(Linker):
    """The reasoner names the co-observed object each turn refers to (module docstring)."""

    def link(self, inputs: LinkInputs) -> dict[str, list[int]]:
        if inputs.turns and inputs.reasoner is None:
            raise MemgymError("the vlm linker asks the memory's reasoner; bind one with bind_reasoner(reasoner)")
        labels = {i.id: i.label for i in inputs.instances}
        reasoner = inputs.reasoner
        sees = getattr(reasoner, "accepts_images", True) and not getattr(reasoner, "reads_facts", False)
        links: dict[str, list[int]] = {}
        for t, (frame, line) in enumerate(inputs.turns):
            seen = inputs.frame_objects.get(frame, {})
            candidates = [(i, labels[i]) for i in sorted(seen, key=lambda i: (-seen[i], i)) if i in labels]
            if not candidates:
                continue
            image = inputs.images.get(frame) if sees else None
            reply = reasoner.generate(link_messages(utterance(line), candidates, image), max_new_tokens=16)
            chosen = parse_link(reply, candidates)
            for snapshot_id in snapshots_holding(inputs.snapshots, chosen) if chosen else ():
                links.setdefault(snapshot_id, []).append(t)
        return links


def build_linker(name: str, options: Mapping[str, Any], device: str = "cpu") -> Linker:
    """The registered linker ``name`` built from ``options`` (``link.*``)."""
    return LINKERS.get(name).from_options(options, device)
