"""Error rates of simulated perception, their per-frame random streams and the sensor errors.

:class:`PerceptionNoise` holds every rate of the simulated detector
(:mod:`~memgym.memory.embodied.simulated_detector`) and of :class:`SensorErrors` (depth noise,
odometry drift). Defaults come from published evaluations where one exists (docs/dialogmem.md,
"Simulated perception", lists the sources and numbers):

* detection recall by object size: the recall at IoU 0.5 of a Faster R-CNN R-50-FPN class
  detector per COCO size band, 0.47 / 0.81 / 0.95: its AR_small / AR_medium / AR_large over IoU
  0.5-0.95 (Detectron benchmark, COCO 2017 val: 0.314 / 0.539 / 0.636) times 1.5, the ratio of
  recall at IoU 0.5 to AR over IoU 0.5-0.95 in a COCO evaluation log of a detector of that class
  (AP 35.6: AR 0.686 vs 0.458, all sizes; one third-party log, so a stated estimate). A detection
  counts for a memory once it overlaps its object; the mask's own error is the separate boundary
  process, so AR's stricter overlaps would count localisation twice. COCO's size bands (32^2 and
  96^2 pixels of a 640x480 image) are written as fractions of the frame;
* depth noise: the axial Kinect noise model of Nguyen, Izadi & Lovell ("Modeling Kinect Sensor
  Noise for Improved 3D Reconstruction and Tracking", 3DIMPVT 2012), ``sigma(z) = 0.0012 +
  0.0019 (z - 0.4)^2`` m, their model for surfaces at 10-60 degrees to the optical axis (the extra
  term for steeper surfaces, ``0.0001 / sqrt(z) * theta^2 / (pi/2 - theta)^2``, is left out). The
  coefficients were checked against public RGB-D noise simulators that implement the model with
  this citation (the paper's own text could not be retrieved here). It gives 0.014 m at 3 m and
  0.041 m at 5 m, in line with Khoshelham & Elberink (Sensors 12(2), 2012): a random error "from a
  few millimetres up to about 4 cm at the maximum range of the sensor";
* odometry drift: a random walk per metre travelled (and per radian turned); its rates are a
  choice (an error of 0.5-5 % of the distance after 20 m, no published figure behind it) for
  odometry without loop closure. Full SLAM with bundle adjustment and loop closure does far
  better (ORB-SLAM, Mur-Artal, Montiel & Tardos, T-RO 2015: "typical localization accuracy from
  0.2% to 1% of the trajectory dimension"), which is not modelled.

Occlusion misses, how long a miss lasts, label confusion, boundary error and
over-/under-segmentation have no per-detection rate in the sources found; their defaults are
stated as choices in the docs.

Depth noise is drawn for the pixels a memory back-projects (in their fixed pixel order), not for
the whole image: the same values for the same frame, at a quarter of the cost with the default
2-pixel grid. Every random draw comes from :func:`frame_rng`, a generator seeded by ``(seed, episode, frame,
stream)``, or, for whether an object is detected, from :func:`detection_states`, a hash of ``(seed,
episode, object, frame)``: results are identical across runs and do not depend on the order in
which episodes are evaluated.

:class:`SensorErrors` turns a true formation frame into the one a memory perceives: depth with
noise, and the pose the agent's odometry reports (true pose composed with the accumulated drift;
the drift starts at zero at the episode's first frame, so the map frame is the world frame).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from scipy import special

from memgym.core.config import check_ranges
from memgym.core.errors import ConfigError
from memgym.scenes.poses import quat_from_yaw, yaw_from_quat

DEPTH_MODEL = (0.0012, 0.0019, 0.4)
"""``(a, b, z0)`` of the axial depth noise ``sigma(z) = a + b (z - z0)^2`` m, z in m (Nguyen, Izadi
& Lovell 2012, surfaces at 10-60 degrees; module docstring)."""

SIMILAR_CATEGORIES: tuple[tuple[str, ...], ...] = (
    ("sofa", "armchair", "ottoman"),
    ("chair", "stool", "bench"),
    ("dining table", "coffee table", "desk"),
    ("nightstand", "dresser", "cabinet", "tv stand", "wardrobe"),
    ("bookshelf", "shoe rack"),
    ("fridge", "dishwasher", "washing machine"),
    ("tv", "monitor", "laptop"),
    ("potted plant", "houseplant"),
    ("floor lamp", "table lamp", "coat rack"),
    ("trash can", "laundry basket", "basket", "storage box"),
    ("bowl", "mug", "vase", "candle"),
    ("microwave", "toaster", "speaker"),
    ("picture frame", "mirror", "clock"),
    ("suitcase", "storage box"),
)
"""Groups of the house catalogue's categories a detector confuses (similar shape and context,
as COCO's super-categories group its classes); a confused label is drawn from its group."""


