"""``SceneSpec``: how an episode names its scene, and :func:`load_scene` to build it.

An episode stores a :class:`SceneSpec`, never the mesh: ``backend`` is a registered scene name
(``procedural``, ``hm3d``, ``habitat_sim``), ``seed`` selects a generated house and ``path``
points at scene files. Loaded scenes are cached per process (a few at a time), so playing many
episodes of one scene builds it once.
"""

from __future__ import annotations

import dataclasses
import json
from collections import OrderedDict
from typing import Any

from memgym.core.errors import MemgymError
from memgym.core.records import Record, record
from memgym.core.registry import SCENES
from memgym.scenes.mesh_scene import MeshScene


@record("scene.spec")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SceneSpec(Record):
    """Names a scene.

    Attributes:
        backend: registered scene backend (``procedural``, ``hm3d``, ``habitat_sim``).
        seed: house seed for ``procedural``.
        path: scene file stem for ``hm3d`` / ``habitat_sim`` (``/data/hm3d/val/00800-TEEsavR23oF/TEEsavR23oF``).
        options: backend options (``house`` config values, ``floor_height``, ``agent`` values).
    """

    backend: str = "procedural"
    seed: int = 0
    path: str = ""
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def scene_id(self) -> str:
        return f"procedural-{self.seed}" if self.backend == "procedural" else f"{self.backend}:{self.path}"


_CACHE: OrderedDict[str, MeshScene] = OrderedDict()
CACHE_SIZE = 4


def load_scene(spec: SceneSpec) -> MeshScene:
    """Build (or fetch from the per-process cache) the scene ``spec`` names."""
    key = json.dumps(spec.to_dict(), sort_keys=True)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    cls = SCENES.get(spec.backend)
    from_spec = getattr(cls, "from_spec", None)
    if from_spec is None:
        raise MemgymError(f"scene backend '{spec.backend}' cannot be built from a SceneSpec")
    scene = from_spec(spec)
    _CACHE[key] = scene
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return scene
