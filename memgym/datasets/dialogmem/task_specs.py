"""Navigation and QA items from structured specifications, and the filters they pass.

A :class:`TaskSpec` fixes, before any text exists, the target object, the identification
evidence (one or two memory items of *different* content types) and, for QA, the answer evidence
(one item of one type). Text comes from templates: a referring expression built from the cues
and a question pattern per answer key (the structured reasoner does not read these templates; it
is tested on independently written phrasings too, ``tests/support/data/dialogmem_phrasings*.json``).

What the agent can know is the *available* content: perceptual and episodic items of objects it
observed, and social items stated in the kept dialogue (the latest stated version of each chain
is the gold answer; earlier versions are superseded). Filters, in order, each counted:

1. ``same_type`` -- QA whose target is identified by a single content type and whose answer has
   that same type (identifying the object would reveal the answer);
2. ``not_unique`` -- another observed object of the category matches every cue;
3. ``ambiguous_group`` -- items grouped by (category, cues) span more than one object; the whole
   group is dropped;
4. ``reveals_answer`` -- the question already contains the answer's words;
5. ``invalid_text`` -- the prompt breaks the utterance rules of
   :mod:`~memgym.datasets.dialogmem.validation` (metadata leakage such as ids or field names from
   odd category labels, format);
6. ``duplicate`` -- the same prompt twice in an episode.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.backends.structured import words
from memgym.core.episode import TaskItem
from memgym.datasets.dialogmem.content import CONTENT_TYPES, MemoryItem, latest
from memgym.datasets.dialogmem.dialogue_navigation import rewrite_navigation
from memgym.datasets.dialogmem.drafts import Draft, TaskSpec, matches
from memgym.datasets.dialogmem.validation import format_violations, leakage_violations

QUESTION_TEMPLATES: dict[str, str] = {
    "owner": "Who owns {ref}?",
    "usage": "What is {ref} used for?",
    "alias": "What do the residents call {ref}?",
    "significance": "Why is {ref} special to the residents?",
    "color": "What color is {ref}?",
    "material": "Which material is {ref} made of?",
    "size": "How big is {ref} compared with others of its kind?",
    "room": "Which room is {ref} in?",
    "on": "On top of what is {ref} standing?",
    "near": "What object is beside {ref}?",
    "times_seen": "How many times did you see {ref}?",
    "segment": "Which object were you heading to when you came across {ref}?",
    "order": "Counting only objects of its kind, in what order did you first see {ref}?",
}
INSTRUCTION_TEMPLATES = ("Go to {ref}.", "Take me to {ref}.", "Navigate to {ref}.", "Find {ref}.")
FILTERS = ("same_type", "not_unique", "ambiguous_group", "reveals_answer", "invalid_text", "duplicate")
_STOP = frozenset(["a", "an", "the", "of", "to", "in", "on", "it", "its", "is", "was", "for", "and", "that", "you"])


def available_content(items: Sequence[MemoryItem], observed: set[str]) -> dict[str, dict[str, MemoryItem]]:
    """object id -> key -> the item an agent can know (see the module docstring)."""
    table: dict[str, dict[str, MemoryItem]] = {}
    visual = [i for i in items if i.type != "social" and i.object_id in observed]
    social = [i for i in items if i.type == "social" and i.object_id in observed]
    for (object_id, key), item in {**latest(visual), **latest(social, stated_only=True)}.items():
        table.setdefault(object_id, {})[key] = item
    return table


def enumerate_specs(
    rng: np.random.Generator,
    content: Mapping[str, Mapping[str, MemoryItem]],
    *,
    navigation_per_object: int = 2,
    qa_per_object: int = 3,
    unique_cues: bool = False,
) -> list[TaskSpec]:
    """Sample navigation and QA specs for every object with available content, stratified by
    identification types (navigation) and answer type (QA) so every content type is represented.

    QA specs whose answer key is one of the cues, or that :func:`is_same_type` rejects, are never
    proposed; :func:`build_items` still checks the latter (counted as ``same_type``). With
    ``unique_cues``, only cue combinations that :func:`is_unique` accepts are proposed, so an object
    whose category repeats gets items from the cues that single it out (in a cluttered house most
    single cues do not) instead of losing them to the ``not_unique`` filter.
    """
    specs: list[TaskSpec] = []
    for object_id in sorted(content):
        keys = content[object_id]
        category = next(iter(keys.values())).category
        by_type = {t: [keys[k] for k in sorted(keys) if keys[k].type == t] for t in CONTENT_TYPES}
        options: list[tuple[MemoryItem, ...]] = [(item,) for t in CONTENT_TYPES for item in by_type[t]]
        for t1, t2 in itertools.combinations(CONTENT_TYPES, 2):
            options += list(itertools.product(by_type[t1], by_type[t2]))
        if unique_cues:
            options = [
                cues for cues in options if is_unique(TaskSpec("navigation", object_id, category, cues), content)
            ]
        if not options:
            continue
        navigation = [TaskSpec("navigation", object_id, category, cues) for cues in options]
        specs += _stratified(rng, navigation, lambda spec: spec.identification_types, navigation_per_object)
        qa = []
        for cues in options:
            cue_keys = {c.key for c in cues}
            for answer in keys.values():
                spec = TaskSpec("qa", object_id, category, cues, answer)
                if answer.key not in cue_keys and not is_same_type(spec):
                    qa.append(spec)
        specs += _stratified(rng, qa, lambda spec: spec.answer.type, qa_per_object)
    return specs


def _stratified(rng: np.random.Generator, specs: list[TaskSpec], stratum, count: int) -> list[TaskSpec]:
    """Up to ``count`` specs, one per stratum in random stratum order, then again round-robin."""
    groups: dict[Any, list[TaskSpec]] = {}
    for spec in specs:
        groups.setdefault(stratum(spec), []).append(spec)
    order = [sorted(groups, key=str)[int(i)] for i in rng.permutation(len(groups))]
    queues = {g: [groups[g][int(i)] for i in rng.permutation(len(groups[g]))] for g in order}
    chosen: list[TaskSpec] = []
    while len(chosen) < count and any(queues.values()):
        for group in order:
            if queues[group] and len(chosen) < count:
                chosen.append(queues[group].pop())
    return chosen


def is_same_type(spec: TaskSpec) -> bool:
    """QA identified by one content type and answered from that same type."""
    return spec.answer is not None and spec.identification_types == (spec.answer.type,)


def is_unique(spec: TaskSpec, content: Mapping[str, Mapping[str, MemoryItem]]) -> bool:
    """No other observed object of the category matches all the spec's cues."""
    for object_id, keys in content.items():
        if object_id == spec.target or next(iter(keys.values())).category != spec.category:
            continue
        if matches(spec.cues, keys):
            return False
    return True


