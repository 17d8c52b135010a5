"""Embodied sensors: an RGB-D + instance-semantic pinhole camera and a pose sensor.

The camera sits ``sensor_height`` metres above the agent's base position and looks along the
agent's heading (level, like Habitat's default agent). Spaces and units:

| key        | space                                   | unit / meaning                                        |
| ---------- | --------------------------------------- | ----------------------------------------------------- |
| ``rgb``      | ``Box(0, 255, (H, W, 3), uint8)``        | shaded colour                                         |
| ``depth``    | ``Box(0, max_depth, (H, W), float32)``   | z-depth in metres, clipped to ``max_depth``; 0 = no hit |
| ``semantic`` | ``Box(0, 2**31-1, (H, W), int32)``       | instance id (``SceneObject.semantic_id``; 0 = none)   |
| ``position`` | ``Box(-1e4, 1e4, (3,), float32)``        | agent base position, metres, Habitat frame (Y up)     |
| ``rotation`` | ``Box(-1, 1, (4,), float32)``            | agent orientation quaternion ``(x, y, z, w)``         |
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np
from gymnasium import spaces

from memgym.core.config import check_ranges
from memgym.scenes.mesh_scene import MeshScene, PinholeIntrinsics
from memgym.scenes.poses import quat_from_yaw

POSITION_LIMIT = 1e4


@dataclasses.dataclass(frozen=True)
class CameraConfig:
    """Pinhole camera of the embodied agent."""

    width: int = dataclasses.field(default=256, metadata={"help": "image width, pixels", "min": 1, "max": 4096})
    height: int = dataclasses.field(default=256, metadata={"help": "image height, pixels", "min": 1, "max": 4096})
    hfov: float = dataclasses.field(
        default=90.0, metadata={"help": "horizontal field of view, degrees", "min": 1.0, "max": 179.0}
    )
    sensor_height: float = dataclasses.field(default=1.25, metadata={"help": "camera height above the agent base, m"})
    max_depth: float = dataclasses.field(default=10.0, metadata={"help": "depth clip, m", "min": 0.01})

    def __post_init__(self) -> None:
        check_ranges(self)

    @property
    def intrinsics(self) -> PinholeIntrinsics:
        return PinholeIntrinsics(self.width, self.height, self.hfov)


class RGBDCamera:
    """Renders ``rgb``, ``depth`` and ``semantic`` for an agent pose (see the module table)."""

    def __init__(self, config: CameraConfig = CameraConfig()) -> None:
        self.config = config
        self.intrinsics = config.intrinsics

    @property
    def observation_space(self) -> spaces.Dict:
        h, w = self.config.height, self.config.width
        return spaces.Dict(
            {
                "rgb": spaces.Box(0, 255, (h, w, 3), np.uint8),
                "depth": spaces.Box(0.0, self.config.max_depth, (h, w), np.float32),
                "semantic": spaces.Box(0, np.iinfo(np.int32).max, (h, w), np.int32),
            }
        )

    def camera_position(self, position: np.ndarray) -> np.ndarray:
        """``(3,)`` eye position for an agent standing at ``position``."""
        return np.asarray(position, float) + np.array([0.0, self.config.sensor_height, 0.0])

    def observe(self, scene: MeshScene, position: np.ndarray, yaw: float) -> dict[str, np.ndarray]:
        """Images seen by an agent at base ``position`` ``(3,)`` with heading ``yaw`` radians
        (frame 0 of :meth:`render_batch` of this one pose)."""
        batch = self.render_batch(scene, np.reshape(position, (1, 3)), np.array([yaw], float))
        return {key: images[0] for key, images in batch.items()}

    def render_batch(self, scene: MeshScene, positions: np.ndarray, yaws: np.ndarray) -> dict[str, np.ndarray]:
        """Images of ``B`` agent poses in one ray cast: base positions ``(B, 3)`` metres, headings
        ``(B,)`` radians. Returns ``{"rgb": (B, H, W, 3) uint8, "depth": (B, H, W) float32,
        "semantic": (B, H, W) int32}`` (module table); frame ``b`` is byte-identical to
        :meth:`observe` of pose ``b``."""
        positions = np.asarray(positions, float).reshape(-1, 3)
        eyes = positions + np.array([0.0, self.config.sensor_height, 0.0])
        rotations = np.array([quat_from_yaw(float(yaw)) for yaw in np.asarray(yaws, float).reshape(-1)])
        out = scene.render_batch(eyes, rotations.reshape(-1, 4), self.intrinsics)
        np.minimum(out["depth"], np.float32(self.config.max_depth), out=out["depth"])
        return out

    def iter_frames(
        self, scene: MeshScene, positions: np.ndarray, yaws: np.ndarray, batch: int = 16
    ) -> Iterator[dict[str, np.ndarray]]:
        """:meth:`observe` of each pose of ``positions`` ``(B, 3)`` / ``yaws`` ``(B,)`` in turn, rendered
        ``batch`` poses per :meth:`render_batch` call (the same bytes)."""
        positions = np.asarray(positions, float).reshape(-1, 3)
        yaws = np.asarray(yaws, float).reshape(-1)
        for start in range(0, len(yaws), max(1, batch)):
            images = self.render_batch(scene, positions[start : start + batch], yaws[start : start + batch])
            for i in range(len(images["rgb"])):
                yield {key: frames[i] for key, frames in images.items()}


class PoseSensor:
    """Agent pose: ``position`` (metres) and ``rotation`` (quaternion x, y, z, w)."""

    @property
    def observation_space(self) -> spaces.Dict:
        return spaces.Dict(
            {
                "position": spaces.Box(-POSITION_LIMIT, POSITION_LIMIT, (3,), np.float32),
                "rotation": spaces.Box(-1.0, 1.0, (4,), np.float32),
            }
        )

    def observe(self, position: np.ndarray, yaw: float) -> dict[str, np.ndarray]:
        return {
            "position": np.asarray(position, np.float32),
            "rotation": quat_from_yaw(yaw).astype(np.float32),
        }
