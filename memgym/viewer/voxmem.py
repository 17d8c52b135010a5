"""VoxMem pages: the history as a timeline of sessions, the user turns' audio, the question and replies.

Each episode (one item at one budget) shows its sessions in order, sized by their tokens and
coloured by role (evidence, haystack, filler); a session's turns with their transcripts, cues and
background sounds, and an audio player per user turn; the question (text and spoken), the gold
answer and, from a run folder, every (model, memory) reply with its score and status. Audio is
the dataset's FLAC files as they are (media ``<key>/audio_<n>.flac``; ``n = 0`` is the question,
then the user turns in history order). A file heard in several episodes (the shared sessions of
an item's budgets, a filler session) is one media file, named after the first episode that plays
it, so a page and its export hold each recording once.
"""

from __future__ import annotations

import collections
import re
from pathlib import Path
from typing import Any

from memgym.core.episode import Dataset
from memgym.core.errors import RecordError
from memgym.datasets.voxmem.records import VoxMemEpisode
from memgym.viewer.detect import Target
from memgym.viewer.site import Site, finite, resolve_dataset, run_config, run_rows, split_media_name

AUDIO_FILE = re.compile(r"audio_(\d+)\.flac")
RESULT_FIELDS = ("model", "memory", "status", "reply", "correct", "refused", "reply_class", "asserted", "error")


class VoxMemSite(Site):
    """A VoxMem dataset folder, or an eval run with the dataset it was evaluated on.

    Args:
        target: what :func:`~memgym.viewer.detect.detect` found.
        dataset: the run's dataset folder when its recorded path does not resolve (``--dataset``).
    """

    def __init__(self, target: Target, dataset: Path | None = None) -> None:
        super().__init__(target)
        self.results: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)  # episode id -> rows
        folder = target.path
        if target.kind == "run":
            from memgym.pipelines.voxmem.evaluation import VoxMemEvalConfig

            folder = resolve_dataset(run_config(target.path, VoxMemEvalConfig).dataset, target.path, dataset)
            for row in run_rows(target.path):
                self.results[row.get("episode_id", "")].append(row)
        if folder.is_file():  # --dataset may name the manifest
            folder = folder.parent
        loaded = Dataset.load(folder / "manifest.jsonl")
        wrong = [e.episode_id for e in loaded if not isinstance(e, VoxMemEpisode)]
        if wrong:
            raise RecordError(f"{folder / 'manifest.jsonl'}: episode {wrong[0]} is not a VoxMem episode")
        self.folder = folder
        self._episodes: list[VoxMemEpisode] = list(loaded)
        self._owner: dict[str, str] = {}  # dataset audio path -> its media name (the first episode playing it)
        for key in range(len(self._episodes)):
            for n, path in enumerate(self.audio_paths(key)):
                if path:
                    self._owner.setdefault(path, f"{key}/audio_{n}.flac")

    def episodes(self) -> list[dict[str, Any]]:
        return [
            {
                "id": e.episode_id,
                "label": f"{e.annotations.get('cell', '')} @ {e.budget // 1024}K: {e.items[0].prompt if e.items else ''}",
            }
            for e in self._episodes
        ]

    def audio_paths(self, key: int) -> list[str]:
        """Dataset-relative audio of episode ``key``: the question, then every user turn in order."""
        episode = self._episodes[self.check_key(key)]
        turns = [t.audio for s in episode.sessions for t in s.turns if t.role == "user" and t.audio]
        return [episode.question_audio, *turns] if episode.question_audio else ["", *turns]

    def episode(self, key: int) -> dict[str, Any]:
        episode = self._episodes[self.check_key(key)]
        item = episode.items[0] if episode.items else None
        audio = self.audio_paths(key)
        count = 0
        sessions = []
        for session in episode.sessions:
            turns = []
            for turn in session.turns:
                entry = {"role": turn.role, "text": turn.text, "user": turn.user, "cue": turn.cue, "sound": turn.sound}
                if turn.role == "user" and turn.audio:
                    count += 1
                    entry |= {"audio": f"media/{self._owner[audio[count]]}", "duration_s": turn.duration_s}
                turns.append(entry)
            sessions.append(
                {
                    "session_id": session.session_id,
                    "role": session.role,
                    "timestamp": session.timestamp,
                    "tokens": session.tokens,
                    "source": session.source,
                    "fact": session.fact.to_dict() if session.fact else None,
                    "turns": turns,
                }
            )
        rows = sorted(self.results.get(episode.episode_id, []), key=lambda r: (r.get("model", ""), r.get("memory", "")))
        return finite(
            {
                "id": episode.episode_id,
                "budget": episode.budget,
                "tokens": episode.tokens,
                "annotations": episode.annotations,
                "question": item.prompt if item else "",
                "answer": item.answer if item else None,
                "item_annotations": item.annotations if item else {},
                "question_audio": f"media/{self._owner[audio[0]]}" if episode.question_audio else None,
                "sessions": sessions,
                "results": [{k: r.get(k) for k in RESULT_FIELDS} for r in rows],
            }
        )

    def media_names(self, key: int) -> list[str]:
        """The audio this episode is the first to play (the others it shares with earlier episodes)."""
        names = [f"{key}/audio_{n}.flac" for n, path in enumerate(self.audio_paths(key)) if path]
        return [name for name, path in zip(names, (p for p in self.audio_paths(key) if p)) if self._owner[path] == name]

    def media(self, name: str) -> bytes:
        key, file = split_media_name(name)
        match = AUDIO_FILE.fullmatch(file)
        paths = self.audio_paths(key)
        if match is None or int(match[1]) >= len(paths) or not paths[int(match[1])]:
            raise KeyError(name)
        return (self.folder / paths[int(match[1])]).read_bytes()
