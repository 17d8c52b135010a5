"""Poses in the Habitat frame: Y up, the agent looks along its local ``-Z``, +X to its right.

Quaternions are ``(x, y, z, w)``. A heading (yaw) of ``theta`` radians is a rotation about +Y;
its forward vector is ``(-sin theta, 0, -cos theta)``, so increasing yaw turns the agent left.
"""

from __future__ import annotations

import math

import numpy as np


def quat_from_yaw(yaw: float) -> np.ndarray:
    """``(4,) float64`` quaternion ``(x, y, z, w)`` of a rotation by ``yaw`` rad about +Y."""
    return np.array([0.0, math.sin(yaw / 2), 0.0, math.cos(yaw / 2)])


def yaw_from_quat(q: np.ndarray) -> float:
    """Heading (rad, in ``(-pi, pi]``) of the forward vector of quaternion ``q``."""
    forward = quat_to_matrix(q) @ np.array([0.0, 0.0, -1.0])
    return math.atan2(-forward[0], -forward[2])


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """``(3, 3)`` rotation matrix of a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = np.asarray(q, float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def forward_vector(yaw: float) -> np.ndarray:
    """``(3,)`` unit vector the agent faces at heading ``yaw``."""
    return np.array([-math.sin(yaw), 0.0, -math.cos(yaw)])


def heading_to(source: np.ndarray, target: np.ndarray) -> float:
    """Yaw (rad) that makes an agent at ``source`` face ``target`` (horizontal plane)."""
    dx, dz = float(target[0] - source[0]), float(target[2] - source[2])
    return math.atan2(-dx, -dz)


def wrap_angle(angle: float) -> float:
    """``angle`` wrapped to ``(-pi, pi]``."""
    return math.atan2(math.sin(angle), math.cos(angle))
