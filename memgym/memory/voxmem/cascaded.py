"""``cascaded``: ASR + acoustic tags per turn, retrieval over the tagged turns, then a text LM.

Per user turn (all cached per audio in a :class:`TurnCache`, so nested budgets reuse the work):
its words (the injected ASR), its signal measurements
(:func:`~memgym.datasets.speech.turn_features.measure_turn`) and its background sound (a
:class:`~memgym.memory.voxmem.sound_tagger.SoundTagger`). Per history: speaker labels from the
voices clustered together with the question's (so the asker's label is known) and cue tags
against each speaker's typical turn (:mod:`~memgym.memory.voxmem.acoustic_tags`). Each user turn
becomes one line::

    User: [voice B, the person asking now | hesitant | background: rain] I think Monday works.

and the ``top_sessions`` sessions that best match the question (:func:`rank_sessions`, history
order kept) go to the text LM with a note saying what the tags mean.
"""

from __future__ import annotations

from typing import Any

from memgym.core.chat import Message
from memgym.core.registry import register_memory
from memgym.datasets.speech.turn_features import measure_turn
from memgym.memory.voxmem.acoustic_tags import cue_tags, speaker_labels
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.cache import Transcriber, TurnCache, identity_of
from memgym.memory.voxmem.history import VoxMemQuery, VoxMemTurn, query_of, text_history_messages
from memgym.memory.voxmem.history_lines import tag_line
from memgym.memory.voxmem.options import VoxMemOptions, voxmem_options
from memgym.memory.voxmem.retrieval import rank_sessions
from memgym.memory.voxmem.sound_tagger import SoundTagger
from memgym.memory.voxmem.transcript import transcripts

MEASURE_VERSION = "measure:v1"
TAG_NOTE = (
    "Each of the users' lines starts with tags heard in the recording: the speaker's voice (one letter per "
    "person; 'the person asking now' marks the voice of whoever asks the question, so 'you' refers to them), "
    "how they sounded, and the background sound."
)


@register_memory("cascaded")
class CascadedMemory(VoxMemMemory):
    """The offline cascade of the module docstring.

    Args:
        asr: an object with ``transcribe(audio, sample_rate) -> str``.
        sound_tagger: names background sounds (None: no sound tags).
        cache: shared per-turn cache (a new in-memory one when None).
        top_sessions: sessions handed to the LM (0 = all).
    """

    def __init__(
        self,
        asr: Transcriber,
        sound_tagger: SoundTagger | None = None,
        cache: TurnCache | None = None,
        top_sessions: int = 6,
    ) -> None:
        super().__init__()
        self.asr = asr
        self.sound_tagger = sound_tagger
        self.cache = cache if cache is not None else TurnCache()
        self.top_sessions = top_sessions

    @classmethod
    def from_options(cls, options: VoxMemOptions) -> CascadedMemory:
        """Takes the recogniser, sound tagger, turn cache and ``top_sessions`` of ``options``."""
        options = voxmem_options(options, cls)
        return cls(options.asr(), options.sound_tagger(), options.cache, options.top_sessions)

    def _measure(self, turn_key: str, audio) -> dict:
        return self.cache.get_or_compute(MEASURE_VERSION, turn_key, lambda: measure_turn(audio))

    def form(self, turns: list[VoxMemTurn]) -> None:
        """A finished session's per-turn perception: words (one recogniser batch), measurements
        and background sound, all into the turn cache."""
        users = [t for t in turns if t.role == "user"]
        transcripts(users, self.asr, self.cache)
        for turn in users:
            self._measure(turn.key, turn.audio)
            self._sound(turn)

    def _sound(self, turn: VoxMemTurn) -> str:
        if self.sound_tagger is None:
            return ""
        tagger = self.sound_tagger
        return self.cache.get_or_compute(identity_of(tagger), turn.key, lambda: tagger.tag_audio(turn.audio))

    def tagged_lines(self, query: VoxMemQuery) -> dict[str, str]:
        """``turn key -> tagged line`` of every user turn."""
        users: list[VoxMemTurn] = [t for t in self.turns if t.role == "user"]
        words = transcripts(users, self.asr, self.cache)
        measures = [dict(self._measure(t.key, t.audio)) for t in users]
        for turn, measure in zip(users, measures):
            measure["rate"] = len(words[turn.key].split()) / max(float(measure["active_s"]), 0.1)
        voices = [m["voice"] for m in measures]
        if query.audio.size:
            voices.append(measure_turn(query.audio)["voice"])
        labels = speaker_labels(voices) if voices else []
        asker = labels[-1] if query.audio.size and labels else ""
        cues = cue_tags(measures, labels[: len(users)], [words[t.key] for t in users])
        sounds = [self._sound(t) for t in users]
        return {
            t.key: tag_line(words[t.key], speaker, asker, cue, sound)
            for t, speaker, cue, sound in zip(users, labels, cues, sounds)
        }

    def retrieve(self, query: Any) -> list[Message]:
        self.finish_formation()
        spoken = query_of(query)
        lines = self.tagged_lines(spoken)
        sessions = self.sessions()
        texts = [" ".join(lines.get(t.key, t.text) for t in session) for session in sessions]
        keep = rank_sessions(spoken.text, texts, self.top_sessions)
        return text_history_messages(self.hand([sessions[i] for i in keep]), lines, spoken, TAG_NOTE)
