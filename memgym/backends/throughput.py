"""Token counts and seconds of a local model's replies, recorded in a run's ``environment.json``.

A reply's *prompt* phase runs from the call to the first new token (the prompt's forward pass and
the first token); its *generation* phase decodes the remaining tokens. Rates are therefore
``prompt_tokens / prompt_seconds`` and ``(generated_tokens - replies) / generation_seconds`` (the
first token of each reply belongs to the prompt phase). Timings are wall-clock seconds on the
machine that ran the model; counts are deterministic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memgym.core.results import RunStore


@dataclasses.dataclass
class Throughput:
    """Running totals over a model's replies (see the module docstring)."""

    replies: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    prompt_seconds: float = 0.0
    generation_seconds: float = 0.0

    def add(self, prompt_tokens: int, generated_tokens: int, prompt_seconds: float, generation_seconds: float) -> None:
        """Count one reply."""
        self.replies += 1
        self.prompt_tokens += int(prompt_tokens)
        self.generated_tokens += int(generated_tokens)
        self.prompt_seconds += float(prompt_seconds)
        self.generation_seconds += float(generation_seconds)

    def merge(self, other: Throughput) -> None:
        """Add ``other``'s totals."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def clear(self) -> None:
        """Restart from zero."""
        for f in dataclasses.fields(self):
            setattr(self, f.name, f.default)

    def to_dict(self) -> dict[str, Any]:
        """Totals and the two rates (None before any reply of that phase)."""
        decoded = self.generated_tokens - min(self.replies, self.generated_tokens)
        return {
            "replies": self.replies,
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "prompt_seconds": round(self.prompt_seconds, 3),
            "generation_seconds": round(self.generation_seconds, 3),
            "prompt_tokens_per_s": _rate(self.prompt_tokens, self.prompt_seconds),
            "generation_tokens_per_s": _rate(decoded, self.generation_seconds),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Throughput:
        """The totals of :meth:`to_dict` output."""
        return cls(**{f.name: data.get(f.name, f.default) for f in dataclasses.fields(cls)})


def _rate(tokens: int, seconds: float) -> float | None:
    return round(tokens / seconds, 2) if seconds > 0 else None


def take_throughput(models: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The replies counted by every model in ``models`` (name -> reasoner) that keeps a
    ``throughput`` and has replied since the last call, as :meth:`Throughput.to_dict` per name;
    those models' counts restart from zero, so the next call returns only newer replies. Plain
    data: a worker process returns it with its results for the driver to record."""
    taken = {}
    for name, model in models.items():
        totals = getattr(model, "throughput", None)
        if isinstance(totals, Throughput) and totals.replies:
            taken[name] = totals.to_dict()
            totals.clear()
    return taken


def record_counts(store: RunStore, counts: Mapping[str, Mapping[str, Any]]) -> None:
    """Add ``counts`` (name -> :meth:`Throughput.to_dict`, from :func:`take_throughput`) to the
    run's ``environment.json`` under ``"throughput"`` / name, on top of what earlier sessions of
    the run recorded there (a resumed run adds its replies)."""
    if not counts:
        return
    section = dict(store.environment().get("throughput", {}))
    for name, totals in counts.items():
        merged = Throughput.from_dict(section.get(name, {}))
        merged.merge(Throughput.from_dict(totals))
        section[name] = merged.to_dict()
    store.record_environment("throughput", section)
