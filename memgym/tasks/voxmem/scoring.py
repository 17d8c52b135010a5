"""Scoring VoxMem replies: answer kind per item, rule-based or judged correctness, refusals.

Every item has an :class:`AnswerSpec`: how its (source) question is answered -- the answer kind of
:mod:`memgym.tasks.voxmem.answers` -- the gold answer and the answer space the reply is read
against (the topic family's values, the cue words, the dataset's sound classes, the two options of
a comparison). :func:`answer_spec` derives it from the item and, when available, the plan's
structured query (``plans.jsonl``); without the query the kind comes from the item's cell and
subtype and the answer space is the gold answer alone.

:class:`VoxMemScorer` returns, per reply::

    correct        1.0 / 0.0   AR items: 1 only when the reply refuses; others: the asserted
                               answer equals the gold one and the reply does not refuse
    refused        bool        the reply refuses (a hedge followed by an answer is an answer)
    false_refusal  bool        refused an answerable item
    reply_class    answer | refusal | empty
    asserted       the answer read from the reply (None when none)
    answer_kind    the item's answer kind
    reward         = correct

With a judge (:class:`VoxMemJudge`: any Reasoner, temperature 0, an explicit model id, cached per
(judge id, question, reference, kind, reply)) the verdict ``CORRECT`` / ``WRONG`` / ``REFUSAL``
replaces the rule-based ``correct`` and ``refused``; the rule-based ones stay in the row as
``rule_correct`` and ``rule_refused``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from memgym.core.chat import Message
from memgym.core.episode import TaskItem
from memgym.core.errors import RecordError
from memgym.core.protocols import Reasoner, Scorer
from memgym.core.records import read_jsonl
from memgym.core.registry import register_scorer
from memgym.core.scoring import ScorerContext
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.datasets.voxmem.oracle import sound_label
from memgym.datasets.voxmem.records import Plan, Query
from memgym.datasets.voxmem.taxonomy import REFUSAL
from memgym.datasets.voxmem.topics import FAMILY_BY_NAME
from memgym.tasks.llm_match import JudgeCache, JudgeOutputError
from memgym.tasks.voxmem.answers import SEQUENCE_SEPARATOR, AnswerKind, classify_reply, same_answer

NO_SOUND = "no background sound"
"""The oracle's state of a session without background sound."""


@dataclasses.dataclass(frozen=True)
class AnswerSpec:
    """How one item's reply is read.

    Attributes:
        kind: answer kind of the (source) question.
        gold: the gold answer (``"unanswerable"`` for AR items).
        labels: the answer space: gold plus distractors, for span / choice / sequence kinds.
    """

    kind: AnswerKind
    gold: str
    labels: tuple[str, ...] = ()

    @property
    def refusal(self) -> bool:
        """The item is answered by refusing."""
        return self.gold == REFUSAL


def _kind(evidence: str, operation: str, subtype: str) -> AnswerKind:
    if subtype == "counting":
        return "number"
    if subtype == "matching" or (evidence == "speaker" and subtype == "context_to_cue"):
        return "yes_no"
    if subtype == "comparing":
        return "choice"
    if subtype == "full_sequence":
        return "speaker_sequence" if evidence == "speaker" else "sequence"
    if evidence == "speaker" and operation == "TET":
        return "speaker"
    return "span"


def _labels(query: Query, kind: AnswerKind, sound_classes: Sequence[str]) -> tuple[str, ...]:
    if kind in ("number", "yes_no", "speaker", "speaker_sequence"):
        return ()
    if kind == "choice":
        return tuple(sound_label(o) for o in query.options) if query.options else tuple(query.subjects)
    states_are_values = query.evidence in ("semantics", "speaker") or query.subtype == "cue_to_fact"
    if states_are_values:
        family = FAMILY_BY_NAME.get(query.family)
        return tuple(family.values) if family else ()
    if query.evidence == "paralinguistic":
        return tuple(CUE_WORDS.values())
    return (*(sound_label(s) for s in sound_classes), NO_SOUND)


