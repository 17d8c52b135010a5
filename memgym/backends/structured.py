"""A deterministic reasoner that answers from symbolic memory content.

Memory content reaches it as *fact lines* inside any text part of the messages::

    FACT {"object": "obj_3", "category": "mug", "type": "social", "key": "owner", "value": "Amelia", "time": 12}

(:func:`format_fact` writes them, :func:`parse_facts` reads them). The last line of the last user
message is the request, led by its task as the env states it (``Question: ...`` or ``Instruction:
...``, :mod:`memgym.core.task_line`); the reasoner never guesses the task from the wording (a line
without a label is a question). The reasoner

1. keeps, per object and key, the fact with the latest ``time`` (updates and corrections win);
   dialogue linked to an entry (``said_<k>`` facts) and an appended transcript (``"Speaker:
   utterance"`` lines) are read into facts by :mod:`~memgym.backends.dialogue_reading` (alias,
   owner, usage, significance; and what an object looks like or how it was come across: colour,
   material, size, room, on, near, times seen, order, segment, :mod:`~memgym.backends.observation_reading`;
   the latest statement of a chain wins): linked lines become facts of their entry (keys it lacks),
   transcript lines facts about a *category*;
2. reads the request with :mod:`~memgym.backends.request_reading` against the values the memory
   holds (no dataset templates; words in canonical forms, :mod:`~memgym.backends.word_forms`:
   ``big`` = ``large``, ``wooden`` = ``wood``, ``one time`` = ``once``, plurals): the target
   category (the first named one not governed by a relation word; when none is named, the category
   an alias, owner or usage said in the dialogue belongs to) and the value mentions with the
   relation each fills;
3. picks the target: among objects of that category, the one whose facts explain the most value
   mentions (a value counts only under a key its relation word allows); a tie answers ``unknown``
   for an instruction, and for a question unless the tied objects agree on the answer;
4. for a question, reads the asked key (:func:`~memgym.backends.target_resolution.question_key`:
   asking words, first among the keys the candidates hold and the request does not name; else the
   key nearest in meaning, :mod:`~memgym.backends.key_similarity`, when the sentence encoder is
   installed) and replies with the target's value of it; when the entries do not hold it (or
   tie), with the latest value the transcript gives for the category and key; for an instruction
   replies ``OBJECT <object id>``.

With facts from an oracle it is an upper bound for the symbolic part of a benchmark; with neither
fact lines nor transcript lines it falls back to extractive reading of the plain text evidence
(the sentence sharing most content words with the question, minus the question's own words), a
transparent lexical baseline. When facts and transcript leave a *question* unanswered
(``unknown``), the same extractive reading runs over the user messages' other lines.

A written spoken history (session blocks of possibly tagged user lines, then ``Question: ...``,
:mod:`~memgym.backends.voxmem_lines`) whose question has one of VoxMem's forms is answered by
:mod:`~memgym.backends.voxmem_reader` (the heard facts of each session, then the question's
operation); other questions about it fall through to extractive reading.

Two more prompt forms:

* a ``CATEGORIES ["mug", "table"]`` line (:data:`CATEGORIES_PREFIX`) in the last user message asks
  which of the listed categories the request (the last line) refers to; the reply lists those
  named in the request, comma-separated, in the order named (``unknown`` when none is), the
  category-prediction step of 3D-Mem's retrieval;
* a ``LINK [{"id": "obj_3", "label": "mug"}, ...]`` line (:data:`LINK_PREFIX`) asks which listed
  object the remark (the last line) is about, the VLM linker's prompt: the reply is the id of the
  first listed object whose label is the category the remark names first (``unknown`` when it
  names none of the labels);
* memory entries of the visual memories arrive as fact lines whose ``object`` is the entry id
  (the reply ``OBJECT <entry id>`` selects an entry), with a ``detected`` fact naming its label;
  dialogue linked to an entry arrives as ``said_<k>`` facts (:data:`SAID_KEY`): read into that
  entry's facts (step 1), and their words break ties in step 3: among objects explaining
  equally many mentions, the one whose linked lines share most of the question's content words
  (other than its category) is the target.

It never consults ground truth that is not in the messages.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Sequence

from memgym.backends.config import ReasonerConfig
from memgym.backends.dialogue_reading import SOCIAL_KEYS, transcript
from memgym.backends.request_reading import LEXICON, STOP_WORDS, find_spans
from memgym.backends.target_resolution import UNKNOWN, heard_facts, linked_facts, resolve
from memgym.backends.target_resolution import reply as reply_to
from memgym.backends.word_forms import canonical_phrase, canonical_request
from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner
from memgym.core.task_line import split_request_line

FACT_PREFIX = "FACT "
CATEGORIES_PREFIX = "CATEGORIES "
LINK_PREFIX = "LINK "
SAID_KEY = "said"

_WORD = re.compile(r"[a-z0-9]+")
_STOP = STOP_WORDS


@dataclasses.dataclass(frozen=True)
class Fact:
    """One symbolic memory item about one object.

    Attributes:
        object: object id.
        category: object category (``"mug"``).
        type: content type, ``"perceptual"``, ``"episodic"`` or ``"social"``.
        key: what the value is (``"owner"``, ``"color"``, ``"times_seen"``, ...).
        value: the value as words (``"Amelia"``, ``"red"``, ``"three"``).
        time: when it became true (formation step); later facts replace earlier ones.
    """

    object: str
    category: str
    type: str
    key: str
    value: str
    time: int = 0


def format_fact(fact: Fact) -> str:
    """One ``FACT {...}`` line."""
    return FACT_PREFIX + json.dumps(dataclasses.asdict(fact), sort_keys=True)


def parse_facts(texts: Iterable[str]) -> list[Fact]:
    """Every well-formed fact line in ``texts`` (other lines are ignored)."""
    facts = []
    for text in texts:
        for line in text.splitlines():
            if not line.startswith(FACT_PREFIX):
                continue
            try:
                data = json.loads(line[len(FACT_PREFIX) :])
                facts.append(Fact(**data))
            except (json.JSONDecodeError, TypeError):
                continue
    return facts


def latest_facts(facts: Iterable[Fact]) -> dict[str, dict[str, Fact]]:
    """object id -> key -> the fact with the latest time (first seen wins ties)."""
    table: dict[str, dict[str, Fact]] = {}
    for fact in facts:
        keys = table.setdefault(fact.object, {})
        if fact.key not in keys or fact.time > keys[fact.key].time:
            keys[fact.key] = fact
    return table


def words(text: str) -> list[str]:
    """Lower-case alphanumeric tokens."""
    return _WORD.findall(str(text).lower())


@register_reasoner("structured")
class StructuredReasoner(Reasoner):
    """Deterministic answers from fact lines (see the module docstring)."""

    name = "structured"
    reads_facts = True
    """Agents send it evidence's fact-line form (``structured_text``) when the evidence has one."""

    @classmethod
    def from_config(cls, config: ReasonerConfig) -> StructuredReasoner:
        """Build from a :class:`ReasonerConfig` (it has no settings)."""
        return cls()

    def generate(self, messages: Sequence[Message], *, max_new_tokens: int = 256) -> str:
        users = [m for m in messages if m.role == "user"]
        if not users:
            return UNKNOWN
        line = users[-1].text_only().splitlines()[-1] if users[-1].text_only() else ""
        task, question = split_request_line(line)
        options = [line for line in users[-1].text_only().splitlines() if line.startswith(CATEGORIES_PREFIX)]
        if options:
            said = transcript(users[-1].text_only().splitlines()[:-1])
            return select_categories(question, options[-1][len(CATEGORIES_PREFIX) :], said)
        links = [line for line in users[-1].text_only().splitlines() if line.startswith(LINK_PREFIX)]
        if links:
            return select_linked_object(question, links[-1][len(LINK_PREFIX) :])
        spoken = voxmem_history_answer(users[-1].text_only())
        if spoken is not None:
            return spoken
        texts = [m.text_only() for m in messages]
        facts = parse_facts(texts)
        context = "\n".join(texts[:-1] + [users[-1].text_only().rsplit("\n", 1)[0]])
        user_text = "\n".join([m.text_only() for m in users[:-1]] + [users[-1].text_only().rsplit("\n", 1)[0]])
        plain = "\n".join(line for line in user_text.splitlines() if not line.startswith(FACT_PREFIX))
        heard = transcript(plain.splitlines())
        if not facts and not heard:
            return extractive_answer(question, context)
        reply = self.answer_from_facts(question, facts, heard, task=task)
        if reply == UNKNOWN and task != "navigation":
            return extractive_answer(question, plain)
        return reply

    def answer_from_facts(
        self, question: str, facts: Sequence[Fact], heard: Sequence[tuple[str, str]] = (), *, task: str | None = None
    ) -> str:
        """Reply to ``question`` (an item of ``task``: ``navigation`` is an instruction, anything
        else a question) from ``facts`` and the transcript ``heard`` (``(speaker, utterance)``
        lines; see the module docstring)."""
        table = latest_facts(facts)
        labels = {o: next(iter(keys.values())).category for o, keys in table.items()}
        values = {o: {k: f.value for k, f in keys.items()} for o, keys in table.items()}
        said = {o: [(k, f.value) for k, f in keys.items() if k.startswith(SAID_KEY)] for o, keys in table.items()}
        linked = {
            o: transcript(v for _, v in sorted(ls, key=lambda kv: _said_order(kv[0]))) for o, ls in said.items() if ls
        }
        objects = linked_facts(values, labels, linked)
        resolution = resolve(question, objects, labels, heard, instruction=task == "navigation")
        return reply_to(resolution, objects)


