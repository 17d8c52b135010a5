"""A small hand-made house (annotated objects) and traversal log for DialogMem construction tests."""

from __future__ import annotations

from memgym.datasets.dialogmem.content import ObservationLog, Segment
from memgym.datasets.traversal import NavigationSegment, PosedFrame, Traversal
from memgym.scenes.objects import Relation, SceneObject, ViewPoint
from memgym.scenes.spec import SceneSpec


def obj(object_id, category, region, color, material="wood", relations=(), x=0.0):
    return SceneObject(
        object_id=object_id,
        semantic_id=abs(hash(object_id)) % 1000 + 1,
        category=category,
        position=(x, 0.5, 0.0),
        size=(0.5, 0.5, 0.5),
        region=region,
        attributes={"color": color, "material": material, "size": "medium"},
        relations=tuple(relations),
        view_points=(ViewPoint(position=(x, 0.0, 1.0), rotation=(0.0, 0.0, 0.0, 1.0)),),
    )


OBJECTS = [
    obj("table_1", "table", "kitchen", "brown", x=0.0),
    obj("mug_2", "mug", "kitchen", "red", "ceramic", [Relation(kind="on", target="table_1")], x=0.1),
    obj("mug_3", "mug", "kitchen", "blue", "ceramic", [Relation(kind="on", target="table_1")], x=0.2),
    obj("sofa_4", "sofa", "living room", "gray", "fabric", x=4.0),
    obj("lamp_5", "lamp", "living room", "white", "metal", [Relation(kind="next_to", target="sofa_4")], x=4.5),
    obj("chair_6", "chair", "kitchen", "brown", x=0.5),
    obj("chair_7", "chair", "bedroom", "green", x=8.0),
    obj("bed_8", "bed", "bedroom", "white", "fabric", x=9.0),
]
CATEGORIES = {o.object_id: o.category for o in OBJECTS}
GOALS = {
    o.object_id: {"position": list(o.position), "view_points": [list(v.position) for v in o.view_points]}
    for o in OBJECTS
}

# 24 steps: kitchen (0-7, goal table), living room (8-15, goal sofa), bedroom (16-23, goal bed);
# the red mug is seen twice (steps 1-3 and 6-7), chair_7 never.
VISIBLE = (
    ("table_1",),
    ("table_1", "mug_2", "chair_6"),
    ("table_1", "mug_2", "mug_3"),
    ("mug_2", "mug_3"),
    ("chair_6",),
    ("chair_6",),
    ("table_1", "mug_2"),
    ("table_1", "mug_2", "mug_3"),
    (),
    ("lamp_5",),
    ("lamp_5", "sofa_4"),
    ("sofa_4",),
    (),
    ("lamp_5",),
    ("sofa_4", "lamp_5"),
    ("sofa_4",),
    (),
    ("bed_8",),
    (),
    ("bed_8",),
    (),
    (),
    ("bed_8",),
    ("bed_8",),
)
LOG = ObservationLog(
    visible=VISIBLE,
    segments=(
        Segment(goal="table_1", start=0, end=7),
        Segment(goal="sofa_4", start=8, end=15),
        Segment(goal="bed_8", start=16, end=23),
    ),
)
TRAVERSAL = Traversal(
    scene=SceneSpec(backend="procedural", seed=0),
    frames=tuple(
        PosedFrame(
            index=i,
            position=(float(i), 0.0, 0.0),
            rotation=(0.0, 0.0, 0.0, 1.0),
            action="move_forward",
            segment=i // 8,
            visible=dict.fromkeys(ids, 0.1),
        )
        for i, ids in enumerate(VISIBLE)
    ),
    segments=tuple(
        NavigationSegment(
            index=k, goal_object_id=s.goal, goal_category=CATEGORIES[s.goal], start_frame=s.start, end_frame=s.end
        )
        for k, s in enumerate(LOG.segments)
    ),
)
