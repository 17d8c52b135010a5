"""Rendered camera frames cached by (scene content, poses, camera), so that a traversal played
several times in one process (one DialogMem evaluation per memory) or by several runs is rendered
once.

A key (:func:`frames_key`) is the BLAKE2b of :data:`RENDER_VERSION`, the scene's
:meth:`~memgym.scenes.mesh_scene.MeshScene.content_digest` (its meshes, colours, textures and
instance ids), the bytes of the ``(B, 3)`` float64 positions and ``(B,)`` float64 headings, and the
camera's :class:`~memgym.sensors.camera.CameraConfig` (size, field of view, height, depth clip): any
change to one of them is another key. :class:`FrameCache` keeps the most recently used batches in
this process up to ``max_bytes``, and with a ``folder`` also stores each batch there as
``<key>.npz`` (uncompressed; about 0.7 MB per 256x256 frame), written atomically and read back by
later processes. Cached arrays are read-only; a hit returns exactly the arrays a render returned.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import threading
import warnings
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.seeding import canonical_json
from memgym.scenes.mesh_scene import MeshScene
from memgym.sensors.camera import RGBDCamera

RENDER_VERSION = "memgym-frames-1"
"""Part of every key: change it whenever the renderer changes what a pose's pixels are, so that
frames stored in cache folders by an earlier version are not read back."""
DEFAULT_MAX_BYTES = 512 << 20
"""In-process budget of a :class:`FrameCache` (about 730 frames of 256x256 RGB-D + semantic)."""
KEYS = ("rgb", "depth", "semantic")


def frames_key(scene: MeshScene, positions: np.ndarray, yaws: np.ndarray, camera: RGBDCamera) -> str:
    """Hex key of the frames ``camera`` renders in ``scene`` at base ``positions`` ``(B, 3)`` metres
    with headings ``yaws`` ``(B,)`` radians (module docstring)."""
    positions, yaws = _poses(positions, yaws)
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{RENDER_VERSION};{scene.content_digest()};".encode())
    digest.update(canonical_json(dataclasses.asdict(camera.config)).encode())
    digest.update(f";{len(yaws)};".encode())
    digest.update(positions.tobytes())
    digest.update(yaws.tobytes())
    return digest.hexdigest()


class FrameCache:
    """:meth:`RGBDCamera.render_batch` results by :func:`frames_key`, in memory (least recently used
    batches dropped beyond ``max_bytes``) and, with ``folder``, on disk.

    Attributes:
        hits / misses: batches served from the cache / rendered.

    Safe to share between threads (envs of episodes played at once): one render at a time.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, folder: str | Path | None = None) -> None:
        if max_bytes < 0:
            raise MemgymError(f"frame cache: max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self.folder = Path(folder) if folder else None
        if self.folder is not None:
            if self.folder.exists() and not self.folder.is_dir():
                raise MemgymError(f"frame cache folder {self.folder} is a file")
            self.folder.mkdir(parents=True, exist_ok=True)
        self._batches: OrderedDict[str, dict[str, np.ndarray]] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def render(
        self, camera: RGBDCamera, scene: MeshScene, positions: np.ndarray, yaws: np.ndarray
    ) -> dict[str, np.ndarray]:
        """``camera.render_batch(scene, positions, yaws)``, from the cache when it holds that key."""
        with self._lock:
            return self._render(camera, scene, positions, yaws)

    def _render(
        self, camera: RGBDCamera, scene: MeshScene, positions: np.ndarray, yaws: np.ndarray
    ) -> dict[str, np.ndarray]:
        positions, yaws = _poses(positions, yaws)
        key = frames_key(scene, positions, yaws, camera)
        frames = self._batches.get(key)
        if frames is not None:
            self._batches.move_to_end(key)
            self.hits += 1
            return dict(frames)
        frames = self._read(key, len(yaws), camera)
        if frames is None:
            frames = camera.render_batch(scene, positions, yaws)
            self.misses += 1
            self._write(key, frames)
        else:
            self.hits += 1
        for images in frames.values():
            images.flags.writeable = False
        self._remember(key, frames)
        return dict(frames)

    def _remember(self, key: str, frames: dict[str, np.ndarray]) -> None:
        size = sum(images.nbytes for images in frames.values())
        if size > self.max_bytes:
            return
        self._batches[key] = frames
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, dropped = self._batches.popitem(last=False)
            self._bytes -= sum(images.nbytes for images in dropped.values())

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{key}.npz"

    def _read(self, key: str, count: int, camera: RGBDCamera) -> dict[str, np.ndarray] | None:
        """The stored batch of ``key``; None when absent, or unreadable or of the wrong shape (then
        it is rendered and stored again)."""
        if self.folder is None or not self._path(key).is_file():
            return None
        expected = {name: (count, *space.shape) for name, space in camera.observation_space.spaces.items()}
        try:
            with np.load(self._path(key), allow_pickle=False) as stored:
                frames = {name: stored[name] for name in KEYS}
        except (OSError, KeyError, ValueError, zipfile.BadZipFile):
            return None
        if any(frames[name].shape != expected[name] for name in KEYS):
            return None
        return frames

    def _write(self, key: str, frames: dict[str, np.ndarray]) -> None:
        """Store ``frames`` under ``key`` (atomically); a full or unwritable disk only warns."""
        if self.folder is None:
            return
        handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".npz.tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(file, **frames)
            os.replace(temporary, self._path(key))
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            warnings.warn(f"frame cache {self.folder}: cannot store rendered frames ({error})", stacklevel=3)


_SHARED: dict[str, FrameCache] = {}
_SHARED_LOCK = threading.Lock()


def shared_frame_cache(folder: str | Path | None = None) -> FrameCache:
    """The process-wide :class:`FrameCache` of ``folder`` (None or "": in memory only), so that
    every env of a process reuses the frames any of them rendered."""
    name = str(Path(folder).resolve()) if folder else ""
    with _SHARED_LOCK:
        if name not in _SHARED:
            _SHARED[name] = FrameCache(folder=name or None)
        return _SHARED[name]


def _poses(positions: np.ndarray, yaws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(B, 3)`` and ``(B,)`` contiguous float64 copies of the poses; a clear error on other shapes."""
    positions = np.ascontiguousarray(positions, np.float64)
    yaws = np.ascontiguousarray(yaws, np.float64)
    if positions.ndim != 2 or positions.shape[1] != 3 or yaws.shape != (len(positions),):
        raise MemgymError(f"frames need positions (B, 3) and yaws (B,), got {positions.shape} and {yaws.shape}")
    return positions, yaws
