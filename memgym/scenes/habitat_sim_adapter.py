"""habitat-sim behind memgym's ``Scene`` interface, when ``habitat_sim`` imports.

habitat-sim is conda-only, so this adapter is optional: without it, read HM3D files with the
``hm3d`` backend (:mod:`memgym.scenes.hm3d`), which needs no simulator and takes ``X.glb`` or
``X.basis.glb`` (whose Basis Universal textures it cannot decode: flat colours, exact geometry).
habitat-sim decodes Basis textures itself. With it, rendering,
navmesh queries and the semantic scene come from habitat-sim itself::

    scene = HabitatSimScene("hm3d/val/00800-TEEsavR23oF/TEEsavR23oF.basis.glb",
                            dataset_config="hm3d/hm3d_annotated_basis.scene_dataset_config.json")
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from memgym.core.errors import FeatureUnavailableError
from memgym.core.paths import require_file
from memgym.core.protocols import Scene
from memgym.core.registry import register_scene
from memgym.scenes.mesh_scene import PinholeIntrinsics
from memgym.scenes.objects import SceneObject

try:  # pragma: no cover - exercised only where habitat-sim is installed
    import habitat_sim
except ImportError:  # habitat-sim is optional (conda-only)
    habitat_sim = None


@register_scene("habitat_sim")
class HabitatSimScene(Scene):  # pragma: no cover - needs habitat_sim
    """A habitat-sim ``Simulator`` with one agent carrying RGB, depth and semantic cameras.

    Args:
        scene_path: the scene GLB (``X.basis.glb`` or ``X.glb``).
        dataset_config: optional ``*.scene_dataset_config.json`` (needed for HM3D semantics).
        intrinsics: camera resolution and field of view.
    """

    def __init__(
        self,
        scene_path: str | Path,
        dataset_config: str | Path | None = None,
        intrinsics: PinholeIntrinsics | None = None,
    ) -> None:
        if habitat_sim is None:
            raise FeatureUnavailableError(
                "habitat_sim is not importable (it is distributed through conda); use the 'hm3d' backend to read the files directly"
            )
        require_file(scene_path, "habitat-sim scene", "a scene file (.glb)")
        self.intrinsics = intrinsics or PinholeIntrinsics()
        backend = habitat_sim.SimulatorConfiguration()
        backend.scene_id = str(scene_path)
        if dataset_config is not None:
            backend.scene_dataset_config_file = str(dataset_config)
        specs = []
        for uuid, kind in (
            ("rgb", habitat_sim.SensorType.COLOR),
            ("depth", habitat_sim.SensorType.DEPTH),
            ("semantic", habitat_sim.SensorType.SEMANTIC),
        ):
            spec = habitat_sim.CameraSensorSpec()
            spec.uuid, spec.sensor_type = uuid, kind
            spec.resolution = [self.intrinsics.height, self.intrinsics.width]
            spec.hfov = self.intrinsics.hfov
            spec.position = [0.0, 0.0, 0.0]  # render() receives the camera pose itself
            specs.append(spec)
        agent = habitat_sim.agent.AgentConfiguration(sensor_specifications=specs)
        self.sim = habitat_sim.Simulator(habitat_sim.Configuration(backend, [agent]))
        self._objects = [
            SceneObject(
                object_id=f"{obj.category.name()}_{obj.semantic_id}",
                semantic_id=int(obj.semantic_id),
                category=obj.category.name(),
                position=tuple(float(c) for c in obj.aabb.center),
                size=tuple(float(c) for c in obj.aabb.sizes),
                region_id=int(obj.region.id.split("_")[-1]) if obj.region is not None else -1,
            )
            for obj in self.sim.semantic_scene.objects
            if obj is not None and obj.category is not None
        ]

    @classmethod
    def from_spec(cls, spec: Any) -> HabitatSimScene:
        return cls(spec.path, spec.options.get("dataset_config"))

    @property
    def objects(self) -> list[SceneObject]:
        return self._objects

    def render(self, position: np.ndarray, rotation: np.ndarray) -> dict[str, np.ndarray]:
        state = habitat_sim.AgentState()
        state.position = np.asarray(position, np.float32)
        state.rotation = habitat_sim.utils.common.quat_from_coeffs(np.asarray(rotation, float))
        self.sim.get_agent(0).set_state(state, reset_sensors=True)
        obs = self.sim.get_sensor_observations()
        return {
            "rgb": np.asarray(obs["rgb"])[..., :3].astype(np.uint8),
            "depth": np.asarray(obs["depth"], np.float32),
            "semantic": np.asarray(obs["semantic"]).astype(np.int32),
        }

    def _path(self, start: np.ndarray, goal: np.ndarray):
        path = habitat_sim.ShortestPath()
        path.requested_start = np.asarray(start, np.float32)
        path.requested_end = np.asarray(goal, np.float32)
        found = self.sim.pathfinder.find_path(path)
        return found, path

    def geodesic_distance(self, start: np.ndarray, goal: np.ndarray) -> float:
        found, path = self._path(start, goal)
        return float(path.geodesic_distance) if found else math.inf

    def shortest_path(self, start: np.ndarray, goal: np.ndarray) -> np.ndarray:
        found, path = self._path(start, goal)
        return np.asarray(path.points, float).reshape(-1, 3) if found else np.zeros((0, 3))

    def is_navigable(self, position: np.ndarray) -> bool:
        return bool(self.sim.pathfinder.is_navigable(np.asarray(position, np.float32)))
