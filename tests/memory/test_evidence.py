"""Visual evidence in its three forms and how the agent sends it to each reasoner kind."""

from __future__ import annotations

import numpy as np

from memgym.agents.reasoner_agent import ReasonerAgent
from memgym.backends.structured import parse_facts
from memgym.core.chat import ImagePart, to_hf_messages, to_openai_messages
from memgym.core.protocols import Memory, Reasoner
from memgym.memory.embodied.evidence import Entry, VisualEvidence
from memgym.pipelines.structured_reasoner import StructuredReasoner

IMAGE = np.zeros((4, 5, 3), np.uint8)
EVIDENCE = VisualEvidence(
    entries=(
        Entry("obj_1", "mug", (1.0, 0.9, -2.0), {"on": "table", "times_seen": "twice"}, image=0, group="snap_0"),
        Entry("obj_2", "table", (1.0, 0.4, -2.0), {}, image=0, group="snap_0"),
    ),
    images=(IMAGE,),
    captions=("snap_0: obj_1 (mug), obj_2 (table)",),
    dialogue="Amelia: The mug is mine.",
    categories=("mug",),
)


class Recorder(Reasoner):
    name = "recorder"

    def generate(self, messages, *, max_new_tokens=256):
        self.messages = messages
        return "OBJECT obj_2"


def test_text_form_lists_entries_images_and_dialogue():
    assert EVIDENCE.text.splitlines() == [
        "[obj_1] mug at (1.00, 0.90, -2.00) m; on: table; times seen: twice; in snap_0; image 1",
        "[obj_2] table at (1.00, 0.40, -2.00) m; in snap_0; image 1",
        "image 1: snap_0: obj_1 (mug), obj_2 (table)",
        "Dialogue:",
        "Amelia: The mug is mine.",
    ]
    assert VisualEvidence().text == "(no matching memory entries)"


def test_structured_form_is_fact_lines_then_dialogue():
    facts = parse_facts([EVIDENCE.structured_text])
    assert [(f.object, f.category, f.type, f.key, f.value) for f in facts] == [
        ("obj_1", "mug", "perceptual", "detected", "mug"),
        ("obj_1", "mug", "perceptual", "on", "table"),
        ("obj_1", "mug", "episodic", "times_seen", "twice"),
        ("obj_2", "table", "perceptual", "detected", "table"),
    ]
    assert EVIDENCE.structured_text.endswith("\nAmelia: The mug is mine.")
    assert EVIDENCE.locations == {"obj_1": (1.0, 0.9, -2.0), "obj_2": (1.0, 0.4, -2.0)}


class FixedMemory(Memory):
    def reset(self):
        pass

    def observe(self, observation):
        pass

    def retrieve(self, query):
        return EVIDENCE

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def test_vlms_get_images_and_text_the_structured_reasoner_gets_facts():
    recorder = Recorder()
    agent = ReasonerAgent(FixedMemory(), recorder)
    action = agent.answer({"text": "Go to the table.", "position": np.zeros(3)}, {"task": "navigation"})
    np.testing.assert_allclose(action["position"], [1.0, 0.4, -2.0])
    user = recorder.messages[-1]
    assert [type(p).__name__ for p in user.content] == ["TextPart", "ImagePart", "TextPart"]
    assert "[obj_1] mug" in user.text_only() and "FACT" not in user.text_only()
    _, images, _ = to_hf_messages(recorder.messages)
    assert len(images) == 1
    parts = to_openai_messages(recorder.messages)[-1]["content"]
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    structured = ReasonerAgent(FixedMemory(), StructuredReasoner())
    messages = structured.messages("Who owns the mug?", EVIDENCE)
    assert not any(isinstance(p, ImagePart) for p in messages[-1].content)
    assert messages[-1].text_only().startswith("Memory:\nFACT ")
    action = structured.answer({"text": "Go to the mug.", "position": np.zeros(3)}, {"task": "navigation"})
    np.testing.assert_allclose(action["position"], [1.0, 0.9, -2.0], rtol=1e-6)


def test_frame_entries_have_no_fact_lines():
    frame = Entry("frame_3", "", (1.0, 0.0, 2.0), image=0)
    assert frame.fact_lines() == []
    assert frame.line() == "[frame_3] view at (1.00, 0.00, 2.00) m; image 1"
    assert VisualEvidence(entries=(frame,)).locations == {"frame_3": (1.0, 0.0, 2.0)}


def test_hf_text_models_get_text_and_vlms_get_images(tmp_path):
    from memgym.backends.hf import HFReasoner
    from tests.support.tiny_hf_models import build_tiny_llama, build_tiny_llava

    text_model = HFReasoner(str(build_tiny_llama(tmp_path / "llama")))
    vlm = HFReasoner(str(build_tiny_llava(tmp_path / "llava")))
    assert not text_model.accepts_images and vlm.accepts_images
    for reasoner, images in ((text_model, 0), (vlm, 1)):
        agent = ReasonerAgent(FixedMemory(), reasoner)
        messages = agent.messages("Go to the mug.", EVIDENCE)
        assert sum(isinstance(p, ImagePart) for p in messages[-1].content) == images
        action = agent.answer({"text": "Go to the mug.", "position": np.zeros(3)}, {"task": "navigation"})
        assert isinstance(action["text"], str) and action["position"].shape == (3,)
