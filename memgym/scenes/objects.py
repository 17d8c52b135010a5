"""Annotated scene content: objects, their view points and relations, and regions.

These are the records DialogMem's perceptual memory content is built from. All positions are
metres in the Habitat frame (Y up, the floor of a generated house at ``y = 0``); rotations are
quaternions ``(x, y, z, w)``. The fields follow GOAT-Bench's object annotations
(``object_id``, ``object_category``, ``position``, ``view_points``, ``lang_desc``) plus the
attributes and relations a generated house knows exactly.
"""

from __future__ import annotations

import dataclasses

from memgym.core.records import Record, record

RELATION_KINDS = ("on", "next_to", "in_region")
"""Spatial relation kinds: ``on`` (target is the supporting object's id), ``next_to`` (target
is another object's id, footprints within 0.5 m) and ``in_region`` (target is a region name)."""


@record("scene.relation")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Relation(Record):
    """``subject <kind> target``; the subject is the object holding the relation.

    Attributes:
        kind: one of :data:`RELATION_KINDS`.
        target: an ``object_id`` (``on``, ``next_to``) or a region name (``in_region``).
    """

    kind: str
    target: str


@record("scene.view_point")
@dataclasses.dataclass(frozen=True, kw_only=True)
class ViewPoint(Record):
    """A navigable agent pose from which the object is visible.

    Attributes:
        position: ``(x, y, z)`` metres, on the navigable floor (agent base, not the camera).
        rotation: quaternion ``(x, y, z, w)`` turning the agent to face the object.
    """

    position: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


@record("scene.object")
@dataclasses.dataclass(frozen=True, kw_only=True)
class SceneObject(Record):
    """One annotated object instance.

    Attributes:
        object_id: unique in the scene, e.g. ``"sofa_12"``.
        semantic_id: the instance id the semantic sensor reports for its pixels (> 0).
        category: catalogue category, e.g. ``"sofa"``.
        position: ``(x, y, z)`` centre of its bounding box, metres.
        size: ``(x, y, z)`` extents of its axis-aligned bounding box, metres.
        yaw: rotation about +Y in radians (0 = front faces +Z).
        region_id: id of the region (room) it stands in; -1 if none.
        region: that region's name, e.g. ``"bedroom"``.
        attributes: ``color``, ``material``, ``size`` (small/medium/large for its category).
        relations: spatial relations with other objects and its region.
        view_points: navigable poses from which it is visible (empty if none was found).
        lang_desc: a one-sentence description (GOAT-Bench ``lang_desc`` style).
    """

    object_id: str
    semantic_id: int
    category: str
    position: tuple[float, float, float]
    size: tuple[float, float, float]
    yaw: float = 0.0
    region_id: int = -1
    region: str = ""
    attributes: dict[str, str] = dataclasses.field(default_factory=dict)
    relations: tuple[Relation, ...] = ()
    view_points: tuple[ViewPoint, ...] = ()
    lang_desc: str = ""

    def related(self, kind: str) -> list[str]:
        """Targets of this object's relations of ``kind``."""
        return [r.target for r in self.relations if r.kind == kind]


@record("scene.region")
@dataclasses.dataclass(frozen=True, kw_only=True)
class Region(Record):
    """A room of the house.

    Attributes:
        region_id: index of the region (HM3D ``semantic.txt`` last column).
        name: its label, e.g. ``"kitchen"`` (two bedrooms are both ``"bedroom"``).
        bounds: ``(x_min, z_min, x_max, z_max)`` metres of its floor rectangle; for regions
            read from files, the bounds of its annotated objects.
    """

    region_id: int
    name: str
    bounds: tuple[float, float, float, float]
