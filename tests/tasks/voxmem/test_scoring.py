"""VoxMem scoring on hand-written replies: normalisation by kind, refusal classification, judge."""

from __future__ import annotations

import pytest
from scripted_reasoner import ScriptedReasoner

from memgym.core.episode import TaskItem
from memgym.datasets.voxmem.records import Query
from memgym.tasks.llm_match import JudgeCache, JudgeOutputError
from memgym.tasks.voxmem.answers import classify_reply, normalize_span, normalize_tokens
from memgym.tasks.voxmem.scoring import (
    AnswerSpec,
    VoxMemJudge,
    VoxMemScorer,
    answer_spec,
    parse_verdict,
    rule_verdict,
)

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("two", "2"),
        ("Fifteen thousand miles", "15000 mile"),
        ("$2,000", "2000 dollar"),
        ("two thousand dollars", "2000 dollar"),
        ("twelve hundred dollars", "1200 dollar"),
        ("one hundred and twenty", "120"),
        ("forty-five minutes", "45 minute"),
        ("seven forty five", "7 45"),
        ("7:45", "7 45"),
        ("the twenty second", "22nd"),
        ("the 22nd.", "22nd"),
        ("An hour", "1 hour"),
        ("The Kitchen-Renovation", "kitchen renovation"),
        ("  the   kitchen renovation ", "kitchen renovation"),
    ],
)
def test_normalisation(text, normal):
    assert normalize_span(text) == normal


def test_second_alone_stays_a_word():
    assert normalize_tokens("the second time") == ["second", "time"]


@pytest.mark.parametrize(
    ("reply", "kind", "labels", "expected"),
    [
        ("I'm not sure, but I think it was Monday", "span", DAYS, ("answer", "Monday")),
        ("I'm not sure.", "span", DAYS, ("refusal", None)),
        ("Maybe Tuesday? I don't really remember.", "span", DAYS, ("answer", "Tuesday")),
        ("I can't tell whether it was Monday or Tuesday.", "span", DAYS, ("refusal", None)),
        ("It was Monday or Tuesday.", "span", DAYS, ("answer", None)),
        ("Tuesday, or maybe Friday.", "span", DAYS, ("answer", None)),
        ("It was Tuesday, not Friday.", "span", DAYS, ("answer", "Tuesday")),
        ("I'm not sure, but I think it was a blender", "span", DAYS, ("answer", None)),
        ("Sorry, based on our conversations I cannot determine that.", "span", DAYS, ("refusal", None)),
        ("That was never mentioned in our conversations.", "span", DAYS, ("refusal", None)),
        ("Unanswerable", "span", DAYS, ("refusal", None)),
        ("There is not enough information to say.", "span", DAYS, ("refusal", None)),
        ("", "span", DAYS, ("empty", None)),
        ("two", "number", (), ("answer", "2")),
        ("In 2 of our conversations.", "number", (), ("answer", "2")),
        ("Twice.", "number", (), ("answer", "2")),
        ("No, I do not have that information.", "yes_no", (), ("refusal", None)),
        ("No, they were different.", "yes_no", (), ("answer", "no")),
        ("They were not the same.", "yes_no", (), ("answer", "no")),
        ("Yes.", "yes_no", (), ("answer", "yes")),
        ("It was someone else, not you.", "speaker", (), ("answer", "someone else")),
        ("Another user told me.", "speaker", (), ("answer", "someone else")),
        ("It was you.", "speaker", (), ("answer", "you")),
        (
            "You, then someone else, then you again.",
            "speaker_sequence",
            (),
            ("answer", "you, then someone else, then you"),
        ),
        (
            "First you sounded hesitant, then surprised, and finally you were laughing.",
            "sequence",
            ("hesitant", "surprised", "laughing", "slow"),
            ("answer", "hesitant, then surprised, then laughing"),
        ),
        ("I could hear an alarm clock.", "span", ("clock alarm", "dog"), ("answer", "clock alarm")),
        ("You were hesitating a bit.", "span", ("hesitant", "fast"), ("answer", "hesitant")),
        (
            "Between the two, the bathroom remodel had the higher budget.",
            "choice",
            ("the kitchen renovation", "the bathroom remodel"),
            ("answer", "the bathroom remodel"),
        ),
    ],
)
def test_classify_reply(reply, kind, labels, expected):
    assert classify_reply(reply, kind, labels) == expected


