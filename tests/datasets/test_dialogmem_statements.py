"""Residents' statements on generated houses (seeds 0-4, small houses): the verbalised share of QA
holds at ``construction.verbalised_share`` and moves with it, every stated fact is recoverable (the
oracle's facts hold it; the dialogue reading reads every kind back from its line, on held-out seeds 10-14
too), a third of the
instructions name their target only by dialogue, and the oracle still answers every item."""

from __future__ import annotations

import functools

import pytest
from small_houses import SMALL_HOUSES

from memgym.backends.structured import parse_facts
from memgym.core.chat import Message
from memgym.core.config import load_config
from memgym.core.task_line import request_line
from memgym.datasets.dialogmem.content import latest
from memgym.memory.embodied.oracle import OracleProbe
from memgym.pipelines.dialogmem.generation import DialogMemGenerateConfig, EpisodeBuilder, scene_specs
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import read_statements
from memgym.pipelines.structured_reasoner import StructuredReasoner

SEEDS = range(5)


@functools.cache
def episodes(seed: int, *overrides: str) -> tuple:
    config = load_config(DialogMemGenerateConfig, overrides=(*SMALL_HOUSES, "scenes=1", f"seed={seed}", *overrides))
    build = EpisodeBuilder(config)
    return tuple(build((i, spec, 0)) for i, spec in enumerate(scene_specs(config)))


def qa(seed: int, *overrides: str) -> list:
    return [i for e in episodes(seed, *overrides) for i in e.items if i.task == "qa"]


def share(items: list) -> float:
    return sum(i.annotations["verbalised"] for i in items) / len(items)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_verbalised_share_holds_on_every_seed(seed):
    items = qa(seed)
    assert len(items) >= 25
    assert abs(share(items) - 0.605) <= 0.03, share(items)
    kinds = {i.annotations["content_type"] for i in items if i.annotations["verbalised"]}
    assert kinds == {"perceptual", "episodic", "social"}  # residents state all three kinds


def test_the_share_is_a_setting():
    low = [i for seed in SEEDS for i in qa(seed, "construction.verbalised_share=0.35")]
    none = [i for seed in SEEDS for i in qa(seed, "construction.verbalised_share=0")]
    assert abs(share(low) - 0.35) <= 0.02
    # without added statements only social answers and goals' looks (navigation turns) are said
    assert share(none) < 0.35
    assert not any(i.annotations["verbalised"] for i in none if i.annotations["content_type"] == "episodic")


HELD_OUT = range(10, 15)
"""Seeds whose lines were read only once the reading of perceptual and episodic statements was
written (against seeds 0-9 and the grammar test's wordings): the reading generalises to them."""


@pytest.mark.parametrize("seed", [*SEEDS, *HELD_OUT])
def test_every_stated_fact_is_recoverable(seed):
    for episode in episodes(seed):
        oracle = OracleProbe()
        oracle.bind_episode(episode)
        held = {(f.object, f.key, f.value) for f in parse_facts([oracle.retrieve("").text])}
        newest = latest(episode.memory, stated_only=True)
        names = [r.name for r in episode.residents]
        categories = {m.category for m in episode.memory}
        for turn in episode.dialogue:
            item = turn.spec.content
            said = {(s.category, s.key, s.value) for s in read_statements([turn.text], categories, names)}
            # every kind of fact is read from what was said (issue 37), and no other key of the object
            assert (item.category, item.key, item.value) in said, turn.text
            assert {k for c, k, _ in said if c == item.category} == {item.key}, turn.text
            if newest[(item.object_id, item.key)].version != item.version:
                continue  # superseded by a later update or correction
            assert (item.object_id, item.key, item.value) in held, turn.text


def test_a_third_of_instructions_name_their_target_only_by_dialogue():
    navigation = [i for seed in SEEDS for e in episodes(seed) for i in e.items if i.task == "navigation"]
    cue_only = [i for i in navigation if not i.annotations["names_category"]]
    assert 0.25 <= len(cue_only) / len(navigation) <= 0.34
    assert {k for i in cue_only for k in i.annotations["cue_keys"]} >= {"alias", "owner"}
    for item in cue_only:
        assert item.annotations["category"] not in item.prompt.lower() and item.annotations["evidence_turns"]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_oracle_answers_every_item(seed):
    reasoner = StructuredReasoner()
    for episode in episodes(seed):
        oracle = OracleProbe()
        oracle.bind_episode(episode)
        facts = oracle.retrieve("").text
        for item in episode.items:
            line = request_line(item.task, item.prompt)  # the env states the task
            reply = reasoner.generate([Message.text("user", f"{facts}\n{line}")])
            expected = item.answer if item.task == "qa" else f"OBJECT {item.answer['object_id']}"
            assert reply == expected, item.prompt