def _rate(help_text: str, default: float, high: float = 1.0) -> Any:
    return dataclasses.field(default=default, metadata={"help": help_text, "min": 0.0, "max": high})


@dataclasses.dataclass(frozen=True)
class PerceptionNoise:
    """Rates of simulated perception (module docstring; all probabilities in [0, 1])."""

    seed: int = dataclasses.field(default=0, metadata={"help": "seed of the error draws (with episode and frame)"})
    recall_small: float = _rate("chance a small object (area < small_area) is detected in a frame", 0.47)
    recall_medium: float = _rate("chance a medium object is detected in a frame", 0.81)
    recall_large: float = _rate("chance a large object (area > large_area) is detected in a frame", 0.95)
    small_area: float = _rate("frame fraction below which an object is small (COCO 32^2 px of 640x480)", 0.0033)
    large_area: float = _rate("frame fraction above which an object is large (COCO 96^2 px of 640x480)", 0.03)
    occlusion_miss: float = _rate("extra miss chance of a fully occluded outline (x occluded outline share)", 0.3)
    miss_frames: float = _rate(
        "frames a miss lasts: correlation length of each object's detection state (0: drawn anew per frame)",
        3.0,
        1000.0,
    )
    confusion: float = _rate("chance a detection gets another label of its similar-category group", 0.1)
    boundary_px: int = dataclasses.field(
        default=1, metadata={"help": "masks eroded/dilated by up to this many pixels", "min": 0, "max": 16}
    )
    boundary_flip: float = _rate("share of the pixels along a mask's outline flipped in or out", 0.2)
    boundary_cells: float = _rate(
        "mask outline error in cells of a 28x28 mask over the box (Mask R-CNN's), rounded to pixels, "
        "at most boundary_px; outline flips scale with a cell's size in pixels (at most 1)",
        1.0,
        28.0,
    )
    split: float = _rate("chance a mask is cut in two instances (over-segmentation)", 0.05)
    merge: float = _rate("chance two touching masks of one category come out as one (under-segmentation)", 0.05)
    depth_scale: float = _rate("multiplier of the Kinect axial depth noise model (0: exact depth)", 1.0, 10.0)
    drift_translation: float = _rate("odometry position random walk, m per sqrt(m) travelled", 0.02)
    drift_yaw: float = _rate("odometry heading random walk, degrees per sqrt(m) travelled", 0.5, 90.0)
    drift_turn: float = _rate("odometry heading error, fraction of each turn", 0.01)

    def __post_init__(self) -> None:
        check_ranges(self)
        if self.small_area > self.large_area:
            raise ConfigError(
                f"PerceptionNoise: 'small_area' = {self.small_area} must not exceed 'large_area' = {self.large_area}"
            )

    def recall(self, area: np.ndarray) -> np.ndarray:
        """``(N,)`` detection chance of objects covering ``area`` ``(N,)`` (fraction of the frame)."""
        area = np.asarray(area, float)
        return np.where(
            area < self.small_area,
            self.recall_small,
            np.where(area > self.large_area, self.recall_large, self.recall_medium),
        )


