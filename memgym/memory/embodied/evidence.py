"""Evidence of the visual memories, in the three forms reasoners read.

A visual memory's ``retrieve`` returns a :class:`VisualEvidence`: memory *entries* (an object
instance, a snapshot object or a frame, each with an id, a category label, an estimated
location and observable facts), the images a VLM looks at, and optionally the dialogue
transcript. It serialises as

* :attr:`VisualEvidence.text` -- one readable line per entry (and per image) plus the transcript,
  for text-only and vision-language reasoners (the images go along as image parts);
* :attr:`VisualEvidence.structured_text` -- ``FACT`` lines (:mod:`memgym.backends.structured`)
  plus the transcript, for the offline ``structured`` reasoner: per entry a ``detected`` fact
  (value: its label) and one fact per observable key (``near``, ``on``: a neighbour's category;
  ``color``, ``room``: what it looks like and where, :mod:`~memgym.memory.embodied.appearance`;
  ``times_seen``, ``order``: episodic keys written with the dataset's words; ``said_<k>``: a
  dialogue line linked to its snapshot), then the linked lines once each as plain text;
* :attr:`VisualEvidence.locations` -- entry id -> ``(3,)`` metres, the navigation destination
  when a reasoner names that entry.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from memgym.backends.structured import SAID_KEY, Fact, format_fact

EPISODIC_FACT_KEYS = frozenset({"times_seen", "order"})
"""Observable fact keys derived from the trajectory (the rest are perceptual)."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One memory entry a reasoner can select.

    Attributes:
        id: unique within the evidence (``"obj_3"``, ``"frame_12:mug"``).
        label: category of the object (the detector's label); ``""`` for an entry that is a whole
            frame (no fact lines: the structured reasoner selects objects).
        location: ``(3,)`` metres, Habitat frame: where navigation goes when the entry is chosen.
        facts: observable key -> value words (``{"near": "table", "times_seen": "twice"}``).
        image: index into :attr:`VisualEvidence.images` of the picture showing it, or -1.
        group: the snapshot or frame it belongs to (``""`` when none).
        said: dialogue lines linked to its snapshot (``"Speaker: utterance"``).
    """

    id: str
    label: str
    location: tuple[float, float, float]
    facts: dict[str, str] = dataclasses.field(default_factory=dict)
    image: int = -1
    group: str = ""
    said: tuple[str, ...] = ()

    def line(self) -> str:
        """Readable one-line description."""
        where = ", ".join(f"{v:.2f}" for v in self.location)
        parts = [f"[{self.id}] {self.label or 'view'} at ({where}) m"]
        parts += [f"{k.replace('_', ' ')}: {v}" for k, v in sorted(self.facts.items())]
        if self.group:
            parts.append(f"in {self.group}")
        if self.image >= 0:
            parts.append(f"image {self.image + 1}")
        return "; ".join(parts)

    def fact_lines(self) -> list[str]:
        """``FACT`` lines: its label as ``detected``, each observable fact, then each linked line as a
        ``said`` fact (:data:`~memgym.backends.structured.SAID_KEY`; none without a label)."""
        if not self.label:
            return []
        facts = [Fact(self.id, self.label, "perceptual", "detected", self.label)]
        for key, value in sorted(self.facts.items()):
            kind = "episodic" if key in EPISODIC_FACT_KEYS else "perceptual"
            facts.append(Fact(self.id, self.label, kind, key, value))
        facts += [Fact(self.id, self.label, "social", f"{SAID_KEY}_{k}", line) for k, line in enumerate(self.said)]
        return [format_fact(f) for f in facts]


@dataclasses.dataclass(frozen=True, eq=False)
class VisualEvidence:
    """Entries, images and transcript of one retrieval (see the module docstring).

    Attributes:
        entries: the retained entries.
        images: ``(H, W, 3) uint8`` pictures (frames, snapshot images or crops).
        captions: one line per image (what it shows).
        dialogue: the transcript (``"Speaker: utterance"`` lines) or ``""``.
        categories: the categories retrieval kept (empty for memories that do not filter).
        linked: ``(snapshot id, line)`` dialogue linked to the kept snapshots (linked memories).
    """

    entries: tuple[Entry, ...] = ()
    images: tuple[np.ndarray, ...] = ()
    captions: tuple[str, ...] = ()
    dialogue: str = ""
    categories: tuple[str, ...] = ()
    linked: tuple[tuple[str, str], ...] = ()

    @property
    def locations(self) -> dict[str, tuple[float, float, float]]:
        """Entry id -> location, metres."""
        return {e.id: e.location for e in self.entries}

    @property
    def text(self) -> str:
        """Readable serialisation: entries, image captions, then the transcript."""
        lines = [e.line() for e in self.entries] or ["(no matching memory entries)"]
        lines += [f"image {i + 1}: {c}" for i, c in enumerate(self.captions)]
        if self.linked:
            lines += ["Dialogue linked to snapshots:"] + [f"{s}: {line}" for s, line in self.linked]
        if self.dialogue:
            lines += ["Dialogue:", self.dialogue]
        return "\n".join(lines)

    @property
    def structured_text(self) -> str:
        """``FACT`` lines of every entry, the linked lines (once each), then the transcript."""
        lines = [line for e in self.entries for line in e.fact_lines()]
        lines += list(dict.fromkeys(line for _, line in self.linked))
        if self.dialogue:
            lines.append(self.dialogue)
        return "\n".join(lines)