def referring_expression(category: str, cues: Sequence[MemoryItem]) -> str:
    """A noun phrase naming the object by its cues, e.g. ``"the red mug in the kitchen that belongs to Ben"``."""
    values = {c.key: c.value for c in cues}
    adjectives = [values[k] for k in ("size", "color", "material") if k in values]
    places = [f"{w} the {values[k]}" for k, w in (("room", "in"), ("on", "on"), ("near", "next to")) if k in values]
    clauses = []
    if "owner" in values and "order" in values:
        clauses.append(f"that belongs to {values['owner']}")
    clauses += [
        template.format(values[key])
        for key, template in (
            ("usage", "that is used for {}"),
            ("alias", "that the residents call {}"),
            ("significance", "that was {}"),
            ("times_seen", "that you saw {}"),
            ("segment", "that you saw on the way to the {}"),
        )
        if key in values
    ]
    if "order" in values:
        head = f"the {values['order']} " + " ".join([*adjectives, category]) + " you saw"
    elif "owner" in values:
        head = f"{values['owner']}'s " + " ".join([*adjectives, category])
    else:
        head = "the " + " ".join([*adjectives, category])
    return " ".join([head, *places, " and ".join(clauses)]).strip()


def reveals_answer(prompt: str, answer: str) -> bool:
    """All content words of ``answer`` already appear in ``prompt``."""
    answer_words = [w for w in words(answer) if w not in _STOP]
    return bool(answer_words) and set(answer_words) <= set(words(prompt))