def episode_key(episode_id: str) -> int:
    """A 64-bit integer of an episode id (0 for ``""``, an unbound memory)."""
    return int.from_bytes(hashlib.sha256(episode_id.encode()).digest()[:8], "little") if episode_id else 0


STREAMS = {"detector": 1, "depth": 2, "pose": 3}

_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _hash_uniform(words: np.ndarray) -> np.ndarray:
    """``(N,)`` uniforms in ``(0, 1)`` (53 bits) hashed from the rows of ``words`` ``(N, n)`` (uint64):
    SplitMix64's finaliser applied word by word, so that every word changes every bit of the result."""
    h = np.zeros(len(words), np.uint64)
    for column in words.T:
        h = (h ^ column) + _MIX[0]
        h = (h ^ (h >> np.uint64(30))) * _MIX[1]
        h = (h ^ (h >> np.uint64(27))) * _MIX[2]
        h = h ^ (h >> np.uint64(31))
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53


def detection_states(seed: int, episode: int, keys: np.ndarray, frame: int, frames: float) -> np.ndarray:
    """``(K,)`` detection states in ``(0, 1)`` of objects ``keys`` ``(K,)`` (instance ids >= 0) in
    frame ``frame`` of one episode: an object is detected when its state is below its detection
    chance, so each frame's chance is the rate whatever the state's past.

    The state is a stationary Gaussian process over frames mapped to ``(0, 1)`` by the normal
    CDF: ``z(t) = sum_k w_k e(t - k)``, ``w_k`` proportional to ``exp(-k / frames)`` over ``k <
    3 frames + 1`` and normalised to unit variance, ``e`` standard normals hashed from ``(seed,
    episode, key, frame)``. Neighbouring frames' states correlate by about ``exp(-1 / frames)``,
    so a miss (or a detection) lasts about ``frames`` frames, as the occlusion and viewing angle
    behind it do; ``frames <= 0``: an independent state per frame. A function of ``(seed,
    episode, key, frame)`` alone, whatever frames were processed before."""
    keys = np.asarray(keys, np.int64).astype(np.uint64)
    lags = np.arange(int(3 * frames) + 1 if frames > 0 else 1)
    weights = np.exp(-lags / frames) if frames > 0 else np.ones(1)
    weights /= np.sqrt(np.sum(weights**2))
    words = np.empty((len(keys), len(lags), 4), np.uint64)
    words[..., 0] = int(seed) & (2**64 - 1)
    words[..., 1] = int(episode) & (2**64 - 1)
    words[..., 2] = keys[:, None]
    words[..., 3] = (int(frame) - lags).astype(np.int64).astype(np.uint64)[None, :]
    normals = special.ndtri(_hash_uniform(words.reshape(-1, 4))).reshape(len(keys), len(lags))
    return special.ndtr(normals @ weights)


def frame_rng(seed: int, episode: int, frame: int, stream: str) -> np.random.Generator:
    """Generator of one error process (``stream``) in one frame of one episode (``default_rng`` of
    the five 32-bit words, built from them as an array: the same generator at half the cost)."""
    words = np.array([int(seed) & 0xFFFFFFFF, episode & 0xFFFFFFFF, episode >> 32, frame, STREAMS[stream]], np.uint32)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


@functools.cache
def similar_labels(category: str) -> tuple[str, ...]:
    """The categories ``category`` may be confused with (its groups' other members, sorted)."""
    others = {c for group in SIMILAR_CATEGORIES if category in group for c in group}
    others.discard(category)
    return tuple(sorted(others))


