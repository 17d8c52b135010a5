"""``VisualMemory``: what the frame, object-graph and snapshot memories share.

Formation observations are mappings with ``rgb`` ``(H, W, 3) uint8``, ``depth`` ``(H, W)``
metres, ``position`` ``(3,)``, ``rotation`` ``(4,)`` and ``text`` (dialogue heard at the frame;
``semantic`` ``(H, W) int32`` too for the ``gt`` detector). Every frame is counted; dialogue
lines are kept with the frame they were heard at (``+dialogue`` variants append the transcript
to their evidence; the lines are kept either way so that linkers can attach them to entries).

A visual memory reads ``frames`` and, with the ``gt`` detector, ``semantic`` images
(:attr:`~memgym.core.protocols.Memory.reads`; an evaluation renders semantic images only for a
memory whose ``reads`` name them). :meth:`VisualMemory.from_options` builds one from a DialogMem
eval config. Two bindings come from outside the stream (the memory protocol's hooks):

* :meth:`bind_episode` -- gives the ``gt`` detector the instance id -> category table of the
  episode's scene (the simulator's semantic annotation, what a perfect detector outputs: a label
  per mask; no positions, no ids are passed on), or an open-vocabulary detector with no
  configured vocabulary the scene's category names as its queries, and the memory the sighting gap
  the episode's ``times_seen`` annotation counted with (:func:`~memgym.sensors.sightings.recorded_sighting_gap`:
  0 for an episode built before datasets recorded it; unbound:
  :data:`~memgym.sensors.sightings.MAX_SIGHTING_GAP`). The evaluation loop calls it before formation.
* :meth:`bind_reasoner` -- the reasoner whose category predictions drive retrieval
  (:class:`~memgym.agents.reasoner_agent.ReasonerAgent` binds its own before each retrieval).
  It is not part of :meth:`state_dict` and is dropped when pickling.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from memgym.core.config import as_config
from memgym.core.errors import ConfigError
from memgym.core.protocols import Memory, Reasoner
from memgym.memory.embodied.backproject import CameraModel
from memgym.memory.embodied.detections import Detector, GroundTruthDetector
from memgym.memory.embodied.encoders import build_encoder
from memgym.memory.embodied.perception import Perception
from memgym.memory.embodied.perception_errors import PerceptionNoise, SensorErrors, episode_key
from memgym.memory.embodied.simulated_detector import SimulatedDetector
from memgym.sensors.sightings import MAX_SIGHTING_GAP, recorded_sighting_gap

PERCEPTION = ("simulated", "exact")
"""How a visual memory perceives: ``simulated`` (the default: the detector's output and the sensor
readings carry the errors of :mod:`~memgym.memory.embodied.perception_errors`) or ``exact``
(semantic-image masks and labels, exact depth and poses: the perfect-perception probe)."""


def build_detector(
    detector: str,
    vocabulary: tuple[str, ...] = (),
    device: str = "cpu",
    perception: str = "exact",
    noise: PerceptionNoise | None = None,
) -> Detector | None:
    """``"gt"`` (semantic image: exact, or through the error processes of
    :class:`~memgym.memory.embodied.simulated_detector.SimulatedDetector` when ``perception`` is
    ``simulated``), ``""``/``"none"`` (no detector), else a zero-shot detection model (local folder
    or hub id) through transformers, looking for ``vocabulary`` (it errs on its own)."""
    if detector == "gt":
        if perception == "simulated":
            return SimulatedDetector(noise or PerceptionNoise())
        return GroundTruthDetector()
    if detector in ("", "none"):
        return None
    from memgym.memory.embodied.open_vocabulary import ZeroShotDetector

    return ZeroShotDetector(detector, vocabulary, device=device)


class VisualMemory(Memory, abc.ABC):
    """Base of the visual memories (see the module docstring).

    Args:
        detector: ``"gt"``, ``"none"`` or a zero-shot detector model (folder or hub id).
        perception: ``simulated`` (default) or ``exact`` (:data:`PERCEPTION`); ``simulated`` adds
            depth noise and odometry drift for any detector and the detection errors to ``gt``.
        noise: the error rates (a :class:`PerceptionNoise` or a mapping of its keys; default: its defaults).
        vocabulary: categories an open-vocabulary detector looks for (ignored by ``gt``).
        encoder_model: CLIP model for crop embeddings; None = labels only.
        hfov: formation camera's horizontal field of view, degrees.
        sensor_height: camera height above the agent base, metres.
        max_depth: depth clip of the formation camera, metres.
        stride: back-projection pixel step.
        voxel: point-cloud voxel size, metres.
        device: torch device of the models.
    """

    with_dialogue: bool = False
    reads = frozenset({"frames", "semantic"})

    def __init__(
        self,
        *,
        detector: str = "gt",
        perception: str = "simulated",
        noise: PerceptionNoise | Mapping[str, Any] | None = None,
        vocabulary: tuple[str, ...] = (),
        encoder_model: str | None = None,
        hfov: float = 90.0,
        sensor_height: float = 1.25,
        max_depth: float = 10.0,
        stride: int = 2,
        voxel: float = 0.05,
        device: str = "cpu",
    ) -> None:
        if stride < 1 or voxel <= 0:
            raise ConfigError(f"{type(self).__name__}: stride must be >= 1 and voxel > 0, got {stride}, {voxel}")
        if perception not in PERCEPTION:
            raise ConfigError(f"{type(self).__name__}: perception must be one of {PERCEPTION}, got {perception!r}")
        self.noise = as_config(PerceptionNoise, noise, where=f"{type(self).__name__} noise")
        self.options = {
            "detector": detector,
            "perception": perception,
            "noise": dataclasses.asdict(self.noise),
            "vocabulary": list(vocabulary),
            "encoder_model": encoder_model,
            "hfov": hfov,
            "sensor_height": sensor_height,
            "max_depth": max_depth,
            "stride": stride,
            "voxel": voxel,
        }
        self.detector = build_detector(detector, tuple(vocabulary), device, perception, self.noise)
        self.encoder = build_encoder(encoder_model, device)
        self.camera = CameraModel(hfov, sensor_height, max_depth)
        self.sensor = SensorErrors(self.noise, max_depth) if perception == "simulated" else None
        self.perception = (
            None
            if self.detector is None
            else Perception(self.detector, self.camera, self.encoder, stride=stride, voxel=voxel, sensor=self.sensor)
        )
        self.reasoner: Reasoner | None = None
        self.sighting_gap = MAX_SIGHTING_GAP  # the bound episode's (bind_episode)
        if not isinstance(self.detector, GroundTruthDetector):  # only the gt detector reads semantic images
            self.reads = type(self).reads - {"semantic"}
        self.reset()

    @classmethod
    def from_options(cls, options: Any) -> VisualMemory:
        """Built from a DialogMem eval config (:meth:`option_kwargs`).

        Raises:
            ConfigError: ``options`` lacks a field it reads (not a DialogMem eval config).
        """
        try:
            kwargs = cls.option_kwargs(options)
        except AttributeError as exc:
            name = getattr(cls, "registered_name", cls.__name__)
            raise ConfigError(
                f"memory '{name}' builds from a DialogMem eval config (its visual, camera and link options), "
                f"got {type(options).__name__}: {exc}"
            ) from None
        return cls(**kwargs)

    @classmethod
    def stored_options(cls, options: Any) -> Any:
        """A DialogMem eval config with the default perception (``''``) written out as ``simulated``:
        runs made before simulated perception existed used exact perception."""
        if options.visual.perception:
            return options
        return dataclasses.replace(options, visual=dataclasses.replace(options.visual, perception="simulated"))

    @classmethod
    def option_kwargs(cls, options: Any) -> dict[str, Any]:
        """Constructor arguments from an eval config: its ``visual`` options and its formation
        ``camera``'s field of view, height and depth clip (subclasses add the options they take)."""
        visual, camera = options.visual, options.camera
        return {
            "detector": visual.detector,
            "perception": visual.perception or "simulated",
            "noise": visual.noise,
            "encoder_model": visual.encoder_model or None,
            "hfov": camera.hfov,
            "sensor_height": camera.sensor_height,
            "max_depth": camera.max_depth,
            "stride": visual.stride,
            "voxel": visual.voxel,
            "device": visual.device,
        }

    # ----- bindings ----------------------------------------------------------------------------
    def bind_episode(self, episode: Any, **context: Any) -> None:
        """Give a ``gt`` detector the category table of ``episode``'s scene, and an open-vocabulary
        detector without a configured vocabulary the scene's category names (module docstring); simulated
        perception draws its errors for this episode; sightings are counted with the gap the
        episode's annotation used."""
        self.sighting_gap = recorded_sighting_gap(episode)
        if self.sensor is not None:
            self.sensor.episode = episode_key(str(getattr(episode, "episode_id", "")))
        gt = isinstance(self.detector, GroundTruthDetector)
        if not gt and (self.detector is None or self.options["vocabulary"]):
            return
        from memgym.scenes.spec import load_scene

        scene = load_scene(episode.traversal.scene)
        if gt:
            self.detector.set_labels({o.semantic_id: o.category for o in scene.objects})
        else:
            self.detector.vocabulary = tuple(sorted({o.category for o in scene.objects}))

    def bind_reasoner(self, reasoner: Reasoner) -> None:
        """Use ``reasoner`` for category prediction at retrieval."""
        self.reasoner = reasoner

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["reasoner"] = None
        return state

    # ----- Memory API --------------------------------------------------------------------------
    def reset(self) -> None:
        self.frame_count = 0
        self.turns: list[tuple[int, str]] = []
        if self.sensor is not None:
            self.sensor.reset()
        self._reset_store()

    def observe(self, observation: Any) -> None:
        text = str(observation.get("text", "") or "")
        self.turns += [(self.frame_count, line) for line in text.splitlines() if line.strip()]
        if observation.get("rgb") is not None:
            if self.sensor is not None:  # what the memory perceives: noisy depth, odometry pose
                observation = self.sensor.apply(observation, self.frame_count)
            self._observe_frame(observation, self.frame_count)
        self.frame_count += 1

    def transcript(self) -> str:
        """The dialogue lines, in order (empty for variants without dialogue)."""
        return "\n".join(line for _, line in self.turns) if self.with_dialogue else ""

    def category_dialogue(self) -> list[str]:
        """The dialogue lines category prediction may read: the transcript of variants with dialogue."""
        return [line for _, line in self.turns] if self.with_dialogue else []

    def contents(self) -> dict[str, Any]:
        """What the memory itself kept, without images or point clouds:

        | key | memories | entries |
        | --- | --- | --- |
        | ``dialogue`` | every visual memory (the lines it keeps, with the frame heard at) | ``{"frame", "text"}`` |
        | ``frames`` | ``frames`` (and ``+dialogue``) | the formation frame indices it shows the reasoner |
        | ``objects`` | ``conceptgraph``, ``3dmem`` and their variants | ``{"id", "label", "location" [x, y, z] m, "frames"}`` |
        | ``snapshots`` | ``3dmem`` and its variants | ``{"id", "frame", "objects", "turns"}`` (linked turn texts) |
        """
        return {"dialogue": [{"frame": int(frame), "text": line} for frame, line in self.turns]}

    def state_dict(self) -> dict[str, Any]:
        labels = self.detector.labels if isinstance(self.detector, GroundTruthDetector) else {}
        return {
            "options": dict(self.options),
            "frame_count": self.frame_count,
            "turns": [list(t) for t in self.turns],
            "labels": dict(labels),
            "sighting_gap": self.sighting_gap,
            "store": self._store_state(),
            **({"sensor": self.sensor.state()} if self.sensor is not None else {}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["options"] != self.options:
            raise ConfigError(
                f"{type(self).__name__}: the state was saved with options {state['options']}, this memory has {self.options}"
            )
        self.frame_count = int(state["frame_count"])
        self.turns = [(int(f), str(line)) for f, line in state["turns"]]
        if isinstance(self.detector, GroundTruthDetector) and state["labels"]:
            self.detector.set_labels(state["labels"])
        self.sighting_gap = int(state.get("sighting_gap", self.sighting_gap))
        self._load_store(state["store"])
        if self.sensor is not None and "sensor" in state:
            self.sensor.load(state["sensor"])

    # ----- subclasses ----------------------------------------------------------------------------
    @abc.abstractmethod
    def _reset_store(self) -> None:
        """Forget the stored frames / objects."""

    @abc.abstractmethod
    def _observe_frame(self, observation: Any, index: int) -> None:
        """Store formation frame ``index``."""

    @abc.abstractmethod
    def _store_state(self) -> dict[str, Any]:
        """Plain-data form of the store."""

    @abc.abstractmethod
    def _load_store(self, state: dict[str, Any]) -> None:
        """Restore :meth:`_store_state` output."""


def pose_of(observation: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(3,)`` position and ``(4,)`` quaternion of a formation observation."""
    return np.asarray(observation["position"], float), np.asarray(observation["rotation"], float)
