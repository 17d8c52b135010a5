"""AMemOps constants and the typed stream-generator config.

Attribute classes (index -> value) shared by labels, actions and models of the audio streams:

* gain: ``0: -18 dB, 1: -12 dB, 2: -6 dB, 3: 0 dB``
* pan:  ``0: 0 (left), 1: 1/3, 2: 2/3, 3: 1 (right)``
* :data:`NONE_INDEX` = 4: "none" — the answer for a source absent from the stream so far.

With ``StreamConfig.attribute_values = N`` (the symbolic controls use 16) the classes are
``0..N-1`` without a physical value and ``N`` is none; only ``N = 4`` can be rendered as audio.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

from memgym.core.errors import ConfigError
from memgym.core.seeding import ADDED_FIELD, hashed_dict
from memgym.datasets.sources.factory import LibraryConfig

SAMPLE_RATE = 16_000
FRAME_RATE = 25
HOP = SAMPLE_RATE // FRAME_RATE  # 640 samples per frame
GAINS_DB: tuple[float, ...] = (-18.0, -12.0, -6.0, 0.0)
PANS: tuple[float, ...] = (0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0)
NONE_INDEX = 4
"""Label of "none" (absent source) for both heads of the audio streams."""
PHYSICAL_VALUES = len(GAINS_DB)
"""Attribute values of streams that can be rendered as audio (the gains and pans above)."""
IGNORE_INDEX = -100
"""Label of frames without a supervised answer (``torch.nn.CrossEntropyLoss`` default)."""
ATTRIBUTES = ("gain", "pan")
QUERY_TYPES = ("initial", "update", "interference", "absent")
RecordingControl = Literal["original", "fixed", "cycle2", "cycle4", "unrestricted"]
RECORDING_CONTROLS: tuple[str, ...] = ("original", "fixed", "cycle2", "cycle4", "unrestricted")


@dataclasses.dataclass(frozen=True)
class StreamConfig:
    """Settings of the AMemOps stream generator (paper section 2 defaults)."""

    library: LibraryConfig = dataclasses.field(default_factory=LibraryConfig, metadata={"help": "sound sources"})
    split: Literal["train", "eval", "calibration"] = dataclasses.field(
        default="train", metadata={"help": "library split the recordings come from"}
    )
    frames: int = dataclasses.field(default=2048, metadata={"help": "stream length in 25 Hz frames (2048 = 81.92 s)"})
    n_initial: int = dataclasses.field(default=10, metadata={"help": "initial-value query proposals per stream"})
    n_update: int = dataclasses.field(default=8, metadata={"help": "post-update query proposals (half gain, half pan)"})
    n_interference: int = dataclasses.field(default=6, metadata={"help": "similar-source interference proposals"})
    n_absent: int = dataclasses.field(default=2, metadata={"help": "absent-source query proposals"})
    update_queries: Literal["one", "both", "joint"] = dataclasses.field(
        default="one",
        metadata={
            "help": "one: each update proposal asks gain or pan (balanced); both: n_update/2 sources asked both "
            "in two queries; joint: n_update/2 sources asked both in one joint query"
        },
    )
    max_updates: int = dataclasses.field(default=1, metadata={"help": "updates per update source (1..max, uniform)"})
    distractors: tuple[int, ...] = dataclasses.field(
        default=(4, 8, 16), metadata={"help": "distractor source counts; each stream draws one uniformly"}
    )
    distractor_similarity: Literal["any", "similar", "dissimilar", "mixed"] = dataclasses.field(
        default="any",
        metadata={"help": "distractors from queried sources' similar/dissimilar pools; mixed = one policy per stream"},
    )
    excerpt_frames: tuple[int, int] = dataclasses.field(
        default=(18, 32), metadata={"help": "event excerpt length range in frames (inclusive)"}
    )
    query_frames: int = dataclasses.field(default=12, metadata={"help": "query length in frames"})
    offset_seconds: tuple[float, float] = dataclasses.field(
        default=(2.0, 60.0), metadata={"help": "log-uniform range of onset offsets between related events (s)"}
    )
    query_offset_seconds: tuple[float, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "log-uniform range of the onset offset from a chain's last event to its query (s); "
            "empty: offset_seconds",
            **ADDED_FIELD,
        },
    )
    max_intervening: int = dataclasses.field(
        default=-1,
        metadata={
            "help": "most other sources' events (not queries) between a query's source's last event and the "
            "query; placements that would exceed it are retried like overlapping ones; -1: no bound",
            **ADDED_FIELD,
        },
    )
    gap_distractors: int = dataclasses.field(
        default=0,
        metadata={
            "help": "one-off events of never-queried sources placed between every query's source's last event "
            "and the query (initial, updated, retained and interference queries alike), each at a uniform free "
            "position of that gap; a gap without room keeps fewer (annotations['dropped']['gap_distractor']); "
            "sources similar/dissimilar to the queried one when distractor_similarity says so",
            **ADDED_FIELD,
        },
    )
    gap_distractor_draw: Literal["fixed", "uniform"] = dataclasses.field(
        default="fixed",
        metadata={
            "help": "fixed: gap_distractors events in every query's gap; uniform: 0..gap_distractors per query, "
            "uniform (so that the events just before a query do not reveal that they are not its answer)",
            **ADDED_FIELD,
        },
    )
    value_repeats: tuple[int, int] = dataclasses.field(
        default=(1, 1),
        metadata={
            "help": "(min, max) times a chain's first event (its source's first value) is heard before the "
            "chain's next event, uniform per chain, for every query type with a history; repeats have the "
            "same gain and pan, their own excerpts, and offset_seconds between them; (1, 1): one event",
            **ADDED_FIELD,
        },
    )
    rms: float = dataclasses.field(default=0.05, metadata={"help": "recording RMS before excerpting"})
    fade_ms: float = dataclasses.field(default=10.0, metadata={"help": "linear fade in/out of every excerpt (ms)"})
    query_gain_db: float = dataclasses.field(default=-3.0, metadata={"help": "query gain (centre pan)"})
    noise_db: float = dataclasses.field(
        default=45.0, metadata={"help": "white noise level below the RMS reference (dB)"}
    )
    recordings: RecordingControl = dataclasses.field(
        default="original", metadata={"help": "recording control: original|fixed|cycle2|cycle4|unrestricted"}
    )
    placement_attempts: int = dataclasses.field(
        default=30, metadata={"help": "placement tries per proposal before it is dropped"}
    )
    attribute_values: int = dataclasses.field(
        default=PHYSICAL_VALUES,
        metadata={"help": "values per attribute (classes 0..N-1, N = none); 4 = the audio gains/pans, symbolic: 16"},
    )

    def __post_init__(self) -> None:
        if self.attribute_values < 2:
            raise ConfigError(
                f"attribute_values must be >= 2 (an update changes the value), got {self.attribute_values}"
            )
        lo, hi = self.excerpt_frames
        if not 1 <= lo <= hi:
            raise ConfigError(f"excerpt_frames must be (min, max) with 1 <= min <= max, got {self.excerpt_frames}")
        if self.query_frames < 1 or self.frames < 1:
            raise ConfigError(f"frames and query_frames must be positive, got {self.frames}, {self.query_frames}")
        if min(self.n_initial, self.n_update, self.n_interference, self.n_absent) < 0 or self.max_updates < 1:
            raise ConfigError("query proposal counts must be >= 0 and max_updates >= 1")
        if self.update_queries != "one" and self.n_update % 2:
            raise ConfigError(
                f"update_queries={self.update_queries} asks gain and pan of each update source: n_update must be "
                f"even, got {self.n_update}"
            )
        if not self.distractors or min(self.distractors) < 0:
            raise ConfigError(f"distractors must be a non-empty list of counts >= 0, got {self.distractors}")
        low, high = self.offset_seconds
        if not 0 < low <= high:
            raise ConfigError(f"offset_seconds must be (min, max) with 0 < min <= max, got {self.offset_seconds}")
        if low * FRAME_RATE < hi:
            raise ConfigError(
                f"offset_seconds min {low} s is shorter than the longest excerpt ({hi} frames): related events would overlap"
            )
        if self.query_offset_seconds:
            if (
                len(self.query_offset_seconds) != 2
                or not 0 < self.query_offset_seconds[0] <= self.query_offset_seconds[1]
            ):
                raise ConfigError(
                    f"query_offset_seconds must be empty or (min, max) with 0 < min <= max, got {self.query_offset_seconds}"
                )
            if self.query_offset_seconds[0] * FRAME_RATE < hi:
                raise ConfigError(
                    f"query_offset_seconds min {self.query_offset_seconds[0]} s is shorter than the longest excerpt "
                    f"({hi} frames): a query would overlap the event before it"
                )
        self._check_intervening()
        self._check_value_repeats()
        needed = self.min_frames_needed()
        if needed > self.frames:
            raise ConfigError(
                f"impossible stream settings: the proposed events need at least {needed} frames "
                f"but frames={self.frames}; lower the query counts/distractors or raise frames"
            )

    def _check_intervening(self) -> None:
        if self.gap_distractors < 0:
            raise ConfigError(f"gap_distractors must be >= 0, got {self.gap_distractors}")
        if 0 <= self.max_intervening < self.gap_distractors:
            raise ConfigError(
                f"gap_distractors={self.gap_distractors} puts more events between a query's source's last event "
                f"and the query than max_intervening={self.max_intervening} allows"
            )
        if self.max_intervening < -1:
            raise ConfigError(f"max_intervening must be -1 (no bound) or >= 0, got {self.max_intervening}")
        if self.max_intervening == 0 and self.n_interference:
            raise ConfigError(
                "max_intervening=0 leaves no room for an interference proposal's partner event "
                "(another source's event between the target and its query); set n_interference=0"
            )

    def _check_value_repeats(self) -> None:
        repeats = self.value_repeats
        if len(repeats) != 2 or not 1 <= repeats[0] <= repeats[1]:
            raise ConfigError(f"value_repeats must be (min, max) with 1 <= min <= max, got {self.value_repeats}")

    def key(self) -> dict:
        """The config as a plain dict for hashes (stream seeds, caches). ``attribute_values`` is left
        out at its audio default and settings added later (:data:`~memgym.core.seeding.ADDED_FIELD`) at
        theirs, so streams and caches of earlier versions keep their keys; settings that cannot change a
        stream (``library.cache_dir``) enter at their defaults."""
        data = hashed_dict(self)
        if self.attribute_values == PHYSICAL_VALUES:
            del data["attribute_values"]
        return data

    def require_audio(self, where: str = "StreamConfig") -> None:
        """Raise :class:`ConfigError` unless the streams can be rendered as audio.

        Args:
            where: the config path of this stream config, named in the message.
        """
        if self.attribute_values != PHYSICAL_VALUES:
            raise ConfigError(
                f"{where}.attribute_values={self.attribute_values}: audio streams need "
                f"{PHYSICAL_VALUES} values (the physical gains {GAINS_DB} dB and pans); "
                "other value counts are for the symbolic controls only"
            )

    def query_offsets(self) -> tuple[float, float]:
        """Log-uniform range (s) of the offset from a chain's last event to its query."""
        low, high = self.query_offset_seconds or self.offset_seconds
        return low, high

    def min_frames_needed(self) -> int:
        """Frames the proposals would occupy with the shortest excerpts (placement lower bound)."""
        lo, q = self.excerpt_frames[0], self.query_frames
        first = self.value_repeats[0] * lo  # a chain's first value, heard at least value_repeats[0] times
        query_events = {"one": 1, "both": 2, "joint": 1}[self.update_queries]
        update = (
            self.n_update * (first + lo + q)
            if self.update_queries == "one"
            else (self.n_update // 2) * (first + lo + query_events * q)
        )
        return (
            self.n_initial * (first + q)
            + update
            + self.n_interference * (first + lo + q)
            + self.n_absent * q
            + max(self.distractors) * lo
        )

    def identities_needed(self) -> int:
        """Distinct identities one stream can need."""
        update_sources = self.n_update if self.update_queries == "one" else self.n_update // 2
        return self.n_initial + update_sources + 2 * self.n_interference + self.n_absent + max(self.distractors)