def depth_sigma(depth: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """Axial noise standard deviation (m) at each depth (m) of ``depth`` (module docstring)."""
    a, b, z0 = DEPTH_MODEL
    return scale * (a + b * (np.asarray(depth, float) - z0) ** 2)


class SensorErrors:
    """Depth noise and odometry drift of one episode's formation frames (module docstring).

    Args:
        noise: the rates.
        max_depth: depth clip, metres (pixels at 0 or the clip stay as they are).
    """

    def __init__(self, noise: PerceptionNoise, max_depth: float) -> None:
        self.noise = noise
        self.max_depth = float(max_depth)
        self.episode = 0
        self.reset()

    def reset(self) -> None:
        """Start a new traversal (drift back to zero)."""
        self._last: tuple[np.ndarray, float] | None = None
        self._estimate: tuple[np.ndarray, float] = (np.zeros(3), 0.0)
        self.travelled = 0.0

    def state(self) -> dict[str, Any]:
        """Plain-data drift state (see :meth:`load`): a memory saved mid-traversal continues identically."""
        last = None if self._last is None else [self._last[0].tolist(), self._last[1]]
        return {
            "episode": self.episode,
            "last": last,
            "estimate": [self._estimate[0].tolist(), self._estimate[1]],
            "travelled": self.travelled,
        }

    def load(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state` output."""
        self.episode = int(state["episode"])
        last = state["last"]
        self._last = None if last is None else (np.asarray(last[0], float), float(last[1]))
        self._estimate = (np.asarray(state["estimate"][0], float), float(state["estimate"][1]))
        self.travelled = float(state["travelled"])

    def apply(self, observation: Mapping[str, Any], index: int) -> dict[str, Any]:
        """``observation`` with the odometry's ``position``/``rotation``, its ``frame_index`` and
        ``episode_key``; depth noise is added where depth is read (:meth:`noisy_depth`, by
        :class:`~memgym.memory.embodied.perception.Perception` on the pixels it back-projects)."""
        frame = dict(observation)
        frame["frame_index"] = index
        frame["episode_key"] = self.episode
        position, yaw = self.odometry(np.asarray(observation["position"], float), observation["rotation"], index)
        frame["position"], frame["rotation"] = position, quat_from_yaw(yaw)
        return frame

    def noisy_depth(self, depth: np.ndarray, index: int) -> np.ndarray:
        """``depth`` (any shape, metres, all hitting a surface) plus Gaussian noise of
        :func:`depth_sigma`, kept inside ``(0, max_depth)``; the draws of frame ``index`` in order."""
        depth = np.asarray(depth, np.float64)
        if self.noise.depth_scale <= 0 or not depth.size:
            return depth
        rng = frame_rng(self.noise.seed, self.episode, index, "depth")
        noisy = depth + rng.standard_normal(depth.shape) * depth_sigma(depth, self.noise.depth_scale)
        return np.clip(noisy, 1e-3, self.max_depth * 0.998)

    def odometry(self, position: np.ndarray, rotation: Any, index: int) -> tuple[np.ndarray, float]:
        """The odometry's ``(3,)`` position and yaw (rad) at true ``position``/``rotation``."""
        yaw = yaw_from_quat(np.asarray(rotation, float))
        if self._last is None:
            self._last, self._estimate = (position, yaw), (position.copy(), yaw)
            return position.copy(), yaw
        (last, last_yaw), (estimate, estimate_yaw) = self._last, self._estimate
        step = position - last
        distance = float(math.hypot(step[0], step[2]))
        turn = math.atan2(math.sin(yaw - last_yaw), math.cos(yaw - last_yaw))
        rng = frame_rng(self.noise.seed, self.episode, index, "pose")
        shocks = rng.standard_normal(4)
        heading_error = (estimate_yaw - last_yaw) + (
            math.radians(self.noise.drift_yaw) * math.sqrt(distance) * shocks[0]
            + self.noise.drift_turn * abs(turn) * shocks[1]
        )
        c, s = math.cos(heading_error), math.sin(heading_error)
        moved = np.array([c * step[0] + s * step[2], step[1], -s * step[0] + c * step[2]])
        moved[[0, 2]] += self.noise.drift_translation * math.sqrt(distance) * shocks[2:]
        self.travelled += distance
        self._last = (position, yaw)
        self._estimate = (estimate + moved, yaw + heading_error)
        return self._estimate[0].copy(), self._estimate[1]
