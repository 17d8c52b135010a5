"""Linkers on hand-built cases; link quality against hand counts; instance matching."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from memgym.core.errors import ConfigError, MemgymError
from memgym.memory.embodied.controlled_linker import ControlledLinker
from memgym.memory.embodied.covisibility import Snapshot
from memgym.memory.embodied.ground_truth import (
    LinkCounts,
    SceneTruth,
    link_counts,
    match_instances,
    snapshot_contents,
)
from memgym.memory.embodied.linking import ClipLinker, LinkInputs, VLMLinker, build_linker, link_messages
from memgym.pipelines.structured_reasoner import StructuredReasoner
from tests.support.tiny_hf_models import build_tiny_clip

# Five annotated objects o0..o4, one instance each (i0..i4), four snapshots.
CATEGORIES = {"o0": "mug", "o1": "table", "o2": "sofa", "o3": "lamp", "o4": "bed"}
POSITIONS = {f"o{k}": np.array([float(k), 0.5, 0.0]) for k in range(5)}
SNAPSHOT_OBJECTS = {"snap_0": ("i0", "i1"), "snap_1": ("i2",), "snap_2": ("i3", "i1"), "snap_3": ("i4",)}
FRAME_OF = {"snap_0": 0, "snap_1": 1, "snap_2": 2, "snap_3": 3}
VISIBLE = ({"o0", "o1"}, {"o2"}, {"o3", "o1"}, {"o4"})


def instances():
    return [
        SimpleNamespace(id=f"i{k}", label=CATEGORIES[f"o{k}"], location=tuple(POSITIONS[f"o{k}"]), frames=frames)
        for k, frames in enumerate(({0: 0.2}, {0: 0.3, 2: 0.1}, {1: 0.4}, {2: 0.2}, {3: 0.5}))
    ]


def snapshots():
    image = np.zeros((4, 4, 3), np.uint8)
    return [Snapshot(s, FRAME_OF[s], image, objects) for s, objects in SNAPSHOT_OBJECTS.items()]


def truth():
    return SceneTruth(CATEGORIES, POSITIONS, tuple(frozenset(v) for v in VISIBLE))


def episode(references):
    """A fake episode: turn t, spoken at frame t % 4, refers to ``references[t]``."""
    dialogue = [
        SimpleNamespace(spec=SimpleNamespace(step=t % 4, speaker="Amelia", referenced=refs), text=f"remark {t}")
        for t, refs in enumerate(references)
    ]
    return SimpleNamespace(episode_id="ep", dialogue=dialogue)


def turns_of(ep):
    return [(t.spec.step, f"Amelia: {t.text}") for t in ep.dialogue]


def test_instances_match_the_annotated_object_seen_with_them():
    matched = match_instances(truth(), instances())
    assert matched == {f"i{k}": f"o{k}" for k in range(5)}
    far = SimpleNamespace(id="i9", label="mug", location=(20.0, 0.0, 0.0), frames={3: 0.1})
    assert match_instances(truth(), [far]) == {}  # never seen with a mug, and far from it
    contents = snapshot_contents(snapshots(), matched)
    assert contents["snap_2"] == {"o3", "o1"}


def test_link_quality_against_hand_counts():
    contents = snapshot_contents(snapshots(), match_instances(truth(), instances()))
    references = [("o0",), ("o1",), ("o2",), ("o9",), ()]  # o9 is in no snapshot: not linkable
    links = {"snap_0": [0], "snap_1": [1, 3], "snap_2": [1]}
    # turn 0 right; turn 1 on snap_1 (wrong) and snap_2 (holds o1: right); turn 2 unlinked
    counts = link_counts(references, links, contents)
    assert counts == LinkCounts(turns=5, linkable=3, linked=3, correct=2)
    assert counts.quality == pytest.approx(200 / 3)
    assert (counts + counts).quality == counts.quality and LinkCounts().quality is None


@pytest.mark.parametrize("mode", ["missing", "wrong"])
@pytest.mark.parametrize("quality", [0.0, 30.0, 50.0, 70.0, 100.0])
def test_controlled_linker_hits_the_requested_quality(mode, quality):
    references = [(f"o{t % 5}",) for t in range(20)]
    ep = episode(references)
    linker = ControlledLinker(quality, mode, seed=3)
    linker.bind_episode(ep, truth())
    shots = snapshots()
    inputs = LinkInputs(turns_of(ep), shots, instances(), {})
    links = linker.link(inputs)
    contents = snapshot_contents(shots, match_instances(truth(), instances()))
    counts = link_counts(references, links, contents)
    assert counts.linkable == 20 and counts.quality == quality
    linked = {t for ts in links.values() for t in ts}
    correct = {t for s, ts in links.items() for t in ts if contents[s] & set(references[t])}
    if mode == "missing":
        assert linked == correct  # the others are left unlinked
    else:
        assert linked == set(range(20))
        for snapshot_id, ts in links.items():
            for t in ts:  # a wrong link never lands on a snapshot showing the referenced object
                assert t in correct or not contents[snapshot_id] & set(references[t])
        assert all(len([s for s, ts in links.items() if t in ts]) == 1 for t in set(range(20)) - correct)
    again = ControlledLinker(quality, mode, seed=3)
    again.bind_episode(ep, truth())
    assert again.link(inputs) == links  # seeded


def test_controlled_linker_needs_its_episode_and_valid_options():
    with pytest.raises(ConfigError, match="quality"):
        ControlledLinker(120.0)
    with pytest.raises(ConfigError, match="mode"):
        build_linker("controlled", {"mode": "sometimes"})
    with pytest.raises(MemgymError, match="bind_episode"):
        ControlledLinker().link(LinkInputs([], snapshots(), instances(), {}))
    ep = episode([("o0",)])
    linker = ControlledLinker()
    linker.bind_episode(ep, truth())
    with pytest.raises(MemgymError, match="not the episode's"):
        linker.link(LinkInputs([(0, "Bob: something else")], snapshots(), instances(), {}))


FRAME_OBJECTS = {0: {"i0": 0.2, "i1": 0.3}, 1: {"i2": 0.4}, 2: {"i3": 0.2, "i1": 0.1}}


def test_vlm_linker_with_the_structured_reasoner():
    turns = [
        (0, "Amelia: That mug is the one Bob drinks from."),  # mug co-observed: linked to snap_0
        (2, "Bob: The table is where we eat."),  # table in snap_0 and snap_2: both
        (1, "Amelia: The lamp upstairs is mine."),  # no lamp at frame 1: unknown
        (3, "Bob: The bed is new."),  # nothing detected at frame 3: not asked
    ]
    inputs = LinkInputs(turns, snapshots(), instances(), FRAME_OBJECTS, StructuredReasoner())
    assert VLMLinker().link(inputs) == {"snap_0": [0, 1], "snap_2": [1]}
    reply = StructuredReasoner().generate(link_messages("the table and the mug", [("i0", "mug"), ("i1", "table")]))
    assert reply == "i1"  # the category named first


class Scripted:
    """Replies from a list, recording the prompts."""

    def __init__(self, replies):
        self.replies, self.prompts, self.messages = list(replies), [], []

    def generate(self, messages, max_new_tokens=16):
        self.messages.append(messages)
        self.prompts.append(messages[-1].text_only())
        return self.replies.pop(0)


def test_vlm_linker_follows_a_scripted_reasoner():
    turns = [(0, "Amelia: remark one"), (2, "Bob: remark two")]
    reasoner = Scripted(["'i1'.", "I think unknown"])
    links = VLMLinker().link(LinkInputs(turns, snapshots(), instances(), FRAME_OBJECTS, reasoner))
    assert links == {"snap_0": [0], "snap_2": [0]}
    assert reasoner.prompts[0].startswith('LINK [{"id": "i1", "label": "table"}, {"id": "i0", "label": "mug"}]')
    assert reasoner.prompts[0].endswith("Remark: remark one")  # the speaker is not part of the remark
    with pytest.raises(MemgymError, match="reasoner"):
        VLMLinker().link(LinkInputs(turns, snapshots(), instances(), FRAME_OBJECTS, None))
    images = {0: np.full((4, 4, 3), 7, np.uint8)}
    seeing = Scripted(["i0", "unknown"])
    VLMLinker().link(LinkInputs(turns, snapshots(), instances(), FRAME_OBJECTS, seeing, images))
    assert [len(m[-1].content) for m in seeing.messages] == [2, 1]  # the frame's image, when there is one
    blind = Scripted(["i0", "unknown"])
    blind.accepts_images = False
    VLMLinker().link(LinkInputs(turns, snapshots(), instances(), FRAME_OBJECTS, blind, images))
    assert [len(m[-1].content) for m in blind.messages] == [1, 1]


class FixedEncoder:
    """Hand-set unit embeddings: image k -> e_k; text -> the row given per utterance."""

    def __init__(self, texts):
        self.texts = texts

    def encode_images(self, images):
        return np.eye(len(images), 4, dtype=np.float32)

    def encode_texts(self, texts):
        return np.array([self.texts[t] for t in texts], np.float32)


def test_clip_linker_links_to_the_most_similar_snapshots():
    turns = [(0, "Amelia: a"), (1, "Bob: b")]
    encoder = FixedEncoder({"a": [0.1, 0.2, 0.9, 0.0], "b": [0.6, 0.0, 0.0, 0.8]})
    inputs = LinkInputs(turns, snapshots(), instances(), {})
    assert ClipLinker(encoder).link(inputs) == {"snap_2": [0], "snap_3": [1]}
    assert ClipLinker(encoder, top_k=2).link(inputs) == {"snap_2": [0], "snap_1": [0], "snap_3": [1], "snap_0": [1]}
    with pytest.raises(ConfigError, match="clip_model"):
        build_linker("clip", {})


def test_clip_linker_on_a_tiny_random_clip(tmp_path):
    folder = str(build_tiny_clip(tmp_path / "clip"))
    linker = build_linker("clip", {"clip_model": folder, "top_k": 1})
    rng = np.random.default_rng(0)
    shots = [Snapshot(f"snap_{k}", k, rng.integers(0, 255, (24, 32, 3), dtype=np.uint8), ("i0",)) for k in range(3)]
    long_line = "Amelia: " + "the red mug on the kitchen table is mine " * 5  # longer than the text tower
    turns = [(0, long_line), (1, "Bob: the sofa"), (2, "Amelia: my lamp")]
    links = linker.link(LinkInputs(turns, shots, [], {}))
    assert sorted(t for ts in links.values() for t in ts) == [0, 1, 2]  # each turn to exactly one snapshot
    assert linker.link(LinkInputs(turns, shots, [], {})) == links


def test_3dmem_linked_runs_the_linker_named_in_its_options():
    from memgym.core.registry import LINKERS, MEMORIES
    from memgym.memory.embodied.linking import Linker

    memory_cls = MEMORIES.get("3dmem+linked")
    assert isinstance(memory_cls(link={"linker": "controlled", "quality": 50.0}).linker, ControlledLinker)
    with pytest.raises(ConfigError, match="link.linker=<one of: clip, controlled, vlm"):
        memory_cls(link={})

    class EveryTurnToFirstSnapshot(Linker):  # what a plugin package would add under memgym.linkers
        def link(self, inputs):
            return {inputs.snapshots[0].id: list(range(len(inputs.turns)))}

    LINKERS.register("first_snapshot")(EveryTurnToFirstSnapshot)
    try:
        memory = memory_cls(link={"linker": "first_snapshot"})
        assert memory.linker.link(LinkInputs([(0, "A: x"), (1, "A: y")], snapshots(), instances(), {})) == {
            "snap_0": [0, 1]
        }
    finally:
        LINKERS._entries.pop("first_snapshot")