def draft_items(
    rng: np.random.Generator,
    specs: Sequence[TaskSpec],
    content: Mapping[str, Mapping[str, MemoryItem]],
    goals: Mapping[str, dict[str, Any]],
    *,
    dialogue_navigation_share: float = 0.0,
) -> tuple[list[Draft], Counter]:
    """Filter specs and write their text; returns (drafts, per-filter drop counts).

    Args:
        goals: object id -> ``{"position": [x, y, z], "view_points": [[x, y, z], ...]}``.
        dialogue_navigation_share: share of the navigation items rewritten to name their target
            only by what residents said (:mod:`~memgym.datasets.dialogmem.dialogue_navigation`).
    """
    dropped: Counter = Counter(dict.fromkeys(FILTERS, 0))
    kept: list[TaskSpec] = []
    for spec in specs:
        if is_same_type(spec):
            dropped["same_type"] += 1
        elif not is_unique(spec, content):
            dropped["not_unique"] += 1
        else:
            kept.append(spec)
    groups: dict[Any, set[str]] = {}
    for spec in kept:
        groups.setdefault(spec.signature(), set()).add(spec.target)
    unambiguous = [s for s in kept if len(groups[s.signature()]) == 1]
    dropped["ambiguous_group"] += len(kept) - len(unambiguous)
    drafts: list[Draft] = []
    prompts: set[str] = set()
    for spec in unambiguous:
        ref = referring_expression(spec.category, spec.cues)
        if spec.task == "navigation":
            prompt = INSTRUCTION_TEMPLATES[int(rng.integers(len(INSTRUCTION_TEMPLATES)))].format(ref=ref)
            answer: Any = {"object_id": spec.target, **goals[spec.target]}
        else:
            assert spec.answer is not None
            prompt = QUESTION_TEMPLATES[spec.answer.key].format(ref=ref)
            prompt = prompt[0].upper() + prompt[1:]
            answer = spec.answer.value
            if reveals_answer(prompt, answer):
                dropped["reveals_answer"] += 1
                continue
        if leakage_violations(prompt) or format_violations(prompt):
            dropped["invalid_text"] += 1
            continue
        if prompt in prompts:
            dropped["duplicate"] += 1
            continue
        prompts.add(prompt)
        drafts.append(Draft(spec, prompt, answer))
    if dialogue_navigation_share > 0:
        drafts = rewrite_navigation(rng, drafts, content, goals, dialogue_navigation_share)
    return drafts, dropped


def task_items(
    drafts: Sequence[Draft], stated_turns: Mapping[tuple[str, str, int], int], *, episode_id: str
) -> list[TaskItem]:
    """The task items of ``drafts``, annotated with the kept dialogue: ``stated_turns`` maps
    (object id, key, version) to the id of the first kept turn stating it."""
    return [_task_item(d.spec, d.prompt, d.answer, i, episode_id, stated_turns) for i, d in enumerate(drafts)]


def build_items(
    rng: np.random.Generator,
    specs: Sequence[TaskSpec],
    content: Mapping[str, Mapping[str, MemoryItem]],
    goals: Mapping[str, dict[str, Any]],
    stated_turns: Mapping[tuple[str, str, int], int],
    *,
    episode_id: str,
) -> tuple[list[TaskItem], Counter]:
    """:func:`draft_items` then :func:`task_items` (no dialogue-only navigation)."""
    drafts, dropped = draft_items(rng, specs, content, goals)
    return task_items(drafts, stated_turns, episode_id=episode_id), dropped


def _task_item(
    spec: TaskSpec,
    prompt: str,
    answer: Any,
    index: int,
    episode_id: str,
    stated_turns: Mapping[tuple[str, str, int], int],
) -> TaskItem:
    evidence = [*spec.cues, *([spec.answer] if spec.answer else [])]
    turns = sorted({stated_turns[k] for e in evidence if (k := (e.object_id, e.key, e.version)) in stated_turns})
    annotations: dict[str, Any] = {
        "object_id": spec.target,
        "category": spec.category,
        "identification_types": list(spec.identification_types),
        "cue_keys": sorted(c.key for c in spec.cues),
        "cue_updated": any(c.version > 0 for c in spec.cues),
        "evidence_turns": turns,
    }
    if spec.answer is not None:
        a = spec.answer
        annotations |= {
            "content_type": a.type,
            "answer_key": a.key,
            "verbalised": (a.object_id, a.key, a.version) in stated_turns,
            "updated": a.version > 0,
        }
    else:
        annotations["content_type"] = "+".join(spec.identification_types)
        annotations["names_category"] = spec.names_category
    prefix = "nav" if spec.task == "navigation" else "qa"
    return TaskItem(
        item_id=f"{episode_id}/{prefix}{index:03d}",
        task=spec.task,
        prompt=prompt,
        answer=answer,
        annotations=annotations,
    )
