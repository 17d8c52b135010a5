"""LLM-match: a pinned judge model rates a predicted answer against the reference, 1 to 5.

The judge (any :class:`~memgym.core.protocols.Reasoner`: a transformers model such as
Qwen3-VL-4B-Instruct, or an OpenAI-compatible endpoint) is asked with :data:`JUDGE_PROMPT`, always
at temperature 0 with a fixed seed. Its reply must be a single digit 1-5 (``"4"``, ``"4."`` or
``"4/5"``); anything else raises :class:`JudgeOutputError` for that item, which evaluation loops
record as the item's error while the run continues. The rating maps linearly to 0-100::

    llm_match = (rating - 1) / 4 * 100        # 1 -> 0, 3 -> 50, 5 -> 100

Ratings are cached per (judge identity, question, reference, prediction) in a JSONL file, so an
interrupted evaluation re-run asks the judge only for what is missing, and the same prediction is
never judged twice. This is not token overlap: the offline fallback scorer ``token_f1`` is
reported under its own name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from memgym.backends.errors import ReasonerError
from memgym.core.chat import Message
from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError, RecordError
from memgym.core.protocols import Reasoner, Scorer
from memgym.core.registry import register_scorer
from memgym.core.scoring import ScorerContext
from memgym.core.textfiles import complete_jsonl_lines

JUDGE_PROMPT = """You grade answers given by a home robot that explored a house and talked with the \
people living there. Decide how well the candidate answer agrees in meaning with the reference \
answer for the question below. Wording, word order and extra politeness do not matter; facts do.

Ratings:
5 = means the same as the reference
4 = essentially the same; a minor detail differs or is missing
3 = partly right; part of the key content matches and part is wrong or missing
2 = mostly wrong; only a small overlap with the reference
1 = wrong, unrelated, or no real answer (for example "unknown" or a refusal)

Question: {question}
Reference answer: {reference}
Candidate answer: {prediction}

Reply with one digit from 1 to 5 and nothing else."""
"""The judge instruction (our own wording of an OpenEQA-style 1-5 rubric)."""

_RATING = re.compile(
    r"^\s*(?:rating\s*:\s*|score\s*:\s*)?(\*\*|\*|__)?([1-5])(?(1)(?:\*\*|\*|__))\s*(?:/\s*5)?\s*"
    r"(?:\.?\s*|\s[-\u2013\u2014:]\s.*|\s?\(.*\)\s*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A rating: the digit first (optionally ``Rating:``, bold ``**4**``, ``/5``, a final period), then
nothing or a spaced dash / colon and a remark (``4 - close``), or a parenthesised one."""


class JudgeOutputError(ReasonerError):
    """The judge's reply was not a single rating from 1 to 5."""


def parse_rating(reply: str) -> int:
    """The 1-5 rating in a judge reply; raises :class:`JudgeOutputError` otherwise."""
    match = _RATING.match(reply)
    if match is None:
        raise JudgeOutputError(f"judge reply is not a rating from 1 to 5: {reply[:80]!r}")
    return int(match.group(2))


def rating_to_score(rating: int) -> float:
    """Linear map of a 1-5 rating to 0-100."""
    if not 1 <= rating <= 5:
        raise ValueError(f"rating must be 1..5, got {rating}")
    return (rating - 1) / 4 * 100.0


class JudgeCache:
    """Append-only JSONL cache of judge ratings (one ``{"key", "rating", "reply"}`` per line).

    Args:
        path: the cache file (created on first write); a half-written last line is ignored.

    Safe to share between threads (an evaluation playing several episodes at once): writes hold a lock.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._ratings: dict[str, int] = {}
        self._lock = threading.Lock()
        if self.path.exists():
            for number, line in complete_jsonl_lines(self.path):  # an interrupted last write is asked again
                try:
                    row = json.loads(line)
                    self._ratings[row["key"]] = int(row["rating"])
                except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                    raise RecordError(f"{self.path}:{number}: corrupt judge cache line") from None

    def __len__(self) -> int:
        return len(self._ratings)

    def get(self, key: str) -> int | None:
        """The cached rating for ``key``."""
        return self._ratings.get(key)

    def put(self, key: str, rating: int, reply: str) -> None:
        """Store a rating durably."""
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"key": key, "rating": rating, "reply": reply}) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            self._ratings[key] = rating


@register_scorer("llm_match")
class LLMMatchScorer(Scorer):
    """LLM-match of a text prediction against ``item.answer`` (see the module docstring).

    Args:
        judge: the pinned judge model.
        judge_id: a string naming the judge (model, seed, temperature) for the cache key.
        cache: where ratings are cached; None keeps them in memory only for this run.
        max_new_tokens: reply budget of the judge.
    """

    name = "llm_match"
    tasks = frozenset({"qa"})
    judged = True

    @classmethod
    def from_context(cls, context: ScorerContext) -> LLMMatchScorer:
        """Rated by ``context.judge``.

        Raises:
            ConfigError: no judge is configured.
        """
        judge = context.judge
        if judge is None:
            raise ConfigError("the llm_match scorer needs a judge model (an evaluation's judge.* settings)")
        return cls(judge.reasoner, judge.identity, judge.cache, judge.max_new_tokens)

    def __init__(self, judge: Reasoner, judge_id: str, cache: JudgeCache | None = None, max_new_tokens: int = 8):
        self.judge = judge
        self.judge_id = judge_id
        self.cache = cache
        self.max_new_tokens = max_new_tokens
        self._memo: dict[str, int] = {}

    def cache_key(self, question: str, reference: str, prediction: str) -> str:
        """SHA-256 of the judge identity and the three texts."""
        blob = json.dumps([self.judge_id, question, reference, prediction])
        return hashlib.sha256(blob.encode()).hexdigest()

    def rate(self, question: str, reference: str, prediction: str) -> int:
        """The judge's 1-5 rating, from the cache when present."""
        key = self.cache_key(question, reference, prediction)
        cached = self.cache.get(key) if self.cache is not None else self._memo.get(key)
        if cached is not None:
            return cached
        prompt = JUDGE_PROMPT.format(question=question, reference=reference, prediction=prediction or "(no answer)")
        reply = self.judge.generate([Message.text("user", prompt)], max_new_tokens=self.max_new_tokens)
        rating = parse_rating(reply)
        if self.cache is not None:
            self.cache.put(key, rating, reply)
        self._memo[key] = rating
        return rating

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        """``{"llm_match": 0..100, "judge_rating": 1..5, "reward": 0..1}``.

        Raises:
            ReasonerError: the judge failed or replied with something that is not a rating.
        """
        rating = self.rate(item.prompt, str(item.answer), "" if prediction is None else str(prediction))
        score = rating_to_score(rating)
        return {"llm_match": score, "judge_rating": rating, "reward": score / 100.0}
