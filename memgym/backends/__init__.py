"""Access to pretrained models: reasoners and judges, TTS, ASR, encoders (one interface per kind).

Reasoners (registered by name, built from a :class:`~memgym.backends.config.ReasonerConfig`):

* ``hf`` -- :class:`~memgym.backends.hf.HFReasoner`, transformers text LMs and VLMs;
* ``openai`` -- :class:`~memgym.backends.openai_http.OpenAIChatReasoner`, OpenAI-compatible HTTP;
* ``structured`` -- :class:`~memgym.pipelines.structured_reasoner.StructuredReasoner`, offline, symbolic;
* ``hf_audio`` -- :class:`~memgym.backends.hf_audio.HFAudioReasoner`, transformers audio LMs
  (Qwen2-Audio, Qwen2.5-Omni / Qwen3-Omni thinkers).

ASR backends (``transcribe(audio, sample_rate) -> str``): :class:`~memgym.backends.whisper_hf.WhisperTranscriber`
(transformers Whisper) and :class:`~memgym.backends.openai_transcribe.OpenAITranscriber`
(OpenAI-compatible ``/audio/transcriptions``).
"""
