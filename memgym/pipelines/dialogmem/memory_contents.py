"""What a DialogMem memory held after an episode's formation, as JSON (``memgym eval dialogmem
save_memory=true`` appends one line per episode to ``<memory>/memory.jsonl``; ``memgym view`` shows it).

Only what a memory itself kept, without images or point clouds:

| key | memories | entries |
| --- | --- | --- |
| ``dialogue`` | ``dialogue``; visual memories (the lines they keep, with the frame heard at) | ``{"frame", "text"}`` (``frame`` None for ``dialogue``) |
| ``frames`` | ``frames`` (and ``+dialogue``) | the formation frame indices it shows the reasoner |
| ``objects`` | ``conceptgraph``, ``3dmem`` and their variants | ``{"id", "label", "location" [x, y, z] m, "frames"}`` |
| ``snapshots`` | ``3dmem`` and its variants | ``{"id", "frame", "objects", "turns"}`` (linked turn texts) |

A memory with none of these parts (the ground-truth probes) is saved as ``{}``.
"""

from __future__ import annotations

from typing import Any


def memory_contents(memory: Any) -> dict[str, Any]:
    """JSON-ready contents of a formed DialogMem memory (table in the module docstring)."""
    contents: dict[str, Any] = {}
    if isinstance(getattr(memory, "lines", None), list):
        contents["dialogue"] = [{"frame": None, "text": line} for line in memory.lines]
    elif isinstance(getattr(memory, "turns", None), list):
        contents["dialogue"] = [{"frame": int(frame), "text": line} for frame, line in memory.turns]
    if hasattr(memory, "sampled"):
        contents["frames"] = [int(frame["index"]) for frame in memory.sampled()]
    instances = getattr(getattr(memory, "objects", None), "instances", None)
    if instances is not None:
        contents["objects"] = [
            {"id": i.id, "label": i.label, "location": [round(v, 3) for v in i.location], "frames": sorted(i.frames)}
            for i in instances
        ]
    snapshots = memory.snapshots()
    if snapshots is not None:
        contents["snapshots"] = [
            {
                "id": s.id,
                "frame": int(s.frame),
                "objects": list(s.objects),
                "turns": [memory.turns[t][1] for t in s.turns],
            }
            for s in snapshots
        ]
    return contents
