"""Matched event histories (paper section 2): 192 single-query templates and their conditions.

A template fixes everything but the condition: the target source and its latest event, the
query and its answer, 16 distinct distractor sources (identities, durations, attributes,
recordings), the noise. Template ``k`` enumerates (repeat 0-1) x (queried attribute gain/pan)
x (latest gain 0-3) x (latest pan 0-3) x (value change 0-2) = 192 combinations; "value change"
``c`` picks the ``c``-th of the three other values.

Timing (4,096-frame inputs, 163.84 s): two 0.96-s (24-frame) target events start 4 s apart, the
latest ending at 20 s (earlier: frames 376-399, latest: 476-499). The 12-frame query ends at
``20 + delay_s`` s (40 or 140 s). Sixteen distractors sit at evenly spaced onsets between the
latest target's end and the query's start, each centred-left in its slot; their durations
(18-28 frames, fitting the 20-s spacing) and identities are the same at every delay, so longer
delays only stretch the spacing. Low load keeps distractors 1, 6, 11 and 16.

Conditions:

* ``operation``: ``no_update`` (earlier target = latest attributes), ``updated`` (earlier
  differs only in the queried attribute), ``retained`` (earlier differs only in the other).
* ``earlier``: ``target`` (as above), ``omitted`` (no earlier event), ``distractor`` (the first
  distractor's event is replayed in the earlier target's slot); later audio is unchanged.
* ``recordings``: a recording control (:mod:`.controls`).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Literal

from memgym.core.episode import TaskItem
from memgym.core.errors import ConfigError
from memgym.core.seeding import config_hash, episode_rng
from memgym.datasets.amemops.config import FRAME_RATE, GAINS_DB, PANS, RECORDING_CONTROLS
from memgym.datasets.amemops.controls import apply_recording_control
from memgym.datasets.amemops.generator import excerpt_start
from memgym.datasets.amemops.records import AMemOpsStream, StreamEvent
from memgym.datasets.sources.library import SourceLibrary

N_TEMPLATES = 192
HISTORY_FRAMES = 4096
TARGET_FRAMES = 24  # 0.96 s
LATEST_END = 20 * FRAME_RATE  # frame 500
EARLIER_ONSET = LATEST_END - TARGET_FRAMES - 4 * FRAME_RATE  # 376: 4 s before the latest onset
QUERY_FRAMES = 12
N_DISTRACTORS = 16
LOW_LOAD = (0, 5, 10, 15)  # distractors 1, 6, 11, 16
MAX_DISTRACTOR_FRAMES = 28
Operation = Literal["no_update", "updated", "retained"]
Earlier = Literal["target", "omitted", "distractor"]


@dataclasses.dataclass(frozen=True)
class Template:
    """The combinatorial part of template ``index`` (see the module docstring)."""

    index: int
    repeat: int
    attribute: str
    latest_gain: int
    latest_pan: int
    change: int


def template(index: int) -> Template:
    """Template ``index`` (0-191)."""
    if not 0 <= index < N_TEMPLATES:
        raise ConfigError(f"template index must be 0-{N_TEMPLATES - 1}, got {index}")
    combos = itertools.product(range(2), ("gain", "pan"), range(4), range(4), range(3))
    repeat, attribute, gain, pan, change = next(itertools.islice(combos, index, None))
    return Template(index, repeat, attribute, gain, pan, change)


def _other(value: int, change: int) -> int:
    return [v for v in range(4) if v != value][change]


def earlier_attributes(t: Template, operation: str) -> tuple[int, int]:
    """(gain, pan) indices of the earlier target event under ``operation``."""
    gain, pan = t.latest_gain, t.latest_pan
    if operation == "no_update":
        return gain, pan
    change_gain = (t.attribute == "gain") == (operation == "updated")
    if operation not in ("updated", "retained"):
        raise ConfigError(f"operation must be no_update, updated or retained, got '{operation}'")
    return (_other(gain, t.change), pan) if change_gain else (gain, _other(pan, t.change))


def distractor_onsets(delay_s: float, durations: list[int]) -> list[int]:
    """Evenly spaced distractor onsets between the latest target's end and the query's start."""
    query_start = LATEST_END + int(round(delay_s * FRAME_RATE)) - QUERY_FRAMES
    spacing = (query_start - LATEST_END) / N_DISTRACTORS
    if spacing < MAX_DISTRACTOR_FRAMES:
        raise ConfigError(f"delay_s={delay_s} leaves too little room for {N_DISTRACTORS} distractors")
    lead = (spacing - MAX_DISTRACTOR_FRAMES) / 2
    return [LATEST_END + int(round(i * spacing + lead)) for i in range(len(durations))]


@dataclasses.dataclass(frozen=True)
class HistoryCondition:
    """One condition of a template's matched history (see the module docstring).

    Args:
        operation: what the earlier target event holds (``no_update``, ``updated``, ``retained``).
        delay_s: seconds from the latest target's end to the query's end.
        load: ``high`` (16 distractors) or ``low`` (4).
        earlier: ``target``, ``omitted`` or ``distractor`` in the earlier target's slot.
        recordings: the recording control (:data:`RECORDING_CONTROLS`).
    """

    operation: Operation = "updated"
    delay_s: float = 20
    load: Literal["low", "high"] = "high"
    earlier: Earlier = "target"
    recordings: str = "original"

    def check(self) -> None:
        """Raise a ConfigError naming the first value out of range."""
        if self.delay_s * FRAME_RATE + LATEST_END > HISTORY_FRAMES:
            raise ConfigError(f"delay_s={self.delay_s}: the query would end after the {HISTORY_FRAMES}-frame input")
        if self.earlier not in ("target", "omitted", "distractor"):
            raise ConfigError(f"earlier must be target, omitted or distractor, got '{self.earlier}'")
        if self.load not in ("low", "high"):
            raise ConfigError(f"load must be low or high, got '{self.load}'")
        if self.recordings not in RECORDING_CONTROLS:
            raise ConfigError(f"recordings must be one of {list(RECORDING_CONTROLS)}, got '{self.recordings}'")


@dataclasses.dataclass(frozen=True)
class _TemplateDraw:
    """What template ``index`` draws at random, the same under every condition: the target and
    distractor identities, distractor durations and (gain, pan) indices, the recordings
    ``(recording id, start sample)`` of every event, and the noise seed."""

    target: str
    distractors: list[str]
    durations: list[int]
    attributes: list[tuple[int, int]]
    earlier: tuple[str, int]
    latest: tuple[str, int]
    query: tuple[str, int]
    distractor_recordings: list[tuple[str, int]]
    noise_seed: int


def build_history_stream(
    index: int,
    library: SourceLibrary,
    condition: HistoryCondition = HistoryCondition(),
    *,
    split: str = "eval",
    seed: int = 0,
) -> AMemOpsStream:
    """The matched-history stream of template ``index`` under ``condition`` (4,096 frames).

    Everything drawn at random (:class:`_TemplateDraw`) depends only on (library, split, seed,
    index), never on the condition, so conditions are paired.
    """
    condition.check()
    t = template(index)
    draw = _draw(index, library, split, seed)
    g, p = earlier_attributes(t, condition.operation)
    events, query = _history_events(t, draw, (g, p), condition, library, split)
    c = condition
    return AMemOpsStream(
        episode_id=f"history-{index:03d}-{c.operation}-{int(c.delay_s)}s-{c.load}-{c.earlier}-{c.recordings}",
        benchmark="amemops",
        items=(_history_item(t, draw.target, query, (g, p), condition),),
        annotations={
            "template": index,
            "operation": c.operation,
            "delay_s": c.delay_s,
            "load": c.load,
            "earlier": c.earlier,
        },
        frames=HISTORY_FRAMES,
        library=library.fingerprint(),
        split=split,
        events=tuple(sorted(events, key=lambda e: e.onset_frame)),
        noise_seed=draw.noise_seed,
        recordings=c.recordings,
    )


def _draw(index: int, library: SourceLibrary, split: str, seed: int) -> _TemplateDraw:
    """Template ``index``'s random draws from the item's generator, in a fixed order."""
    identities = library.identities(split)
    if len(identities) < 1 + N_DISTRACTORS:
        raise ConfigError(f"{library.name} split '{split}' has {len(identities)} identities; templates need 17")
    rng = episode_rng(config_hash({"history": library.fingerprint(), "split": split}), seed, index)
    chosen = [identities[int(k)] for k in rng.permutation(len(identities))[: 1 + N_DISTRACTORS]]
    target, distractors = chosen[0], chosen[1:]
    durations = [int(d) for d in rng.integers(18, MAX_DISTRACTOR_FRAMES + 1, size=N_DISTRACTORS)]
    attributes = [(int(g), int(p)) for g, p in rng.integers(0, 4, size=(N_DISTRACTORS, 2))]

    def excerpt(identity: str, frames: int) -> tuple[str, int]:
        ids = library.recording_ids(identity, split)
        rid = ids[int(rng.integers(len(ids)))]
        return rid, excerpt_start(library, rid, frames, rng)

    earlier, latest, query = (excerpt(target, n) for n in (TARGET_FRAMES, TARGET_FRAMES, QUERY_FRAMES))
    recordings = [excerpt(d, n) for d, n in zip(distractors, durations)]
    return _TemplateDraw(
        target, distractors, durations, attributes, earlier, latest, query, recordings, int(rng.integers(2**62))
    )


def _event(
    identity: str,
    role: str,
    onset: int,
    frames: int,
    attributes: tuple[float, float],
    recording: tuple[str, int],
    query_id: str = "",
) -> StreamEvent:
    """A template event at ``onset`` (frames) with physical ``(gain dB, pan)``."""
    return StreamEvent(
        identity=identity, role=role, onset_frame=onset, frames=frames,
        gain_db=float(attributes[0]), pan=float(attributes[1]),
        recording_id=recording[0], start_sample=recording[1], group="template", query_id=query_id,
    )  # fmt: skip


def _levels(g: int, p: int) -> tuple[float, float]:
    """``(gain dB, pan)`` of gain index ``g`` and pan index ``p``."""
    return GAINS_DB[g], PANS[p]


def _history_events(
    t: Template,
    draw: _TemplateDraw,
    earlier_gp: tuple[int, int],
    condition: HistoryCondition,
    library: SourceLibrary,
    split: str,
) -> tuple[list[StreamEvent], StreamEvent]:
    """The events ``condition`` keeps (latest target, query, earlier slot, distractors of its
    load), and the query event."""
    onsets = distractor_onsets(condition.delay_s, draw.durations)
    # The full history (earlier target, latest target, every distractor, query) gets the recording
    # control first, so "a source's first recording" is the same under every condition.
    full = [
        _event(draw.target, "target", EARLIER_ONSET, TARGET_FRAMES, _levels(*earlier_gp), draw.earlier),
        _event(
            draw.target,
            "target",
            LATEST_END - TARGET_FRAMES,
            TARGET_FRAMES,
            _levels(t.latest_gain, t.latest_pan),
            draw.latest,
        ),  # fmt: skip
        *(
            _event(d, "distractor", o, n, _levels(*gp), rec)
            for d, o, n, gp, rec in zip(
                draw.distractors, onsets, draw.durations, draw.attributes, draw.distractor_recordings
            )
        ),
    ]
    query_end = LATEST_END + int(round(condition.delay_s * FRAME_RATE))
    query = _event(draw.target, "query", query_end - QUERY_FRAMES, QUERY_FRAMES, (-3.0, 0.5), draw.query, "q00")
    controlled = apply_recording_control(_bare_stream(full + [query], split), condition.recordings, library).events
    earlier_event, latest_event, distractor_events = controlled[0], controlled[1], controlled[2 : 2 + N_DISTRACTORS]
    events = [latest_event, controlled[-1]]
    if condition.earlier == "target":
        events.append(earlier_event)
    elif condition.earlier == "distractor":
        events.append(dataclasses.replace(distractor_events[0], onset_frame=EARLIER_ONSET))
    keep = LOW_LOAD if condition.load == "low" else range(N_DISTRACTORS)
    return events + [distractor_events[k] for k in keep], query


def _history_item(
    t: Template, target: str, query: StreamEvent, earlier_gp: tuple[int, int], condition: HistoryCondition
) -> TaskItem:
    """The template's one query item with its answer (the latest value of the queried attribute)."""
    answer = t.latest_gain if t.attribute == "gain" else t.latest_pan
    earlier_value = earlier_gp[0] if t.attribute == "gain" else earlier_gp[1]
    previous = earlier_value if condition.earlier == "target" and earlier_value != answer else None
    query_end = query.onset_frame + QUERY_FRAMES
    return TaskItem(
        item_id="q00",
        task="attribute_query",
        answer=answer,
        annotations={
            "type": "history",
            "operation": condition.operation,
            "attribute": t.attribute,
            "identity": target,
            "group": "template",
            "onset_frame": query.onset_frame,
            "end_frame": query_end - 1,
            "delay_s": (query_end - LATEST_END) / FRAME_RATE,
            "history_events": 2 if condition.earlier == "target" else 1,
            "gain_index": t.latest_gain,
            "pan_index": t.latest_pan,
            "previous_index": previous,
            "template": t.index,
            "repeat": t.repeat,
            "change": t.change,
            "load": condition.load,
            "earlier": condition.earlier,
        },
    )


def _bare_stream(events: list[StreamEvent], split: str) -> AMemOpsStream:
    """A stream holding only ``events`` (in time order), for applying a recording control."""
    return AMemOpsStream(
        episode_id="template",
        benchmark="amemops",
        frames=HISTORY_FRAMES,
        library="",
        split=split,
        events=tuple(events),
        noise_seed=0,
    )
