"""Embodied episodes: a scene, a traversal (formation) and use-phase items grounded in both.

:class:`EmbodiedEpisode` is the record the embodied environment plays; DialogMem subclasses it
to add dialogue. :func:`build_embodied_episode` generates one from a house seed: the traversal,
plus built-in items whose answers follow from the scene and the trajectory alone —

* ``navigation`` — "Go to the {category}." for observed objects whose category is unique in the
  scene; ``answer = {"object_id", "position"}``; scored by geodesic success (the predicted
  position within ``success_distance`` metres, geodesically, of the object's nearest view point).
* ``qa`` — "Which did you see first, the {a} or the {b}?" for two observed objects with unique
  categories; ``answer`` is the category seen first (episodic content); annotations give the
  content type and evidence object ids.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.core.episode import Episode, TaskItem
from memgym.core.records import record
from memgym.datasets.traversal import Traversal, TraversalConfig, generate_traversal
from memgym.scenes.mesh_scene import MeshScene
from memgym.scenes.spec import SceneSpec, load_scene
from memgym.sensors.camera import CameraConfig


@record("embodied.episode")
@dataclasses.dataclass(frozen=True, kw_only=True)
class EmbodiedEpisode(Episode):
    """An episode whose formation phase is ``traversal`` through ``traversal.scene``."""

    traversal: Traversal


def build_embodied_episode(
    episode_id: str,
    spec: SceneSpec,
    rng: np.random.Generator,
    *,
    traversal: TraversalConfig | None = None,
    camera: CameraConfig | None = None,
    num_navigation: int = 3,
    num_qa: int = 2,
    benchmark: str = "embodied",
    progress: bool = False,
) -> EmbodiedEpisode:
    """Generate a traversal of the scene ``spec`` names and the built-in items (module docstring)."""
    scene = load_scene(spec)
    trav = generate_traversal(
        scene, spec, rng, traversal or TraversalConfig(), camera or CameraConfig(), progress=progress
    )
    items = default_items(scene, trav, rng, num_navigation=num_navigation, num_qa=num_qa)
    return EmbodiedEpisode(
        episode_id=episode_id,
        benchmark=benchmark,
        items=tuple(items),
        annotations={"scene_id": spec.scene_id, "frames": len(trav.frames), "goals": len(trav.segments)},
        traversal=trav,
    )


def default_items(
    scene: MeshScene, traversal: Traversal, rng: np.random.Generator, *, num_navigation: int, num_qa: int
) -> list[TaskItem]:
    """Navigation and first-seen QA items whose targets are identified by a unique category."""
    counts: dict[str, int] = {}
    for obj in scene.objects:
        counts[obj.category] = counts.get(obj.category, 0) + 1
    unique = [o for o in traversal.observations if counts[o.category] == 1]
    items: list[TaskItem] = []
    order = rng.permutation(len(unique))
    for k in order[:num_navigation]:
        obs = unique[int(k)]
        obj = scene.object(obs.object_id)
        items.append(
            TaskItem(
                item_id=f"nav-{len(items)}",
                task="navigation",
                prompt=f"Go to the {obj.category}.",
                answer={"object_id": obj.object_id, "position": list(obj.position)},
                annotations={"content_type": "perceptual", "target": obj.object_id},
            )
        )
    for pairs in range(num_qa):
        if len(unique) < 2:
            break
        a, b = (unique[int(i)] for i in rng.choice(len(unique), size=2, replace=False))
        first = a if a.order < b.order else b
        items.append(
            TaskItem(
                item_id=f"qa-{pairs}",
                task="qa",
                prompt=f"Which did you see first, the {a.category} or the {b.category}?",
                answer=first.category,
                annotations={"content_type": "episodic", "evidence": [a.object_id, b.object_id]},
            )
        )
    return items
