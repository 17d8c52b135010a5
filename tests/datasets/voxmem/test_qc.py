"""QC checks catch what they are for: alternative answers, leakage, dirty fillers, budgets, nesting, bad turns."""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.backends.asr.base import ASRBackend
from memgym.datasets.voxmem import qc
from memgym.datasets.voxmem.plans import plan_item
from memgym.datasets.voxmem.records import Session, Turn

SOUNDS = ["dog", "rain", "siren", "clock_alarm"]


def _history(plan):
    sessions = []
    for s in plan.sessions:
        turns = (
            Turn(role="user", text=f"About {s.fact.subject}.", user=s.fact.speaker),
            Turn(role="assistant", text="Ok."),
        )
        sessions.append(Session(session_id=s.key, role=s.role, turns=turns, fact=s.fact, tokens=100))
    filler = Session(session_id="f0", role="filler", turns=(Turn(role="user", text="How do I tie a knot?"),), tokens=50)
    return [*sessions, filler]


def _check(plan, short, long, budget_tokens=None):
    histories = {1000: short, 2000: long}
    tokens = budget_tokens or {1000: sum(s.tokens for s in short), 2000: sum(s.tokens for s in long)}
    return qc.item_failures(plan, histories, tokens, SOUNDS)


def test_clean_item_passes_and_each_defect_is_flagged():
    plan = plan_item("p", "sound", "IE", "cue_to_fact", SOUNDS, np.random.default_rng(0))
    base = _history(plan)
    assert _check(plan, base, base) == []
    evidence = next(s for s in base if s.role == "evidence")
    rival_fact = dataclasses.replace(evidence.fact, value="a different value")
    rival = dataclasses.replace(evidence, session_id="rival", role="haystack", fact=rival_fact)
    assert "unique_answer@2000" in _check(plan, base, [*base, rival])
    leaky = dataclasses.replace(base[1], turns=(Turn(role="user", text="Hear the rain outside?"),))
    assert "transcript_only@2000" in _check(plan, base, [*base[:1], leaky, *base[2:]])
    subject = plan.query.subjects[0]
    dirty = Session(session_id="f1", role="filler", turns=(Turn(role="user", text=f"Tell me about {subject}"),))
    assert "filler_clean@2000" in _check(plan, base, [*base, dirty])
    assert "budget@1000" in _check(plan, base, base, {1000: 1001, 2000: 900})
    assert "nesting@1000<2000" in _check(plan, base, list(reversed(base)))


def test_turn_checks():
    good = Turn(role="user", text="x", duration_s=3.0, sound="rain", snr_db=10.1, cue="fast", cue_delta=0.3)
    assert qc.turn_failures(good, 10.0) == []
    assert qc.turn_failures(dataclasses.replace(good, duration_s=31.0), 10.0) == ["duration"]
    assert qc.turn_failures(dataclasses.replace(good, snr_db=12.0), 10.0) == ["snr"]
    assert qc.turn_failures(dataclasses.replace(good, cue_delta=0.01), 10.0) == ["cue"]
    assert qc.turn_failures(dataclasses.replace(good, clipped=0.01), 10.0) == ["clipping"]


class ScriptedASR(ASRBackend):
    """Hears what a table says for each file (files are told apart by their constant sample value)."""

    kind = "scripted"

    def __init__(self, heard: dict[int, str]) -> None:
        super().__init__()
        self.heard, self.calls = heard, 0

    def _decode(self, audio, sample_rate):
        self.calls += 1
        return self.heard[round(float(audio[0]) * 100)]


def _turn(root, index, text, **fields):
    import soundfile

    path = f"audio/{index:02d}.flac"
    (root / "audio").mkdir(exist_ok=True)
    soundfile.write(str(root / path), np.full(1600, index / 100, np.float32), 16000, subtype="PCM_16")
    return Turn(role="user", text=text, audio=path, **fields)


def test_intelligibility_gate_needs_the_answer_words_of_evidence_turns(tmp_path):
    from memgym.datasets.voxmem.records import SessionFact, VoxMemEpisode

    fact = SessionFact(
        family="renovation", subject="the kitchen renovation", value="five thousand dollars", speaker="a"
    )
    said = "I've decided the budget for the kitchen renovation should be five thousand dollars."
    asr = ScriptedASR(
        {
            1: "I've decided the budget for the kitchen renovation should be $5,000.",  # all heard
            2: "I decided the market for vacation renovation should be $500.",  # value missed
            3: "Can we go over the kitchen renovation again?",
            4: "The budget for the kitchen renovation should be 5 dollars.",  # value missed, in a haystack
        }
    )
    gate = qc.IntelligibilityGate(tmp_path, asr)
    opener = _turn(tmp_path, 3, "Can we go over the kitchen renovation again?", user="a")
    good = Session(
        session_id="good", role="evidence", fact=fact, turns=(opener, _turn(tmp_path, 1, said, user="a", cue="fast"))
    )
    bad = dataclasses.replace(good, session_id="bad", turns=(opener, _turn(tmp_path, 2, said, user="a", sound="rain")))
    hay = dataclasses.replace(good, session_id="hay", role="haystack", turns=(_turn(tmp_path, 4, said, user="a"),))
    assert gate.failures([good, hay]) == {}  # haystacks are not gated (not even decoded)
    assert gate.failures([good, bad, hay]) == {"bad": ["intelligible"]}
    assert gate.hear(bad.turns[1], fact).missing == ("five thousand dollars",)
    assert qc.answer_phrases(fact, opener.text) == ()

    decoded = asr.calls
    again = qc.IntelligibilityGate(tmp_path, ScriptedASR({}))  # same identity: transcripts come from disk
    assert again.failures([good, bad]) == {"bad": ["intelligible"]} and again.asr.calls == 0
    assert asr.calls == decoded == 3 and (tmp_path / "audio" / "02.asr.json").is_file()

    episode = VoxMemEpisode(
        episode_id="e", benchmark="voxmem", sessions=(good, bad, hay), annotations={"voices": {"a": "v1"}}
    )
    report = gate.report([episode, episode])
    assert report["turns"] == 4  # every user turn (the haystack's too), each audio once
    # the evidence turns: I've, budget, the kitchen, thousand
    assert report["evidence_wer"] == report["wer_by_role"]["evidence"] == {"wer": 5 / 34, "words": 34, "turns": 3}
    assert report["wer_by_role"]["haystack"]["turns"] == 1 and report["wer"]["words"] > 34
    assert report["wer_by_cue"]["fast"]["wer"] == 0 and report["wer_by_background"]["sound"]["wer"] == 5 / 13
    assert report["wer_by_voice"] == {"v1": report["wer"]}
    assert report["answer_turns"] == {"said": 2, "recognised": 1}
    md = qc.write_report(tmp_path, {**_minimal_report(), "intelligibility": report}).read_text()
    assert "| fast | 0.0% | 13 | 1 |" in md and "value recognised in 1 of 2 evidence turns" in md


def _minimal_report():
    return {
        "items_kept": 1,
        "items_planned": 1,
        "discarded": [],
        "revised": 0,
        "max_session_reuse": 1,
        "reuse_limit": 4,
        "audio_hours": 0.0,
        "user_turns": 1,
        "check_failures": {},
        "items_per_cell": {},
    }


def test_gate_is_off_without_a_recogniser(tmp_path):
    from memgym.backends.asr import ASRConfig

    assert qc.intelligibility_gate(tmp_path, ASRConfig(kind="none")) is None
