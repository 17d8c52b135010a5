"""DialogMem pages: the map with the trajectory, the frames, the dialogue, the items and their results.

Frames are not stored in a dataset: they are rendered from the episode's scene with the camera
the traversal was recorded with, as ``memgym render dialogmem`` does, on request (media
``<key>/rgb_<i>.jpg``, ``depth_<i>.png`` (grey, near = bright, black at the depth clip),
``semantic_<i>.png`` (one colour per instance id)). The map (``<key>/map.png``) is the
top-down map of :func:`~memgym.scenes.topdown.topdown_map` without the trajectory; the page
draws the trajectory, the pose and the locations over it from ``map.origin`` and ``map.ppm``
(pixel = (x - origin_x, z - origin_z) * ppm).

From a run folder each item carries every memory's row (prediction, scores, predicted location,
error); each memory's ``links.json`` (snapshot memories: link counts) is shown per episode, and
what the memory held after formation when the run saved it (``save_memory=true`` writes
``memory.jsonl``: dialogue lines, sampled frames, objects with their estimated locations,
snapshots with their linked turns; :meth:`memgym.core.protocols.Memory.contents`).
"""

from __future__ import annotations

import collections
import json
import math
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.episode import Dataset
from memgym.core.errors import MemgymError, RecordError
from memgym.core.textfiles import text_lines
from memgym.datasets.dialogmem.episode import DialogMemEpisode
from memgym.scenes.poses import yaw_from_quat
from memgym.scenes.spec import load_scene
from memgym.scenes.topdown import topdown_map
from memgym.sensors.camera import CameraConfig, RGBDCamera
from memgym.viewer import media
from memgym.viewer.detect import Target, memory_store_folders
from memgym.viewer.site import Site, finite, resolve_dataset, run_config, run_rows, split_media_name

PIXELS_PER_METER = 40.0
SCORES = ("geodesic_success", "execution_success", "spl", "distance_to_goal", "token_f1", "llm_match", "reward")
FRAME_FILE = re.compile(r"(rgb|depth|semantic)_(\d+)\.(jpg|png)")
FRAME_CACHE = 48


