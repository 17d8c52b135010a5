"""Trajectory videos: each formation frame's first-person RGB beside the top-down map.

Frames are ``(H, H_rgb + W_map, 3) uint8``; the map is scaled to the camera image's height.
``.mp4`` needs ``imageio-ffmpeg`` (in the ``embodied`` extra); ``.gif`` needs only Pillow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image
from tqdm import tqdm

from memgym.core.errors import MemgymError
from memgym.datasets.traversal import Traversal
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.poses import yaw_from_quat
from memgym.scenes.topdown import topdown_map
from memgym.sensors.camera import CameraConfig, RGBDCamera


def trajectory_frames(
    scene: MeshScene, traversal: Traversal, camera: CameraConfig | None = None, *, stride: int = 1
) -> Iterator[np.ndarray]:
    """Yield composed frames (first-person RGB | map with the trajectory so far)."""
    camera = camera or (CameraConfig(**traversal.camera) if traversal.camera else CameraConfig())
    sensor = RGBDCamera(camera)
    positions = traversal.positions()
    goals = traversal.goals
    step = max(1, stride)
    images = sensor.iter_frames(scene, positions[::step], traversal.yaws()[::step])
    for frame, image in zip(traversal.frames[::step], images):
        yaw = yaw_from_quat(np.asarray(frame.rotation))
        rgb = image["rgb"]
        current_goal = [goals[frame.segment]] if frame.segment < len(goals) else []
        board = topdown_map(
            scene,
            trajectory=positions[: frame.index + 1],
            pose=(np.asarray(frame.position), yaw),
            highlight=current_goal,
        )
        height = rgb.shape[0]
        width = max(1, round(board.shape[1] * height / board.shape[0]))
        board = np.asarray(Image.fromarray(board).resize((width, height), Image.BILINEAR))
        yield np.concatenate([rgb, board], axis=1)


def write_video(
    frames: Iterator[np.ndarray], path: Path, *, fps: int = 8, total: int | None = None, progress: bool = True
) -> Path:
    """Write ``frames`` to ``path`` (``.mp4`` or ``.gif``); returns the path."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix not in (".mp4", ".gif"):
        raise MemgymError(f"video path {path} must end in .mp4 or .gif")
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise MemgymError(
                f"writing {path} needs imageio-ffmpeg (pip install 'memgym[embodied]'); or ask for a .gif"
            ) from None
        writer = imageio.get_writer(path, fps=fps, codec="libx264", quality=7, macro_block_size=16)
    else:
        writer = imageio.get_writer(path, mode="I", duration=1000 / fps, loop=0)
    try:
        for frame in tqdm(frames, total=total, desc=f"render {path.name}", disable=not progress):
            if suffix == ".mp4":
                frame = _pad16(frame)
            writer.append_data(frame)
    finally:
        writer.close()
    return path


def _pad16(frame: np.ndarray) -> np.ndarray:
    h, w = frame.shape[:2]
    return np.pad(frame, ((0, -h % 16), (0, -w % 16), (0, 0)), mode="edge")
