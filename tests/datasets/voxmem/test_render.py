"""Turn rendering: the silence before each turn's speech, with and without a background sound."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

from memgym.backends.tts.espeak import EspeakBackend
from memgym.core.errors import MemgymError
from memgym.datasets.sources import open_library
from memgym.datasets.speech.voices import espeak_voice_bank
from memgym.datasets.voxmem.render import LEAD_SILENCE_S, TurnRenderer, library_clip_source

TEXT = "How do I descale a kettle?"


def _renderer(tmp_path, lead_s: float) -> TurnRenderer:
    library = open_library("synthetic_env")
    return TurnRenderer(
        tmp_path / f"r{lead_s}", EspeakBackend(), library_clip_source(library), library.fingerprint(), 15.0, lead_s
    )


def _audio(renderer: TurnRenderer, path: str) -> np.ndarray:
    return soundfile.read(str(renderer.root / path), dtype="float32")[0]


def test_speech_starts_after_the_lead_silence_and_sound_fills_it(tmp_path):
    voice = espeak_voice_bank()[0]
    lead, none = _renderer(tmp_path, LEAD_SILENCE_S), _renderer(tmp_path, 0.0)
    with_lead, without = lead.render(voice, TEXT), none.render(voice, TEXT)
    samples = int(LEAD_SILENCE_S * 16000)
    assert LEAD_SILENCE_S > 0 and with_lead.audio != without.audio  # the lead is part of the cache key
    assert with_lead.duration_s == pytest.approx(without.duration_s + LEAD_SILENCE_S, abs=1e-6)
    heard = _audio(lead, with_lead.audio)
    assert np.all(heard[:samples] == 0.0)
    np.testing.assert_allclose(heard[samples:], _audio(none, without.audio), atol=1e-4)  # same speech after it
    mixed = lead.render(voice, TEXT, sound="rain")
    assert np.sqrt(np.mean(_audio(lead, mixed.audio)[:samples] ** 2)) > 1e-3  # the sound plays from the start
    assert _audio(lead, mixed.plain_audio)[:samples].max() == 0.0  # its clean pair keeps the silence


def test_negative_lead_silence_is_refused(tmp_path):
    with pytest.raises(MemgymError, match="lead silence"):
        _renderer(tmp_path, -0.1)