class DialogMemSite(Site):
    """A DialogMem episodes JSONL, or an eval run with the dataset it was evaluated on.

    Args:
        target: what :func:`~memgym.viewer.detect.detect` found.
        dataset: the run's dataset when its recorded path does not resolve (``--dataset``).
    """

    def __init__(self, target: Target, dataset: Path | None = None) -> None:
        super().__init__(target)
        self.results: dict[str, dict[str, dict[str, Any]]] = {}  # memory -> item key -> row
        self.links: dict[str, dict[str, Any]] = {}  # memory -> episode id -> counts
        self.contents: dict[str, dict[str, Any]] = {}  # memory -> episode id -> saved contents
        path = target.path
        if target.kind == "run":
            from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig

            folders = [folder for folder, _ in memory_store_folders(target.path)]
            if not folders:
                raise MemgymError(f"{target.path}: no memory folders with results (expected NAME/<memory>/)")
            path = resolve_dataset(run_config(folders[0], DialogMemEvalConfig).dataset, target.path, dataset)
            for folder in folders:
                self.results[folder.name] = {f"{r['episode_id']}|{r['item_id']}": r for r in run_rows(folder)}
                links = folder / "links.json"
                if links.is_file():
                    self.links[folder.name] = json.loads(links.read_text(encoding="utf-8"))
                if (folder / "memory.jsonl").is_file():
                    self.contents[folder.name] = saved_contents(folder / "memory.jsonl")
        loaded = Dataset.load(path)
        wrong = [e.episode_id for e in loaded if not isinstance(e, DialogMemEpisode)]
        if wrong:
            raise RecordError(f"{path}: episode {wrong[0]} is not a DialogMem episode")
        self.dataset_path = path
        self._episodes: list[DialogMemEpisode] = list(loaded)
        self._lock = threading.Lock()  # scene loading and ray casting: one request at a time
        self._frames: collections.OrderedDict[tuple[int, int], dict[str, bytes]] = collections.OrderedDict()

    # ----- index and episode JSON ------------------------------------------------------------
    def episodes(self) -> list[dict[str, Any]]:
        return [
            {
                "id": e.episode_id,
                "label": f"{e.annotations.get('scene_id', e.traversal.scene.backend)}: "
                f"{len(e.traversal.frames)} frames, {len(e.items)} items",
            }
            for e in self._episodes
        ]

    def episode(self, key: int) -> dict[str, Any]:
        episode = self._episodes[self.check_key(key)]
        traversal = episode.traversal
        camera = self._camera(episode)
        with self._lock:
            scene = load_scene(traversal.scene)
            origin = [float(v) for v in scene.navgrid.origin]
            shape = scene.navgrid.navigable.shape
            objects = [
                {
                    "id": o.object_id,
                    "category": o.category,
                    "position": list(o.position),
                    "size": list(o.size),
                    "region": o.region,
                }
                for o in scene.objects
            ]
        return finite(
            {
                "id": episode.episode_id,
                "scene": episode.annotations.get("scene_id", ""),
                "camera": {"width": camera.width, "height": camera.height, "max_depth": camera.max_depth},
                "map": {
                    "image": f"media/{key}/map.png",
                    "origin": origin,
                    "ppm": PIXELS_PER_METER,
                    "cells": [int(shape[1]), int(shape[0])],
                },
                "frames": _frame_rows(traversal),
                "segments": _segment_rows(traversal),
                "objects": objects,
                "residents": [r.to_dict() for r in episode.residents],
                "dialogue": _dialogue_rows(episode),
                "items": [self._item(episode, item) for item in episode.items],
                "memories": list(self.results),
                "links": {
                    m: table[episode.episode_id] for m, table in self.links.items() if episode.episode_id in table
                },
                "contents": {m: c[episode.episode_id] for m, c in self.contents.items() if episode.episode_id in c},
            }
        )

    def _item(self, episode: DialogMemEpisode, item) -> dict[str, Any]:
        navigation = item.task == "navigation"
        results = {}
        for memory, rows in self.results.items():
            row = rows.get(f"{episode.episode_id}|{item.item_id}")
            if row is not None:
                results[memory] = {
                    "prediction": row.get("prediction"),
                    "predicted_position": _location(row.get("predicted_position")),
                    "error": row.get("error"),
                    "scores": {k: row[k] for k in SCORES if row.get(k) is not None},
                }
        return {
            "item_id": item.item_id,
            "task": item.task,
            "prompt": item.prompt,
            "answer": item.answer.get("object_id") if navigation else item.answer,
            "target": list(item.answer["position"]) if navigation else None,
            "annotations": {k: v for k, v in item.annotations.items() if k != "evidence_turns"},
            "evidence_turns": list(item.annotations.get("evidence_turns", [])),
            "results": results,
        }

    # ----- media -------------------------------------------------------------------------------
    def media_names(self, key: int) -> list[str]:
        frames = range(len(self._episodes[self.check_key(key)].traversal.frames))
        names = [f"{key}/map.png"]
        for i in frames:
            names += [f"{key}/rgb_{i}.jpg", f"{key}/depth_{i}.png", f"{key}/semantic_{i}.png"]
        return names

    def media(self, name: str) -> bytes:
        key, file = split_media_name(name)
        episode = self._episodes[self.check_key(key)]
        if file == "map.png":
            with self._lock:
                scene = load_scene(episode.traversal.scene)
                goals = episode.traversal.goals
                return media.png(topdown_map(scene, highlight=goals, pixels_per_meter=PIXELS_PER_METER))
        match = FRAME_FILE.fullmatch(file)
        if match is None or int(match[2]) >= len(episode.traversal.frames):
            raise KeyError(name)
        return self._frame(key, int(match[2]))[file]

    def _frame(self, key: int, index: int) -> dict[str, bytes]:
        """The three encoded images of frame ``index`` (rendered once, kept in a small LRU cache)."""
        with self._lock:
            if (key, index) in self._frames:
                self._frames.move_to_end((key, index))
                return self._frames[key, index]
            episode = self._episodes[key]
            frame = episode.traversal.frames[index]
            camera = self._camera(episode)
            scene = load_scene(episode.traversal.scene)
            seen = RGBDCamera(camera).observe(
                scene, np.asarray(frame.position), yaw_from_quat(np.asarray(frame.rotation))
            )
            depth = np.asarray(seen["depth"], np.float64)
            near = np.where(np.isfinite(depth), 1.0 - np.clip(depth / camera.max_depth, 0.0, 1.0), 0.0)
            encoded = {
                f"rgb_{index}.jpg": media.jpeg(seen["rgb"]),
                f"depth_{index}.png": media.png((near * 255.0).round().astype(np.uint8)),
                f"semantic_{index}.png": media.png(semantic_colours(seen["semantic"])),
            }
            self._frames[key, index] = encoded
            while len(self._frames) > FRAME_CACHE:
                self._frames.popitem(last=False)
            return encoded

    @staticmethod
    def _camera(episode: DialogMemEpisode) -> CameraConfig:
        return CameraConfig(**episode.traversal.camera) if episode.traversal.camera else CameraConfig()


