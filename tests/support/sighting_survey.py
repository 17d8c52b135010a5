"""How often a visual memory's ``times_seen`` / ``order`` equal the DialogMem annotation's.

``python tests/support/sighting_survey.py PERCEPTION SEEDS [KEY=VALUE ...]`` (``PERCEPTION``:
``simulated`` or ``exact``; ``SEEDS``: comma-separated house seeds) builds one small house per
seed as ``tests/memory/test_sightings.py`` does (3-4 rooms, no clutter, 2-3 goals, the memory's
camera at the annotation's visibility resolution, 64x48), forms ``conceptgraph`` on its episode
(further eval overrides, e.g. ``visual.noise.boundary_px=0``, after the seeds) and prints, per
house and in total, the objects fused into exactly one instance and how many of them have the
annotation's ``times_seen`` and ``order``, and (``times_seen at max_gap=0``) how many would have
it if sightings were maximal runs of consecutive frames (the definition before issue 37); last,
the annotation's ``times_seen`` over all observed objects of the houses under both definitions.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import tempfile
from pathlib import Path

from small_houses import SMALL_HOUSES

from memgym.agents.agent import form_episode
from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.core.benchmark import JobArgs
from memgym.core.config import load_config
from memgym.datasets.dialogmem.content import COUNTS
from memgym.memory.embodied.ground_truth import SceneTruth, match_instances
from memgym.pipelines.dialogmem.eval_config import DialogMemEvalConfig
from memgym.pipelines.dialogmem.evaluation import build_env, build_memory, load_episodes
from memgym.pipelines.dialogmem.generation import generate
from memgym.pipelines.structured_reasoner import StructuredReasoner
from memgym.sensors.sightings import MAX_SIGHTING_GAP, count_sightings

CAMERA = ("camera.width=64", "camera.height=48")


@dataclasses.dataclass(frozen=True)
class HouseSightings:
    """One house's single-instance objects.

    Attributes:
        single: objects fused into exactly one instance (holding no other object's views).
        times_seen / order: how many of them the memory's fact equals the annotation's for.
        frames: per such object, the frames the annotation and the memory see it in.
        observed: the frames the annotation sees each observed object in.
    """

    single: int
    times_seen: int
    order: int
    frames: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    observed: tuple[tuple[int, ...], ...]

    def kept(self, max_gap: int) -> int:
        """How many objects would keep the annotation's ``times_seen`` word (none above five) if
        sightings allowed ``max_gap`` unseen frames (:func:`count_sightings`)."""
        return sum(
            COUNTS.get(count_sightings(truth, max_gap)) == COUNTS.get(count_sightings(own, max_gap))
            for truth, own in self.frames
        )


def survey(perception: str, seed: int, overrides: tuple[str, ...] = ()) -> HouseSightings:
    """The sightings of house ``seed``'s single-instance objects (module docstring)."""
    out = Path(tempfile.mkdtemp()) / "episodes.jsonl"
    small = [o for o in SMALL_HOUSES if not o.startswith(("camera.", "first_house_seed"))]
    house = ("scenes=1", *small, f"first_house_seed={seed}", "house.clutter=none", *CAMERA)
    (episode,), _ = load_episodes(Path(generate(JobArgs(overrides=house, out=out, progress=False))))
    config = load_config(
        DialogMemEvalConfig,
        overrides=(f"dataset={out}", "memory=conceptgraph", f"visual.perception={perception}", *CAMERA, *overrides),
    )
    memory = build_memory(config)
    form_episode(build_env(config, memory, {}), ReasonerAgent(memory, StructuredReasoner()), episode=episode)
    truth = {(m.object_id, m.key): m.value for m in episode.memory if m.key in ("times_seen", "order")}
    per_object: dict[str, list[str]] = {}
    for instance_id, object_id in match_instances(SceneTruth.of(episode), memory.objects.instances).items():
        per_object.setdefault(object_id, []).append(instance_id)
    facts = memory.facts()
    instances = {i.id: i for i in memory.objects.instances}
    single = seen = order = 0
    frames = []
    for observation in episode.traversal.observations:
        matched = per_object.get(observation.object_id, [])
        if len(matched) != 1 or len(memory.provenance.get(matched[0], {})) != 1:
            continue
        own = facts[matched[0]]
        single += 1
        seen += own.get("times_seen") == truth.get((observation.object_id, "times_seen"))
        order += own.get("order") == truth.get((observation.object_id, "order"))
        frames.append((tuple(observation.frames), tuple(instances[matched[0]].seen_frames())))
    observed = tuple(tuple(o.frames) for o in episode.traversal.observations)
    return HouseSightings(single, seen, order, tuple(frames), observed)


def main(argv: list[str]) -> None:
    perception, seeds, overrides = argv[0], [int(s) for s in argv[1].split(",")], tuple(argv[2:])
    total = [0, 0, 0, 0]
    observed: list[tuple[int, ...]] = []
    for seed in seeds:
        house = survey(perception, seed, overrides)
        observed += house.observed
        counts = (house.single, house.times_seen, house.order, house.kept(0))
        print(
            f"house {seed} {perception}: single-instance {counts[0]}, times_seen {counts[1]}, order {counts[2]}"
            f" (times_seen at max_gap=0: {counts[3]})"
        )
        total = [a + b for a, b in zip(total, counts)]
    print(
        f"total: single-instance {total[0]}, times_seen {total[1]}, order {total[2]}"
        f" (times_seen at max_gap=0: {total[3]})",
        flush=True,
    )
    for gap in (0, MAX_SIGHTING_GAP):
        counts = collections.Counter(min(count_sightings(f, gap), 6) for f in observed)
        shares = ", ".join(f"{'>5' if n > 5 else n}: {counts[n]}" for n in sorted(counts))
        print(f"annotation times_seen of {len(observed)} observed objects, max_gap={gap}: {shares}")


if __name__ == "__main__":
    main(sys.argv[1:])
