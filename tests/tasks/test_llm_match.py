"""LLM-match: strict rating parsing, the 1-5 -> 0-100 map, per-item caching and resume."""

from __future__ import annotations

import pytest
from scripted_reasoner import ScriptedReasoner as ScriptedJudge

from memgym.backends.errors import ReasonerError
from memgym.core.episode import TaskItem
from memgym.tasks.llm_match import (
    JUDGE_PROMPT,
    JudgeCache,
    JudgeOutputError,
    LLMMatchScorer,
    parse_rating,
    rating_to_score,
)

ITEM = TaskItem(item_id="q0", task="qa", prompt="Who owns the red mug?", answer="Ben")


@pytest.mark.parametrize(
    ("reply", "rating"),
    [
        ("5", 5),
        (" 4.\n", 4),
        ("3/5", 3),
        ("Rating: 2", 2),
        ("1", 1),
        ("**4**", 4),
        ("4 - close", 4),
        ("Rating: **3**/5", 3),
        ("2 (partly right)", 2),
        ("5 \u2014 same meaning\nmore text", 5),
    ],
)
def test_strict_rating_parsing(reply, rating):
    assert parse_rating(reply) == rating


@pytest.mark.parametrize(
    "reply", ["", "6", "0", "4 because it matches", "between 3 and 4", "four", "3 4", "**4", "4-5", "4.5", "3-4"]
)
def test_unparseable_ratings_raise(reply):
    with pytest.raises(JudgeOutputError):
        parse_rating(reply)


def test_linear_score_map():
    assert [rating_to_score(r) for r in range(1, 6)] == [0.0, 25.0, 50.0, 75.0, 100.0]
    with pytest.raises(ValueError):
        rating_to_score(0)


def test_prompt_carries_question_reference_and_prediction():
    judge = ScriptedJudge(["5"])
    row = LLMMatchScorer(judge, "judge-a").score(ITEM, "It is Ben's")
    assert row == {"llm_match": 100.0, "judge_rating": 5, "reward": 1.0}
    assert judge.prompts[0] == JUDGE_PROMPT.format(
        question="Who owns the red mug?", reference="Ben", prediction="It is Ben's"
    )


def test_cache_resumes_without_asking_the_judge_again(tmp_path):
    cache_path = tmp_path / "judge.jsonl"
    judge = ScriptedJudge(["4", "2"])
    scorer = LLMMatchScorer(judge, "judge-a", JudgeCache(cache_path))
    assert scorer.score(ITEM, "Ben")["llm_match"] == 75.0
    assert scorer.score(ITEM, "Amelia")["llm_match"] == 25.0
    # A new process: the cache answers, the judge is never called.
    silent = ScriptedJudge([])
    resumed = LLMMatchScorer(silent, "judge-a", JudgeCache(cache_path))
    assert resumed.score(ITEM, "Ben")["llm_match"] == 75.0
    assert resumed.score(ITEM, "Amelia")["judge_rating"] == 2
    assert silent.prompts == []
    # Another judge identity does not reuse those ratings.
    other = ScriptedJudge(["5"])
    assert LLMMatchScorer(other, "judge-b", JudgeCache(cache_path)).score(ITEM, "Ben")["llm_match"] == 100.0


def test_unparseable_reply_is_an_item_error_and_is_not_cached(tmp_path):
    cache = JudgeCache(tmp_path / "judge.jsonl")
    scorer = LLMMatchScorer(ScriptedJudge(["I think 4", "4"]), "judge-a", cache)
    with pytest.raises(ReasonerError, match="not a rating"):
        scorer.score(ITEM, "Ben")
    assert len(cache) == 0
    assert scorer.score(ITEM, "Ben")["judge_rating"] == 4


def test_interrupted_last_cache_line_is_ignored(tmp_path):
    path = tmp_path / "judge.jsonl"
    scorer = LLMMatchScorer(ScriptedJudge(["3"]), "j", JudgeCache(path))
    scorer.score(ITEM, "Ben")
    with path.open("a") as handle:
        handle.write('{"key": "abc", "rat')
    assert len(JudgeCache(path)) == 1
    LLMMatchScorer(ScriptedJudge(["2"]), "j", JudgeCache(path)).score(ITEM, "Amelia")
    assert len(JudgeCache(path)) == 2
