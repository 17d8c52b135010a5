"""The DialogMem episode record and its builder from a scene's objects and a traversal.

:func:`build_episode` runs the whole construction for one traversal: residents, memory content,
turn specifications, realisation with validation (regenerate, then drop), then task specs,
filters and item text (a share of navigation items rewritten to name their target only by dialogue,
:mod:`~memgym.datasets.dialogmem.dialogue_navigation`), then statements of perceptual and episodic
answers up to the verbalised share (:mod:`~memgym.datasets.dialogmem.statements`), realised in a
second pass and merged into the dialogue by step. Everything random draws from the one generator
it is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from memgym.core.config import check_ranges
from memgym.core.errors import ConfigError, RecordError
from memgym.core.records import record
from memgym.core.seeding import ADDED_FIELD
from memgym.datasets.dialogmem.content import (
    MemoryItem,
    ObservationLog,
    Segment,
    episodic_content,
    perceptual_content,
    social_content,
)
from memgym.datasets.dialogmem.residents import Resident, sample_residents
from memgym.datasets.dialogmem.statements import plan_statements
from memgym.datasets.dialogmem.task_specs import available_content, draft_items, enumerate_specs, task_items
from memgym.datasets.dialogmem.turns import TurnPlanConfig, plan_turns
from memgym.datasets.dialogmem.validation import DialogueTurn, GroundingAuditor, realise_dialogue, stated_items
from memgym.datasets.embodied import EmbodiedEpisode
from memgym.datasets.traversal import Traversal
from memgym.scenes.objects import SceneObject
from memgym.sensors.sightings import MAX_SIGHTING_GAP, SIGHTING_GAP_KEY, recorded_sighting_gap


@record("dialogmem.episode")
@dataclasses.dataclass(frozen=True, kw_only=True)
class DialogMemEpisode(EmbodiedEpisode):
    """A DialogMem episode: a traversal with dialogue (formation), then navigation and QA (use).

    Attributes:
        traversal: the formation trajectory (scene spec, posed frames, segments, observations).
        residents: the speakers.
        dialogue: the kept turns, in step order; ``dialogue[i].spec.step`` is the frame index at
            which it is spoken.
        memory: every memory content item (perceptual, episodic, social chains) with whether and
            when the dialogue states it; the episode's ground truth.
    """

    residents: tuple[Resident, ...] = ()
    dialogue: tuple[DialogueTurn, ...] = ()
    memory: tuple[MemoryItem, ...] = ()

    def check(self) -> None:
        """Raise :class:`RecordError` on dangling ids, unknown speakers, steps off the traversal or
        a recorded sighting gap that is not an integer >= 0."""
        where = f"episode {self.episode_id}"
        recorded_sighting_gap(self)
        frames = len(self.traversal.frames)
        known = {m.object_id for m in self.memory}
        speakers = {r.name for r in self.residents}
        for turn in self.dialogue:
            if not 0 <= turn.spec.step < frames:
                raise RecordError(
                    f"{where}: turn {turn.spec.turn_id} at step {turn.spec.step} is outside the {frames} frames"
                )
            if turn.spec.speaker not in speakers:
                raise RecordError(f"{where}: turn {turn.spec.turn_id} has unknown speaker {turn.spec.speaker!r}")
            dangling = [o for o in turn.spec.referenced if o not in known]
            if dangling:
                raise RecordError(f"{where}: turn {turn.spec.turn_id} refers to unknown object(s) {dangling}")
        for item in self.items:
            if item.annotations.get("object_id") not in known:
                raise RecordError(
                    f"{where}: item {item.item_id} targets unknown object {item.annotations.get('object_id')!r}"
                )


def observation_log(traversal: Traversal) -> ObservationLog:
    """The per-frame visibility and segments of a traversal, as the dialogue planner reads them."""
    return ObservationLog(
        visible=tuple(tuple(sorted(frame.visible)) for frame in traversal.frames),
        segments=tuple(
            Segment(goal=s.goal_object_id, start=s.start_frame, end=s.end_frame) for s in traversal.segments
        ),
    )


def navigation_goal(obj: SceneObject) -> dict[str, Any]:
    """The gold answer of a navigation item: ``{"position": [x, y, z], "view_points": [[x, y, z], ...]}``."""
    return {"position": list(obj.position), "view_points": [list(v.position) for v in obj.view_points]}


@dataclasses.dataclass(frozen=True)
class ConstructionConfig:
    """Knobs of episode construction (also the dataset config's ``construction`` section)."""

    residents_min: int = 2
    residents_max: int = 4
    social_keys_per_object: int = 2
    change_probability: float = 0.35
    correction_share: float = 0.5
    commentary_every: int = 20
    recall_probability: float = 0.7
    max_attempts: int = 3
    navigation_per_object: int = 1
    qa_per_object: int = 3
    unique_cues: bool = dataclasses.field(
        default=False,
        metadata={
            "help": "sample each object's items among the cue combinations that single it out of its observed "
            "category (false: sample first, then drop the ambiguous ones)",
            **ADDED_FIELD,
        },
    )
    verbalised_share: float = dataclasses.field(
        default=0.605,
        metadata={
            "help": "share of QA items whose answer the residents state (social answers always are; perceptual "
            "and episodic ones are stated to reach it; the paper: 60.5%)",
            "min": 0.0,
            "max": 1.0,
        },
    )
    dialogue_navigation_share: float = dataclasses.field(
        default=1 / 3,
        metadata={
            "help": "share of navigation instructions naming the target only by what residents said "
            "(alias, owner, usage, significance; no category word)",
            "min": 0.0,
            "max": 1.0,
        },
    )
    max_sighting_gap: int = dataclasses.field(
        default=MAX_SIGHTING_GAP,
        metadata={
            "help": "most unseen formation steps inside one sighting of an object when the annotation counts "
            "times_seen (0: maximal runs of consecutive steps, as datasets built before it); recorded in each "
            "episode's annotations, where the visual memories read it",
            "min": 0,
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.max_sighting_gap, bool) or not isinstance(self.max_sighting_gap, int):
            raise ConfigError(f"construction: max_sighting_gap must be an integer >= 0, got {self.max_sighting_gap!r}")
        check_ranges(self)


def _memory_items(
    rng: np.random.Generator,
    objects: Sequence[SceneObject],
    log: ObservationLog,
    residents: Sequence[Resident],
    config: ConstructionConfig,
) -> list[MemoryItem]:
    """The episode's memory items before any is stated: every object's perceptual content, the
    episodic content of the traversal, then the social content of each observed object (drawn
    from ``rng`` in object-id order)."""
    categories = {o.object_id: o.category for o in objects}
    observed = set(log.first_seen())
    items: list[MemoryItem] = []
    for obj in objects:
        items += perceptual_content(obj, categories)
    items += episodic_content(log, categories, config.max_sighting_gap)
    taken: dict[str, set[str]] = {}
    for obj in sorted(objects, key=lambda o: o.object_id):
        if obj.object_id in observed:
            items += social_content(
                rng,
                obj,
                residents,
                keys_per_object=config.social_keys_per_object,
                change_probability=config.change_probability,
                correction_share=config.correction_share,
                taken=taken,
            )
    return items


def _stated_turns(turns: Sequence[DialogueTurn]) -> dict[tuple[str, str, int], int]:
    """``(object id, key, version)`` -> the id of the first turn stating that item."""
    stated: dict[tuple[str, str, int], int] = {}
    for turn in turns:
        if turn.spec.content is not None:
            c = turn.spec.content
            stated.setdefault((c.object_id, c.key, c.version), turn.spec.turn_id)
    return stated


def _merged(first: Sequence[DialogueTurn], second: Sequence[DialogueTurn]) -> list[DialogueTurn]:
    """Both passes' turns in step order (the first pass's first within a step), renumbered."""
    ordered = sorted([*first, *second], key=lambda t: t.spec.step)  # stable: first pass first
    return [dataclasses.replace(t, spec=dataclasses.replace(t.spec, turn_id=i)) for i, t in enumerate(ordered)]


def _construction_counts(turn_specs: int, dropped_turns: Sequence[Any], filtered: dict[str, int]) -> dict[str, Any]:
    """What construction planned and dropped: turn specs, dropped turns and their reasons, filtered items."""
    return {
        "turn_specs": turn_specs,
        "dropped_turns": len(dropped_turns),
        "dropped_turn_reasons": sorted({r for d in dropped_turns for r in d.reasons}),
        "filtered_items": dict(sorted(filtered.items())),
    }


def _traversal_annotations(traversal: Traversal) -> dict[str, Any]:
    """The episode annotations its traversal fixes: scene id, frame and goal counts."""
    return {"scene_id": traversal.scene.scene_id, "frames": len(traversal.frames), "goals": len(traversal.segments)}


def _with_statements(
    rng: np.random.Generator,
    statements: Sequence[Any],
    turns: Sequence[DialogueTurn],
    dropped_turns: Sequence[Any],
    items: Sequence[MemoryItem],
    residents: Sequence[Resident],
    realiser: Any,
    log: Any,
    realising: dict[str, Any],
) -> tuple[list[DialogueTurn], list[Any], list[MemoryItem]]:
    """The dialogue with the planned statement turns realised and merged in (one rng draw: the
    realiser's seed); returns (turns, dropped turns, items with their stated flags updated)."""
    said, dropped_statements = realise_dialogue(
        statements, residents, realiser, log, seed=int(rng.integers(2**31)), history=turns, **realising
    )
    turns = _merged(turns, said)
    return turns, [*dropped_turns, *dropped_statements], stated_items(items, turns)


def build_episode(
    *,
    episode_id: str,
    objects: Sequence[SceneObject],
    traversal: Traversal,
    rng: np.random.Generator,
    config: ConstructionConfig = ConstructionConfig(),
    realiser: Any = None,
    auditor: GroundingAuditor | None = None,
    residents: Sequence[Resident] | None = None,
) -> DialogMemEpisode:
    """Build one episode (see the module docstring).

    Args:
        objects: the scene's annotated objects.
        traversal: the formation trajectory through that scene.
        realiser: a :class:`~memgym.datasets.dialogmem.realise.TemplateRealiser` (default) or
            :class:`~memgym.datasets.dialogmem.realise.LLMRealiser`.
        auditor: optional LLM grounding audit of every utterance.
        residents: fixed speakers (default: sampled).
    """
    from memgym.datasets.dialogmem.realise import TemplateRealiser

    realiser = realiser or TemplateRealiser()
    if residents is None:
        residents = sample_residents(rng, int(rng.integers(config.residents_min, config.residents_max + 1)))
    log = observation_log(traversal)
    goals = {o.object_id: navigation_goal(o) for o in objects}
    items = _memory_items(rng, objects, log, residents, config)
    specs, _ = plan_turns(
        rng, log, items, residents, TurnPlanConfig(config.commentary_every, config.recall_probability)
    )
    realising = {"auditor": auditor, "max_attempts": config.max_attempts}
    turns, dropped_turns = realise_dialogue(specs, residents, realiser, log, seed=int(rng.integers(2**31)), **realising)
    items = stated_items(items, turns)
    content = available_content(items, set(log.first_seen()))
    per_object = {"navigation_per_object": config.navigation_per_object, "qa_per_object": config.qa_per_object}
    task_specs = enumerate_specs(rng, content, unique_cues=config.unique_cues, **per_object)
    share = config.dialogue_navigation_share
    drafts, filtered = draft_items(rng, task_specs, content, goals, dialogue_navigation_share=share)
    answers = [d.spec.answer for d in drafts if d.spec.answer is not None]
    statements = plan_statements(
        rng, answers, _stated_turns(turns), log, residents, config.verbalised_share, len(specs)
    )
    if statements:
        turns, dropped_turns, items = _with_statements(
            rng, statements, turns, dropped_turns, items, residents, realiser, log, realising
        )
    task_list = task_items(drafts, _stated_turns(turns), episode_id=episode_id)
    realiser_name = getattr(realiser, "name", type(realiser).__name__)
    annotations = {**_traversal_annotations(traversal), "realiser": realiser_name, "statement_turns": len(statements)}
    annotations[SIGHTING_GAP_KEY] = config.max_sighting_gap  # the times_seen definition, for the memories
    annotations |= _construction_counts(len(specs) + len(statements), dropped_turns, filtered)
    return DialogMemEpisode(
        episode_id=episode_id,
        benchmark="dialogmem",
        items=tuple(task_list),
        annotations=annotations,
        traversal=traversal,
        residents=tuple(residents),
        dialogue=tuple(turns),
        memory=tuple(items),
    )
