"""A deterministic reasoner that answers from symbolic memory content (``backend=structured``).

Its benchmark parts live beside their benchmarks: DialogMem's reading in
:mod:`memgym.pipelines.dialogmem.reasoner`, VoxMem's in :mod:`memgym.pipelines.voxmem.reader`;
the fact-line format the memories write is :mod:`memgym.backends.structured`.

Memory content reaches it as *fact lines* inside any text part of the messages::

    FACT {"object": "obj_3", "category": "mug", "type": "social", "key": "owner", "value": "Amelia", "time": 12}

(:func:`~memgym.backends.structured.format_fact` writes them,
:func:`~memgym.backends.structured.parse_facts` reads them). The last line of the last user
message is the request, led by its task as the env states it (``Question: ...`` or ``Instruction:
...``, :mod:`memgym.core.task_line`); the reasoner never guesses the task from the wording (a line
without a label is a question). The reasoner

1. keeps, per object and key, the fact with the latest ``time`` (updates and corrections win);
   dialogue linked to an entry (``said_<k>`` facts) and an appended transcript (``"Speaker:
   utterance"`` lines) are read into facts by :mod:`~memgym.pipelines.dialogmem.reasoner.dialogue_reading` (alias,
   owner, usage, significance; and what an object looks like or how it was come across: colour,
   material, size, room, on, near, times seen, order, segment, :mod:`~memgym.pipelines.dialogmem.reasoner.observation_reading`;
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
4. for a question, reads the asked key (:func:`~memgym.pipelines.dialogmem.reasoner.target_resolution.question_key`:
   asking words, first among the keys the candidates hold and the request does not name; else the
   key nearest in meaning, :mod:`~memgym.pipelines.dialogmem.reasoner.key_similarity`, when the sentence encoder is
   installed) and replies with the target's value of it; when the entries do not hold it (or
   tie), with the latest value the transcript gives for the category and key; for an instruction
   replies ``OBJECT <object id>``.

With facts from an oracle it is an upper bound for the symbolic part of a benchmark; with neither
fact lines nor transcript lines it falls back to extractive reading of the plain text evidence
(the sentence sharing most content words with the question, minus the question's own words), a
transparent lexical baseline. When facts and transcript leave a *question* unanswered
(``unknown``), the same extractive reading runs over the user messages' other lines.

A written spoken history (session blocks of possibly tagged user lines, then ``Question: ...``,
:mod:`~memgym.memory.voxmem.history_lines`) whose question has one of VoxMem's forms is answered by
:mod:`~memgym.pipelines.voxmem.reader` (the heard facts of each session, then the question's
operation); other questions about it fall through to extractive reading.

Two more prompt forms:

* a ``CATEGORIES ["mug", "table"]`` line (:data:`~memgym.backends.structured.CATEGORIES_PREFIX`) in the last user message asks
  which of the listed categories the request (the last line) refers to; the reply lists those
  named in the request, comma-separated, in the order named (``unknown`` when none is), the
  category-prediction step of 3D-Mem's retrieval;
* a ``LINK [{"id": "obj_3", "label": "mug"}, ...]`` line (:data:`~memgym.backends.structured.LINK_PREFIX`) asks which listed
  object the remark (the last line) is about, the VLM linker's prompt: the reply is the id of the
  first listed object whose label is the category the remark names first (``unknown`` when it
  names none of the labels);
* memory entries of the visual memories arrive as fact lines whose ``object`` is the entry id
  (the reply ``OBJECT <entry id>`` selects an entry), with a ``detected`` fact naming its label;
  dialogue linked to an entry arrives as ``said_<k>`` facts (:data:`~memgym.backends.structured.SAID_KEY`): read into that
  entry's facts (step 1), and their words break ties in step 3: among objects explaining
  equally many mentions, the one whose linked lines share most of the question's content words
  (other than its category) is the target.

It never consults ground truth that is not in the messages.
"""

from __future__ import annotations

from collections.abc import Sequence

from memgym.backends.config import ReasonerConfig
from memgym.backends.request_reading import STOP_WORDS
from memgym.backends.structured import CATEGORIES_PREFIX, FACT_PREFIX, LINK_PREFIX, Fact, parse_facts, words
from memgym.core.chat import Message
from memgym.core.protocols import Reasoner
from memgym.core.registry import register_reasoner
from memgym.core.task_line import split_request_line
from memgym.memory.voxmem.history_lines import parse_history
from memgym.pipelines.dialogmem.reasoner import answer as dialogmem
from memgym.pipelines.dialogmem.reasoner.dialogue_reading import transcript
from memgym.pipelines.dialogmem.reasoner.target_resolution import UNKNOWN
from memgym.pipelines.voxmem.reader import answer, parse_question


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
            return dialogmem.select_categories(question, options[-1][len(CATEGORIES_PREFIX) :], said)
        links = [line for line in users[-1].text_only().splitlines() if line.startswith(LINK_PREFIX)]
        if links:
            return dialogmem.select_linked_object(question, links[-1][len(LINK_PREFIX) :])
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
        """Reply to ``question`` from ``facts`` and the transcript ``heard``
        (:func:`memgym.pipelines.dialogmem.reasoner.answer.answer_from_facts`)."""
        return dialogmem.answer_from_facts(question, facts, heard, task=task)


def voxmem_history_answer(text: str) -> str | None:
    """The reply of :mod:`~memgym.pipelines.voxmem.reader` when ``text`` is a written spoken history
    ending in a question of a known form; None otherwise."""
    parsed = parse_history(text)
    question = parse_question(parsed[1]) if parsed is not None else None
    return answer(question, parsed[0]) if question is not None else None


def extractive_answer(question: str, context: str) -> str:
    """The context line sharing most content words with ``question``, minus those words.

    Ties go to the later line (later statements supersede earlier ones). Returns
    :data:`UNKNOWN` when no line shares a content word.
    """
    q_content = {w for w in words(question) if w not in STOP_WORDS}
    best, best_overlap = "", 0
    for line in context.splitlines():
        overlap = len(q_content & set(words(line)))
        if overlap and overlap >= best_overlap:
            best, best_overlap = line, overlap
    if not best:
        return UNKNOWN
    rest = [w for w in words(best) if w not in q_content and w not in STOP_WORDS]
    return " ".join(rest) if rest else UNKNOWN
