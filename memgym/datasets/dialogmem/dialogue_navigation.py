"""Navigation instructions that name their target only by what residents said.

The paper's instructions identify a target through dialogue ("Go to the cabinet where Amelia keeps
snacks."); memgym's templates always named its category as well, so a memory never needed the
dialogue to know *which kind* of object was meant. :func:`rewrite_navigation` rewrites a share of an
episode's navigation drafts (``construction.dialogue_navigation_share``, default a third) into
instructions with no category word: ``"Take me to the lighthouse."`` (alias), ``"Go to whatever was
a wedding gift."`` (significance), ``"Find what Olga uses for afternoon naps."`` (owner and usage),
``"Head over to where we do jigsaw puzzles."`` (usage), ``"Go to Olga's spot."`` (owner).

A target qualifies when some of these social cues (stated in the kept dialogue) single it out among
*all* observed objects, of any category (:func:`dialogue_cues`), and the instruction names no
observed category (an alias such as ``"the treasure chest"`` does when a chest was observed). The
drafts to rewrite are drawn from the qualifying ones with the episode's generator (objects left
without a navigation item, because every cue combination naming their category was filtered, get a
new one); a rewritten item keeps its target and gold answer, its cues become the social ones, and
``names_category`` is false.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from memgym.backends.structured import words
from memgym.datasets.dialogmem.content import MemoryItem
from memgym.datasets.dialogmem.drafts import Draft, TaskSpec, matches
from memgym.datasets.dialogmem.validation import format_violations, leakage_violations

INSTRUCTIONS = ("Take me to {ref}.", "Go to {ref}.", "Head over to {ref}.", "Find {ref}.", "Navigate to {ref}.")
REFERENCES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("alias",): ("{alias}",),
    ("significance",): ("the thing that was {significance}", "whatever was {significance}"),
    ("owner", "usage"): ("what {owner} uses for {usage}", "the spot {owner} uses for {usage}"),
    ("usage",): ("where we do {usage}", "the spot we use for {usage}"),
    ("owner",): ("{owner}'s spot", "the one thing {owner} owns"),
}
"""Referring expressions per social cue set, in order of preference."""


def dialogue_cues(target: str, content: Mapping[str, Mapping[str, MemoryItem]]) -> tuple[MemoryItem, ...] | None:
    """The first cue set of :data:`REFERENCES` that the target's stated social items fill and no other
    observed object matches (None when there is none)."""
    keys = content.get(target, {})
    for cue_keys in REFERENCES:
        cues = tuple(keys[k] for k in cue_keys if k in keys and keys[k].type == "social")
        if len(cues) != len(cue_keys):
            continue
        if not any(matches(cues, other) for object_id, other in content.items() if object_id != target):
            return cues
    return None


def instruction(cues: Sequence[MemoryItem], rng: np.random.Generator) -> str:
    """A category-free instruction naming the cues (:data:`INSTRUCTIONS` x :data:`REFERENCES`)."""
    values = {c.key: c.value for c in cues}
    options = REFERENCES[tuple(c.key for c in cues)]
    ref = options[int(rng.integers(len(options)))].format(**values)
    text = INSTRUCTIONS[int(rng.integers(len(INSTRUCTIONS)))].format(ref=ref)
    return text[0].upper() + text[1:]


def names_a_category(text: str, categories: set[str]) -> bool:
    """Whether ``text`` contains one of ``categories`` as a word sequence."""
    padded = f" {' '.join(words(text))} "
    return any(f" {' '.join(words(c))} " in padded for c in categories if words(c))


def rewrite_navigation(
    rng: np.random.Generator,
    drafts: Sequence[Draft],
    content: Mapping[str, Mapping[str, MemoryItem]],
    goals: Mapping[str, dict[str, Any]],
    share: float,
) -> list[Draft]:
    """``drafts`` with about ``share`` of the navigation items naming their target only by dialogue
    cues (module docstring): qualifying navigation drafts are rewritten, and qualifying objects with
    no navigation draft (every cue combination naming their category was filtered) get one, until
    ``round(share * navigation items)`` do or none qualifies any more."""
    navigation = [i for i, d in enumerate(drafts) if d.spec.task == "navigation"]
    targets = {drafts[i].spec.target for i in navigation}
    spare = sorted(o for o in content if o not in targets and o in goals)
    categories = {next(iter(keys.values())).category for keys in content.values() if keys}
    prompts = {d.prompt for d in drafts}
    out, added = list(drafts), []
    rewritten = 0
    # slots: an index into ``drafts`` (rewrite) or -1 - k for ``spare[k]`` (a new item)
    slots = [*navigation, *(-1 - k for k in range(len(spare)))]
    for index in rng.permutation(len(slots)):
        if rewritten >= round(share * (len(navigation) + len(added))):
            break
        slot = slots[int(index)]
        target = drafts[slot].spec.target if slot >= 0 else spare[-1 - slot]
        cues = dialogue_cues(target, content)
        if cues is None:
            continue
        prompt = instruction(cues, rng)
        if names_a_category(prompt, categories) or leakage_violations(prompt) or format_violations(prompt):
            continue
        if prompt in prompts:
            continue
        prompts.add(prompt)
        category = cues[0].category
        spec = TaskSpec("navigation", target, category, cues, names_category=False)
        draft = Draft(spec, prompt, {"object_id": target, **goals[target]})
        if slot >= 0:
            out[slot] = draft
        else:
            added.append(draft)
        rewritten += 1
    return out + added