def saved_contents(path: Path) -> dict[str, Any]:
    """Episode id -> the memory contents saved in ``path`` (``memory.jsonl``; a later line of the
    same episode wins; a line cut off by an interrupted run is skipped)."""
    saved = {}
    for _, line in text_lines(path):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and "episode_id" in entry:
            saved[entry["episode_id"]] = entry
    return saved


def _location(position: Any) -> list[float] | None:
    """A predicted ``[x, y, z]``, or None when the row has none (NaN: the answer named no location)."""
    if position is None or not all(isinstance(v, int | float) and math.isfinite(v) for v in position):
        return None
    return [float(v) for v in position]


def semantic_colours(semantic: np.ndarray) -> np.ndarray:
    """``(H, W, 3)`` uint8: instance id ``k > 0`` -> a fixed colour of ``k`` (golden-ratio hues), 0 -> black."""
    ids = np.asarray(semantic, np.int64)
    hue = (np.maximum(ids, 0) * 0.61803398875) % 1.0
    rgb = np.stack([np.abs(np.sin(np.pi * (hue + k / 3.0))) for k in range(3)], axis=-1)
    colours = (60.0 + 195.0 * rgb).round().astype(np.uint8)
    colours[ids <= 0] = 0
    return colours


def _frame_rows(traversal) -> list[dict[str, Any]]:
    """Per formation frame: index, position (metres), yaw (radians), segment, action, visible ids."""
    return [
        {
            "index": f.index,
            "position": list(f.position),
            "yaw": float(yaw_from_quat(np.asarray(f.rotation))),
            "segment": f.segment,
            "action": f.action,
            "visible": sorted(f.visible),
        }
        for f in traversal.frames
    ]


def _segment_rows(traversal) -> list[dict[str, Any]]:
    """Per navigation segment: its goal, frame range and whether it was reached."""
    return [
        {
            "index": s.index,
            "goal": s.goal_object_id,
            "category": s.goal_category,
            "start": s.start_frame,
            "end": s.end_frame,
            "reached": s.reached,
        }
        for s in traversal.segments
    ]


def _dialogue_rows(episode: DialogMemEpisode) -> list[dict[str, Any]]:
    """Per dialogue turn: id, frame step, speaker, type, referenced objects and text."""
    return [
        {
            "turn_id": t.spec.turn_id,
            "step": t.spec.step,
            "speaker": t.spec.speaker,
            "type": t.spec.turn_type,
            "referenced": list(t.spec.referenced),
            "text": t.text,
        }
        for t in episode.dialogue
    ]
