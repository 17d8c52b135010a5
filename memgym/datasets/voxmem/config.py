"""``memgym generate voxmem`` settings (:class:`VoxMemConfig`), the user voices a config names and
budget parsing."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Literal

from memgym.backends.asr import ASRConfig
from memgym.backends.tts import TTSConfig
from memgym.backends.tts.base import Voice
from memgym.core.errors import ConfigError
from memgym.core.executors import executor_field
from memgym.core.seeding import ADDED_FIELD, canonical_json, hashed_dict, setting
from memgym.datasets.sources.factory import LibraryConfig
from memgym.datasets.speech.vctk import VCTKCorpus
from memgym.datasets.speech.voices import espeak_voice_bank, named_voice_bank
from memgym.datasets.voxmem.render import LEAD_SILENCE_S

DEFAULT_SOUND_CLASSES: tuple[str, ...] = (
    "airplane", "car_horn", "chainsaw", "chirping_birds", "church_bells", "clock_alarm", "clock_tick",
    "crackling_fire", "crickets", "dog", "door_wood_knock", "engine", "footsteps", "hand_saw", "helicopter",
    "keyboard_typing", "pouring_water", "rain", "rooster", "sea_waves", "siren", "thunderstorm", "toilet_flush",
    "train", "vacuum_cleaner", "washing_machine", "water_drops", "wind",
)  # fmt: skip
"""Background sounds (traffic, alarms, machinery, household, weather, animals); no human vocal sounds."""


MAX_REVISIONS = 8
"""Default redraws of an item that fails QC: enough that the intelligibility gate redraws rather
than drops audio-native TET items (docs/voxmem.md, *Intelligibility*)."""

GATE_BEAM_SIZE = 5
"""Decoder beams of the gate's recogniser (Whisper tiny.en): 5 beams hear clean turns with 13.2-13.4 %
word error on held-out builds against 16-19 % greedy, for about 15 % more CPU (docs/voxmem_eval.md)."""


@dataclasses.dataclass(frozen=True)
class VoxMemConfig:
    """Configuration of ``memgym generate voxmem``."""

    items: int = dataclasses.field(default=15, metadata={"help": "number of items (cycling over the cells)", "min": 1})
    cells: tuple[str, ...] = dataclasses.field(
        default=(),
        metadata={
            "help": "cells to build, e.g. [speaker/IE,sound/IE,sound/AR] (AR needs a source cell); empty = all 15"
        },
    )
    budgets: tuple[str, ...] = dataclasses.field(
        default=("8k", "16k", "32k", "64k"), metadata={"help": "context budgets (8k = 8192 tokens)"}
    )
    seed: int = dataclasses.field(default=0, metadata={"help": "dataset seed"})
    out: str = dataclasses.field(default="runs/voxmem/dataset", metadata={"help": "output dataset folder"})
    tts: TTSConfig = dataclasses.field(default_factory=TTSConfig, metadata={"help": "speech synthesis backend"})
    library: LibraryConfig = dataclasses.field(
        default_factory=LibraryConfig, metadata={"help": "environmental sound library (synthetic_env or esc50)"}
    )
    sound_classes: tuple[str, ...] = dataclasses.field(
        default=DEFAULT_SOUND_CLASSES, metadata={"help": "sound classes used as background sounds"}
    )
    snr_db: float = dataclasses.field(
        default=15.0, metadata={"help": "speech-to-sound SNR in dB on the speech's active region (see docs/voxmem.md)"}
    )
    lead_silence_s: float = setting(
        LEAD_SILENCE_S,
        "silence before the speech of every user turn, in seconds (the recogniser mis-hears speech that starts at "
        "once; 0 = as rendered before issue 38)",
        min=0.0,
    )
    users: int = dataclasses.field(default=3, metadata={"help": "users per history (distinct voices)", "min": 1})
    writer: Literal["template", "llm"] = dataclasses.field(
        default="template", metadata={"help": "dialogue writer: template (offline) or llm (needs reasoner)"}
    )
    reasoner: str = dataclasses.field(default="", metadata={"help": "registered reasoner name for writer=llm"})
    qc_reasoner: str = dataclasses.field(
        default="", metadata={"help": "registered reasoner answering from transcripts only (QC report); empty = off"}
    )
    vctk_root: str = dataclasses.field(
        default="", metadata={"help": "VCTK folder: user voices are VCTK speakers (tts.kind openai or hf)"}
    )
    filler_path: str = dataclasses.field(
        default="", metadata={"help": "InstructS2S JSON/JSONL file or folder; empty = generated fillers"}
    )
    tokenizer: str = dataclasses.field(
        default="gpt2-pretok", metadata={"help": "text tokenizer: gpt2-pretok or hf:<local folder>"}
    )
    max_session_reuse: int = dataclasses.field(
        default=4, metadata={"help": "most items whose histories may share one session"}
    )
    haystacks_per_level: int = dataclasses.field(
        default=2,
        metadata={
            "help": "haystacks added at every budget level (borrowed from items on the same topic family, else written)"
        },
    )
    length_control: Literal["none", "fixed_competition"] = setting(
        "none",
        "none: every budget level adds same-subject haystacks; fixed_competition: only the first (smallest) budget "
        "does, longer histories add other-subject haystacks and fillers only",
        added=True,
    )
    refusal_scope: Literal["words_kept", "every_subtype"] = setting(
        "every_subtype",
        "answer refusal: every_subtype (default: where no edit that keeps the words refuses an audio-native item, "
        "its evidence's subject is removed, so every IE/MSR/TET subtype yields AR items; those are visible in the "
        "transcript) or words_kept (audio-native items refused only by removing their tone, sound or voice link)",
    )
    filler_cue_rate: float = dataclasses.field(default=0.2, metadata={"help": "share of filler sessions with a cue"})
    filler_sound_rate: float = dataclasses.field(default=0.3, metadata={"help": "share of filler sessions with sound"})
    max_revisions: int = dataclasses.field(
        default=MAX_REVISIONS,
        metadata={"help": "redraws of an item that fails QC before it is dropped (a redraw keeps its cell)"},
    )
    asr: ASRConfig = dataclasses.field(
        default_factory=lambda: ASRConfig(beam_size=GATE_BEAM_SIZE),
        metadata={"help": "speech recogniser of the QC intelligibility gate (asr.kind=none: no gate)"},
    )
    qc_model: str = dataclasses.field(
        default="",
        metadata={
            "help": "QC-1 model pass over evidence sessions: '' (off), offline (recogniser + signal measurements), "
            "or an audio LM spec (hf_audio:<folder>, openai:<model>@<url>)",
            **ADDED_FIELD,
        },
    )
    executor: Literal["local", "ray"] = executor_field(
        "local only: items build on earlier items' sessions (ray is refused; eval voxmem takes it)"
    )


def voice_bank(config: VoxMemConfig) -> list[Voice]:
    """The user voices: eSpeak's embedded bank, the backend's named voices, or VCTK speakers.

    With ``vctk_root`` each voice is one VCTK speaker carrying a reference recording; for ``hf``
    models its name is the speaker's index in ``speaker-info.txt`` order (the speaker id of
    multi-speaker models trained on VCTK), for ``openai`` the VCTK id (``p225``).
    """
    kind = config.tts.kind
    if config.vctk_root:
        if kind == "espeak":
            raise ConfigError("vctk_root needs tts.kind=openai or tts.kind=hf (eSpeak cannot speak VCTK voices)")
        corpus = VCTKCorpus(config.vctk_root)
        order = sorted(corpus.speakers)
        voices = corpus.voices(kind)
        return [dataclasses.replace(v, name=str(order.index(v.name))) for v in voices] if kind == "hf" else voices
    return espeak_voice_bank() if kind == "espeak" else named_voice_bank(kind, config.tts.voices)


def draw_digest(config: VoxMemConfig) -> str:
    """The digest that seeds a build's plans, voices and histories: the config's hash with the
    settings that decide no draw fixed (``out``; ``length_control``, ``refusal_scope`` and
    ``max_revisions`` at the values the first builds were drawn with), so builds that differ only
    in those draw the same items (a redraw's seed depends on its attempt number, not on how many
    redraws are allowed). ``lead_silence_s`` (issue 38) changes how turns sound, not what is drawn, so it is
    left out: a build draws the items it drew before that key existed; so is the gate's
    ``asr.beam_size`` (greedy before issue 38: it decides which draws are kept, not what they are)."""
    fixed = dataclasses.replace(
        config,
        out="",
        length_control="none",
        refusal_scope="every_subtype",
        max_revisions=2,
        asr=dataclasses.replace(config.asr, beam_size=1),
    )
    fields = hashed_dict(fixed)
    fields.pop("lead_silence_s")
    return hashlib.sha256(canonical_json(fields).encode()).hexdigest()[:16]


def parse_budget(text: str) -> int:
    """``"8k"`` -> 8192, ``"8192"`` -> 8192."""
    raw = str(text).strip().lower()
    try:
        value = int(float(raw[:-1]) * 1024) if raw.endswith("k") else int(raw)
    except ValueError:
        raise ConfigError(f"budgets: '{text}' is not a token count like 8k or 8192") from None
    if value <= 0:
        raise ConfigError(f"budgets: '{text}' must be positive")
    return value