def answer_spec(item: TaskItem, query: Query | None = None, sound_classes: Sequence[str] = ()) -> AnswerSpec:
    """The :class:`AnswerSpec` of ``item``.

    Args:
        item: a VoxMem task item (annotations ``evidence``, ``operation``, ``subtype``).
        query: the plan's structured query (for AR items: the source question's); gives the kind
            of AR items and the answer space.
        sound_classes: the dataset's sound classes (answer space of sound questions).
    Raises:
        RecordError: the item lacks its cell annotations.
    """
    notes = item.annotations
    gold = str(item.answer)
    if query is not None:
        kind = _kind(query.evidence, query.operation, query.subtype)
        labels = _labels(query, kind, sound_classes)
    else:
        try:
            evidence, operation, subtype = notes["evidence"], notes["operation"], notes["subtype"]
        except KeyError as exc:
            raise RecordError(f"VoxMem item {item.item_id} has no '{exc.args[0]}' annotation") from None
        kind = "span" if operation == "AR" else _kind(evidence, operation, subtype)
        labels = ()
    if gold != REFUSAL and kind in ("span", "choice", "sequence"):
        parts = gold.split(SEQUENCE_SEPARATOR) if kind == "sequence" else [gold]
        labels = tuple(dict.fromkeys([*parts, *labels]))
    return AnswerSpec(kind, gold, labels)


def rule_verdict(spec: AnswerSpec, reply: str, question: str = "") -> dict[str, Any]:
    """The rule-based verdict on ``reply`` to ``question`` (the module docstring's keys but ``reward``)."""
    reply_class, asserted = classify_reply(reply, spec.kind, spec.labels, question)
    refused = reply_class == "refusal"
    correct = refused if spec.refusal else (not refused and same_answer(asserted, spec.gold, spec.kind))
    return {
        "correct": float(correct),
        "refused": refused,
        "false_refusal": refused and not spec.refusal,
        "reply_class": reply_class,
        "asserted": asserted,
        "answer_kind": spec.kind,
    }


# ----- judge ---------------------------------------------------------------------------------------------
JUDGE_PROMPT = """You check answers to questions about earlier spoken conversations between an \
assistant and its users. Compare the candidate reply with the reference answer.

Question: {question}
Reference answer: {reference}
Answer type: {kind}
Candidate reply: {reply}

Rules:
- If the reference answer is "unanswerable", the history does not support an answer: the reply is \
CORRECT only if it declines to answer (says it cannot tell, was not mentioned, does not know). A \
reply that commits to an answer is WRONG.
- A reply that only declines, without committing to an answer, is REFUSAL (unless the reference is \
"unanswerable").
- A reply that hedges and then gives an answer ("I'm not sure, but I think ...") gives that answer.
- Otherwise the reply is CORRECT when the answer it gives means the same as the reference (numbers \
and number words are equal, "you" is the asking user, "someone else" is any other user; for a \
sequence, every element in the same order), and WRONG otherwise.

Reply with exactly one word: CORRECT, WRONG or REFUSAL."""
"""The VoxMem judge instruction (our own wording)."""

VERDICTS = ("WRONG", "CORRECT", "REFUSAL")
"""Judge verdicts; their index is the code stored in the judge cache."""
_VERDICT = re.compile(r"^\s*\**\s*(CORRECT|WRONG|REFUSAL)\s*\**\s*\.?\s*$", re.IGNORECASE)


def parse_verdict(reply: str) -> str:
    """``"CORRECT"``, ``"WRONG"`` or ``"REFUSAL"`` from a judge reply; raises :class:`JudgeOutputError`."""
    match = _VERDICT.match(reply)
    if match is None:
        raise JudgeOutputError(f"judge reply is not CORRECT, WRONG or REFUSAL: {reply[:80]!r}")
    return match.group(1).upper()


class VoxMemJudge:
    """A pinned judge model deciding CORRECT / WRONG / REFUSAL per reply.

    Args:
        judge: the judge model (called at temperature 0 by every memgym backend).
        judge_id: names the model, seed and temperature (part of the cache key), e.g.
            ``ReasonerConfig.identity()``; must not be empty.
        cache: crash-safe verdict cache (None: memory only).
        max_new_tokens: reply budget.
    """

    def __init__(self, judge: Reasoner, judge_id: str, cache: JudgeCache | None = None, max_new_tokens: int = 8):
        if not judge_id:
            raise ValueError("VoxMemJudge needs an explicit judge_id (model, seed, temperature)")
        self.judge = judge
        self.judge_id = judge_id
        self.cache = cache
        self.max_new_tokens = max_new_tokens
        self._memo: dict[str, int] = {}

    def verdict(self, question: str, spec: AnswerSpec, reply: str) -> str:
        """The judge's verdict, from the cache when present."""
        blob = json.dumps([self.judge_id, question, spec.gold, spec.kind, reply])
        key = hashlib.sha256(blob.encode()).hexdigest()
        code = self.cache.get(key) if self.cache is not None else self._memo.get(key)
        if code is None:
            prompt = JUDGE_PROMPT.format(
                question=question, reference=spec.gold, kind=spec.kind.replace("_", " "), reply=reply or "(no reply)"
            )
            text = self.judge.generate([Message.text("user", prompt)], max_new_tokens=self.max_new_tokens)
            code = VERDICTS.index(parse_verdict(text))
            if self.cache is not None:
                self.cache.put(key, code, text)
            self._memo[key] = code
        return VERDICTS[code]