def _said_order(key: str) -> int:
    """Position of a ``said_<k>`` key (linked lines in the order heard)."""
    suffix = key.rsplit("_", 1)[-1]
    return int(suffix) if suffix.isdigit() else -1


def voxmem_history_answer(text: str) -> str | None:
    """The reply of :mod:`~memgym.backends.voxmem_reader` when ``text`` is a written spoken history
    ending in a question of a known form; None otherwise."""
    # imported here: the DialogMem data builders import this module and need none of VoxMem's reader
    from memgym.backends.voxmem_lines import parse_history
    from memgym.backends.voxmem_reader import answer, parse_question

    parsed = parse_history(text)
    question = parse_question(parsed[1]) if parsed is not None else None
    return answer(question, parsed[0]) if question is not None else None


def select_categories(request: str, listed: str, heard: Sequence[tuple[str, str]] = ()) -> str:
    """The categories of the JSON list ``listed`` named in ``request`` (:func:`named_categories`),
    comma-separated; when it names none, those the dialogue ``heard`` says something about that the
    request mentions (:func:`categories_said_about`); :data:`UNKNOWN` when there are none."""
    try:
        categories = [str(c) for c in json.loads(listed)]
    except (json.JSONDecodeError, TypeError):
        return UNKNOWN
    named = named_categories(request, categories) or categories_said_about(request, heard, categories)
    return ", ".join(named) or UNKNOWN