def _item(answer, evidence="semantics", operation="TET", subtype="latest"):
    notes = {"evidence": evidence, "operation": operation, "subtype": subtype}
    return TaskItem(item_id="vox1", task="spoken_qa", prompt="q?", answer=answer, annotations=notes)


def test_two_and_2_are_the_same_count():
    scorer = VoxMemScorer()
    item = _item("2", operation="MSR", subtype="counting")
    assert scorer.score(item, "two")["correct"] == 1.0
    assert scorer.score(item, "I think it came up 2 times.")["correct"] == 1.0
    assert scorer.score(item, "three")["correct"] == 0.0


def test_hedged_answer_on_a_refusal_item_is_wrong_and_not_a_refusal():
    scorer = VoxMemScorer()
    ar = _item("unanswerable", operation="AR", subtype="from_IE")
    hedge = scorer.score(ar, "I'm not sure, but I think it was Monday")
    assert hedge["correct"] == 0.0 and not hedge["refused"] and hedge["reply_class"] == "answer"
    refusal = scorer.score(ar, "I can't tell from what you told me.")
    assert refusal["correct"] == 1.0 and refusal["refused"] and not refusal["false_refusal"]


def test_false_refusal_is_counted():
    row = VoxMemScorer().score(_item("Monday"), "I don't know.")
    assert row["correct"] == 0.0 and row["refused"] and row["false_refusal"]


def test_spec_from_query_has_the_answer_space():
    query = Query(
        evidence="semantics", operation="TET", subtype="latest", asker="u0", family="home_repair",
        subjects=("the lamp replacement",),
    )  # fmt: skip
    spec = answer_spec(_item("Tuesday"), query)
    assert spec.kind == "span" and set(DAYS) <= set(spec.labels)
    scorer = VoxMemScorer(queries={"vox1": query})
    assert scorer.score(_item("Tuesday"), "Tuesday, or maybe Friday")["correct"] == 0.0
    assert scorer.score(_item("Tuesday"), "tuesday")["correct"] == 1.0
    ar_query = Query(
        evidence="sound", operation="MSR", subtype="comparing", asker="u0", family="events",
        subjects=("the retirement party",), options=("rain", "dog"),
    )  # fmt: skip
    ar = answer_spec(_item("unanswerable", "sound", "AR", "from_MSR"), ar_query, ("rain", "dog"))
    assert ar == AnswerSpec("choice", "unanswerable", ("rain", "dog"))


def test_sequence_order_matters():
    spec = AnswerSpec("sequence", "hesitant, then slow, then fast", ("hesitant", "slow", "fast", "surprised"))
    assert rule_verdict(spec, "Hesitant first, then slowly, and at last fast.")["correct"] == 1.0
    assert rule_verdict(spec, "slow, hesitant, fast")["correct"] == 0.0
    assert rule_verdict(spec, "hesitant, then slow")["correct"] == 0.0


@pytest.mark.parametrize(
    ("reply", "verdict"), [("CORRECT", "CORRECT"), (" wrong.\n", "WRONG"), ("**REFUSAL**", "REFUSAL")]
)
def test_verdict_parsing(reply, verdict):
    assert parse_verdict(reply) == verdict


@pytest.mark.parametrize("reply", ["", "correct because", "CORRECT WRONG", "yes"])
def test_unparseable_verdicts_raise(reply):
    with pytest.raises(JudgeOutputError):
        parse_verdict(reply)


def test_judge_decides_and_is_cached(tmp_path):
    judge = ScriptedReasoner(["CORRECT", "REFUSAL"])
    cache = JudgeCache(tmp_path / "judge.jsonl")
    scorer = VoxMemScorer(judge=VoxMemJudge(judge, "model-x:seed=0:t=0", cache))
    row = scorer.score(_item("half an hour"), "thirty minutes")
    assert row["correct"] == 1.0 and row["rule_correct"] == 0.0 and row["judge_verdict"] == "CORRECT"
    assert "Reference answer: half an hour" in judge.prompts[0]
    refused = scorer.score(_item("Monday"), "no idea")
    assert refused["refused"] and refused["false_refusal"]
    again = VoxMemScorer(
        judge=VoxMemJudge(ScriptedReasoner([]), "model-x:seed=0:t=0", JudgeCache(tmp_path / "judge.jsonl"))
    )
    assert again.score(_item("half an hour"), "thirty minutes")["correct"] == 1.0
    with pytest.raises(ValueError, match="judge_id"):
        VoxMemJudge(judge, "")