@register_scorer("voxmem")
class VoxMemScorer(Scorer):
    """VoxMem correctness and refusal (module docstring).

    Args:
        queries: item id -> the plan's structured query (:func:`load_answer_context`).
        sound_classes: the dataset's sound classes.
        judge: optional :class:`VoxMemJudge` that decides correctness and refusal.
    """

    name = "voxmem"
    tasks = frozenset({"spoken_qa"})

    @classmethod
    def from_context(cls, context: ScorerContext) -> VoxMemScorer:
        """Reading replies against the plans and sound classes of ``context.dataset_dir``
        (:func:`load_answer_context`, cached per folder), judged by ``context.judge`` when set."""
        judge = context.judge
        if judge is not None:
            judge = VoxMemJudge(judge.reasoner, judge.identity, judge.cache, judge.max_new_tokens)
        return cls(*_answer_context(context.dataset_dir), judge=judge)

    def __init__(
        self,
        queries: Mapping[str, Query] | None = None,
        sound_classes: Sequence[str] = (),
        judge: VoxMemJudge | None = None,
    ) -> None:
        self.queries = dict(queries or {})
        self.sound_classes = tuple(sound_classes)
        self.judge = judge

    def spec(self, item: TaskItem) -> AnswerSpec:
        """The item's :class:`AnswerSpec`."""
        return answer_spec(item, self.queries.get(item.item_id), self.sound_classes)

    def score(self, item: TaskItem, prediction: Any) -> dict[str, Any]:
        """The verdict on ``prediction`` (text); raises ReasonerError when the judge fails."""
        reply = "" if prediction is None else str(prediction)
        spec = self.spec(item)
        row = rule_verdict(spec, reply, item.prompt)
        if self.judge is not None:
            verdict = self.judge.verdict(item.prompt, spec, reply)
            row["rule_correct"], row["rule_refused"] = row["correct"], row["refused"]
            row["judge_verdict"] = verdict
            refused = verdict == "REFUSAL" or (spec.refusal and verdict == "CORRECT")
            row["correct"] = float(verdict == "CORRECT")
            row["refused"] = refused
            row["false_refusal"] = refused and not spec.refusal
        row["reward"] = row["correct"]
        return row


@functools.lru_cache(maxsize=8)
def _answer_context(dataset_dir: str) -> tuple[dict[str, Query], tuple[str, ...]]:
    """:func:`load_answer_context` of ``dataset_dir`` (empty for ''), cached per folder: an eval
    builds an env, so a scorer, per runner."""
    return load_answer_context(dataset_dir) if dataset_dir else ({}, ())


def load_answer_context(dataset_dir: str | Path) -> tuple[dict[str, Query], tuple[str, ...]]:
    """``(item id -> query, sound classes)`` of a dataset folder (``plans.jsonl``, ``config.yaml``).

    Missing files give an empty mapping / no sound classes (the scorer then reads replies against
    the gold answer alone).
    """
    import yaml

    folder = Path(dataset_dir)
    queries: dict[str, Query] = {}
    plans = folder / "plans.jsonl"
    if plans.is_file():
        for plan in read_jsonl(plans):
            if isinstance(plan, Plan):
                queries[plan.plan_id] = plan.query
    sounds: tuple[str, ...] = ()
    config = folder / "config.yaml"
    if config.is_file():
        data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
        raw = data.get("sound_classes", ()) if isinstance(data, dict) else ()
        if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
            raise RecordError(f"{config}: sound_classes must be a list of class names")
        sounds = tuple(raw)
    return queries, sounds
