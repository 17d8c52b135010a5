"""Probes that read ground truth (named so): they separate retrieval errors from perception errors.

* ``evidence_only`` -- the audio LM hears only the item's evidence sessions (no haystacks, no
  fillers): against ``full_history`` it measures what finding the evidence costs.
* ``cascaded_evidence_only`` -- the ``cascaded`` memory (recognised words, estimated tags) over the
  evidence sessions only, for a text model: against ``cascaded`` it measures what finding the
  evidence in the long history costs, with perception kept imperfect.
* ``oracle_tags`` -- the cascade's text layout and retrieval, but with the true words and the true
  tags (speaker, cue, background sound) of every turn: against ``cascaded`` it measures what
  imperfect ASR and acoustic tagging cost.

All read ``truth`` (:attr:`~memgym.memory.voxmem.base.VoxMemMemory.reads`): they need
:meth:`bind_episode` (the VoxMem episode being played, and for ``oracle_tags`` the user who asks)
before the use phase; they read the sessions from it, in the order the env plays them.
"""

from __future__ import annotations

from typing import Any

from memgym.core.chat import Message
from memgym.core.errors import MemgymError
from memgym.core.registry import register_memory
from memgym.datasets.speech.cues import CUE_WORDS
from memgym.memory.voxmem.base import VoxMemMemory
from memgym.memory.voxmem.cascaded import TAG_NOTE, CascadedMemory
from memgym.memory.voxmem.history import VoxMemTurn, audio_history_messages, query_of, text_history_messages
from memgym.memory.voxmem.history_lines import tag_line
from memgym.memory.voxmem.options import VoxMemOptions, voxmem_options
from memgym.memory.voxmem.retrieval import rank_sessions


class _EpisodeProbe(VoxMemMemory):
    reads = VoxMemMemory.reads | {"truth"}

    def __init__(self) -> None:
        super().__init__()
        self.episode = None
        self.asker = ""

    def bind_episode(self, episode: Any, asker: str = "", **context: Any) -> None:
        """Ground truth of the episode being played (a ``VoxMemEpisode``) and the asking user id."""
        self.episode, self.asker = episode, asker

    def _bound(self) -> Any:
        if self.episode is None:
            raise MemgymError(f"{type(self).__name__} reads ground truth: call bind_episode(episode) before retrieve")
        return self.episode


def evidence_indices(episode: Any) -> set[int]:
    """History indices of the sessions of ``episode`` (a ``VoxMemEpisode``) its item names as evidence."""
    wanted = set(episode.items[0].annotations.get("evidence_sessions", ()))
    return {i for i, s in enumerate(episode.sessions) if s.session_id in wanted}


@register_memory("evidence_only")
class EvidenceOnlyMemory(_EpisodeProbe):
    """Probe: only the evidence sessions, as audio, to an audio LM (module docstring)."""

    modality = "audio"

    def retrieve(self, query: Any) -> list[Message]:
        indices = evidence_indices(self._bound())
        kept = [session for session in self.sessions() if session[0].session in indices]
        return audio_history_messages(self.hand(kept), query_of(query))


@register_memory("cascaded_evidence_only")
class CascadedEvidenceOnlyMemory(CascadedMemory):
    """Probe: ``cascaded`` as if the history held only the item's evidence sessions (module docstring):
    the other sessions are neither analysed nor kept, so speaker labels and cue tags are fitted to
    the evidence sessions alone. Needs :meth:`bind_episode` before formation. Args: as ``cascaded``."""

    reads = CascadedMemory.reads | {"truth"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.evidence: set[int] | None = None

    def bind_episode(self, episode: Any, **context: Any) -> None:
        """The episode about to be played (a ``VoxMemEpisode``): its evidence sessions are kept."""
        self.evidence = evidence_indices(episode)

    def observe(self, observation: Any) -> None:
        if self.evidence is None:
            raise MemgymError("cascaded_evidence_only reads ground truth: call bind_episode(episode) before formation")
        super().observe(observation)

    def form(self, turns: list[VoxMemTurn]) -> None:
        """Analyse an evidence session (as ``cascaded``) and forget any other."""
        if turns[0].session in self.evidence:
            super().form(turns)
        else:
            self.turns = [t for t in self.turns if t.session != turns[0].session]


@register_memory("oracle_tags")
class OracleTagsMemory(_EpisodeProbe):
    """Probe: true words and tags in the cascade's layout and retrieval (module docstring).

    Args:
        top_sessions: sessions handed to the LM (0 = all), as for ``cascaded``.
    """

    def __init__(self, top_sessions: int = 6) -> None:
        super().__init__()
        self.top_sessions = top_sessions

    @classmethod
    def from_options(cls, options: VoxMemOptions) -> OracleTagsMemory:
        """Takes ``options.top_sessions``."""
        return cls(voxmem_options(options, cls).top_sessions)

    def retrieve(self, query: Any) -> list[Message]:
        episode = self._bound()
        sessions = self.sessions()
        pairs = [
            (turn, true)
            for heard in sessions
            for turn, true in zip(
                [t for t in heard if t.role == "user"],
                [t for t in episode.sessions[heard[0].session].turns if t.role == "user"],
            )
        ]
        letters: dict[str, str] = {}
        for _, true in pairs:
            letters.setdefault(true.user, chr(ord("A") + len(letters)))
        asker = letters.get(self.asker, "")
        lines = {
            turn.key: tag_line(true.text, letters[true.user], asker, CUE_WORDS[true.cue], true.sound)
            for turn, true in pairs
        }
        texts = [" ".join(lines.get(t.key, t.text) for t in session) for session in sessions]
        spoken = query_of(query)
        keep = rank_sessions(spoken.text, texts, self.top_sessions)
        return text_history_messages(self.hand([sessions[i] for i in keep]), lines, spoken, TAG_NOTE)