def categories_said_about(request: str, heard: Sequence[tuple[str, str]], categories: Sequence[str]) -> list[str]:
    """The ``categories`` of which ``heard`` (``(speaker, utterance)`` lines) states a social value
    the request mentions (``Take me to the lighthouse.`` after ``We call the bed the lighthouse.``:
    ``bed``), in the order of the mentions, words in canonical forms as in :func:`named_categories`
    (issue 37's dialogue-only instructions)."""
    if not heard:
        return []
    statements = [
        s
        for s in heard_facts(tuple(u for _, u in heard), frozenset(categories), frozenset(s for s, _ in heard))
        if s.key in SOCIAL_KEYS
    ]
    known = frozenset(w for phrase in [*categories, *(s.value for s in statements)] for w in canonical_phrase(phrase))
    request_words = canonical_request(request, known, LEXICON)
    found = sorted(
        (spans[0][0], statement.category)
        for statement in statements
        if (spans := find_spans(request_words, canonical_phrase(statement.value)))
    )
    return list(dict.fromkeys(category for _, category in found))


def select_linked_object(remark: str, listed: str) -> str:
    """The id of the first object of the JSON list ``listed`` (``{"id", "label"}`` rows) whose label
    is the first of their labels named in ``remark``; :data:`UNKNOWN` when none is named."""
    try:
        rows = [(str(r["id"]), str(r["label"])) for r in json.loads(listed)]
    except (json.JSONDecodeError, TypeError, KeyError):
        return UNKNOWN
    named = named_categories(remark, {label for _, label in rows})
    return next((i for i, label in rows if label == named[0]), UNKNOWN) if named else UNKNOWN


def named_categories(text: str, categories: Iterable[str]) -> list[str]:
    """The ``categories`` named in ``text`` (case and punctuation ignored; words in the canonical
    forms of :mod:`~memgym.backends.word_forms`, so ``bookshelves`` and ``refrigerator`` name
    ``bookshelf`` and ``fridge``), in the order first named; a name inside a longer named one
    (``counter`` in ``kitchen counter``) does not count."""
    categories = set(categories)
    vocabulary = frozenset(w for c in categories for w in canonical_phrase(c))
    padded = " " + " ".join(canonical_request(text, vocabulary, LEXICON)) + " "
    spans = []
    for category in categories:
        phrase = f" {' '.join(canonical_phrase(category))} "
        start = padded.find(phrase) if phrase.strip() else -1
        while start >= 0:
            spans.append((start, -len(phrase), category))
            start = padded.find(phrase, start + 1)
    named: list[str] = []
    covered: list[tuple[int, int]] = []
    for start, negative, category in sorted(spans):
        end = start - negative
        if any(a <= start and end <= b for a, b in covered):
            continue
        covered.append((start, end))
        if category not in named:
            named.append(category)
    return named


def extractive_answer(question: str, context: str) -> str:
    """The context line sharing most content words with ``question``, minus those words.

    Ties go to the later line (later statements supersede earlier ones). Returns
    :data:`UNKNOWN` when no line shares a content word.
    """
    q_content = {w for w in words(question) if w not in _STOP}
    best, best_overlap = "", 0
    for line in context.splitlines():
        overlap = len(q_content & set(words(line)))
        if overlap and overlap >= best_overlap:
            best, best_overlap = line, overlap
    if not best:
        return UNKNOWN
    rest = [w for w in words(best) if w not in q_content and w not in _STOP]
    return " ".join(rest) if rest else UNKNOWN
