"""The :class:`SourceLibrary` abstraction: identities with several recordings, split and annotated.

Audio contract: :meth:`SourceLibrary.load` returns a ``(n,)`` float32 mono array at
:data:`SAMPLE_RATE` (16 kHz), unnormalised (callers normalise RMS as their benchmark requires).
Loads go through a small in-memory LRU cache; subclasses implement :meth:`_load_uncached`.
"""

from __future__ import annotations

import abc
import dataclasses
import os
from collections import OrderedDict
from pathlib import Path
from typing import Literal

import numpy as np

from memgym.core.errors import MemgymError
from memgym.core.seeding import config_hash

SAMPLE_RATE = 16_000
"""Sample rate (Hz) of every recording a library returns."""

Split = Literal["train", "eval", "calibration"]
SPLITS: tuple[str, ...] = ("train", "eval", "calibration")


@dataclasses.dataclass(frozen=True)
class RecordingInfo:
    """Metadata of one recording.

    Attributes:
        recording_id: unique in the library (file stem or synthetic id).
        identity: the sound class or instrument it belongs to.
        split: ``"train"``, ``"eval"`` or ``"calibration"``.
        family: instrument family (``"string"``) or ESC-50 major category (``"animals"``).
        source_type: ``"acoustic"`` / ``"electronic"`` / ``"synthetic"`` or ``"environmental"``.
        pitch: MIDI pitch for instrument notes, else None.
        velocity: MIDI velocity for instrument notes, else None.
        fold: ESC-50 fold (1-5) for environmental clips, else None.
        excerpt_start: ``"random"`` when excerpts may start anywhere in the recording (ESC-50
            clips), ``"zero"`` when they start at the onset (instrument notes).
    """

    recording_id: str
    identity: str
    split: str
    family: str
    source_type: str
    pitch: int | None = None
    velocity: int | None = None
    fold: int | None = None
    excerpt_start: Literal["random", "zero"] = "random"


class SourceLibrary(abc.ABC):
    """Identities, each with recordings split into train/eval(/calibration).

    Subclasses set :attr:`name`, build their list of :class:`RecordingInfo` in ``__init__``
    (passing it to ``super().__init__``) and implement :meth:`_load_uncached`.

    Args:
        infos: every recording of the library.
        cache_size: how many loaded recordings to keep in memory.
        cache_dir: optional folder where loaded recordings are also kept as ``.npy`` files
            (under a subfolder named by a hash of :meth:`fingerprint`), so synthesis or
            resampling happens once across processes and runs.
    """

    name: str = "library"

    def __init__(
        self, infos: list[RecordingInfo], *, cache_size: int = 512, cache_dir: str | Path | None = None
    ) -> None:
        if not infos:
            raise MemgymError(f"{self.name}: the library has no recordings")
        self._infos = {info.recording_id: info for info in infos}
        if len(self._infos) != len(infos):
            raise MemgymError(f"{self.name}: duplicated recording ids")
        self._by_identity: dict[tuple[str, str], list[RecordingInfo]] = {}
        for info in infos:
            self._by_identity.setdefault((info.identity, info.split), []).append(info)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self.cache_dir = Path(cache_dir) if cache_dir else None

    def __getstate__(self) -> dict:
        """Pickle without the in-memory audio cache (libraries travel to worker processes)."""
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        return state

    # ----- metadata ---------------------------------------------------------------------
    def identities(self, split: str | None = None) -> list[str]:
        """Sorted identities (having at least one recording in ``split`` when given)."""
        return sorted({ident for ident, sp in self._by_identity if split is None or sp == split})

    def splits(self) -> list[str]:
        """Splits present in the library, in canonical order."""
        present = {sp for _, sp in self._by_identity}
        return [s for s in SPLITS if s in present]

    def info(self, recording_id: str) -> RecordingInfo:
        """Metadata of one recording."""
        if recording_id not in self._infos:
            raise MemgymError(f"{self.name}: no recording '{recording_id}'")
        return self._infos[recording_id]

    def all_infos(self) -> list[RecordingInfo]:
        """Every recording's metadata, in library order."""
        return list(self._infos.values())

    def recording_infos(self, identity: str, split: str) -> list[RecordingInfo]:
        """Metadata of ``identity``'s recordings in ``split`` (library order)."""
        return list(self._by_identity.get((identity, split), []))

    def recording_ids(self, identity: str, split: str) -> list[str]:
        """Ids of ``identity``'s recordings in ``split``."""
        return [info.recording_id for info in self.recording_infos(identity, split)]

    def family(self, identity: str) -> str:
        """Family of an identity (from its first recording)."""
        return self._first(identity).family

    def source_type(self, identity: str) -> str:
        """Source type of an identity (from its first recording)."""
        return self._first(identity).source_type

    # ----- audio ------------------------------------------------------------------------
    def load(self, recording_id: str) -> np.ndarray:
        """``(n,)`` float32 mono audio at 16 kHz of one recording (cached)."""
        cached = self._cache.get(recording_id)
        if cached is not None:
            self._cache.move_to_end(recording_id)
            return cached
        audio = self._load_from_disk_cache(recording_id)
        if audio is None:
            audio = np.ascontiguousarray(self._load_uncached(self.info(recording_id)), dtype=np.float32)
            self._store_in_disk_cache(recording_id, audio)
        audio.setflags(write=False)
        self._cache[recording_id] = audio
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return audio

    def keep_in_memory(self, count: int) -> None:
        """Keep at least ``count`` loaded recordings in the in-memory cache from now on (never
        fewer than before). Memory only: what :meth:`load` returns does not change."""
        self._cache_size = max(self._cache_size, count)

    def recordings(self, identity: str, split: str) -> list[np.ndarray]:
        """``identity``'s recordings in ``split``: a list of ``(n,)`` float32 arrays at 16 kHz."""
        return [self.load(rid) for rid in self.recording_ids(identity, split)]

    def num_samples(self, recording_id: str) -> int:
        """Length in 16 kHz samples of one recording (without loading it when the subclass knows)."""
        return len(self.load(recording_id))

    @abc.abstractmethod
    def _load_uncached(self, info: RecordingInfo) -> np.ndarray:
        """Produce the audio of one recording: ``(n,)`` float array at 16 kHz."""

    def _disk_path(self, recording_id: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{self.name}-{config_hash(self.fingerprint())}" / f"{recording_id}.npy"

    def _load_from_disk_cache(self, recording_id: str) -> np.ndarray | None:
        path = self._disk_path(recording_id)
        if path is None or not path.is_file():
            return None
        return np.load(path)

    def _store_in_disk_cache(self, recording_id: str, audio: np.ndarray) -> None:
        path = self._disk_path(recording_id)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, audio)
        tmp.replace(path)

    def fingerprint(self) -> str:
        """A string that changes whenever the library's content would (used in cache keys)."""
        return f"{self.name}:{len(self._infos)}"

    def _first(self, identity: str) -> RecordingInfo:
        for split in SPLITS:
            infos = self._by_identity.get((identity, split))
            if infos:
                return infos[0]
        raise MemgymError(f"{self.name}: unknown identity '{identity}'")
