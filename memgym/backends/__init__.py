"""Access to pretrained models: reasoners and judges, TTS, ASR, encoders (one interface per kind).

Reasoners (registered by name, built from a :class:`~memgym.backends.config.ReasonerConfig`):

* ``hf`` -- :class:`~memgym.backends.hf.HFReasoner`, transformers text LMs and VLMs;
* ``openai`` -- :class:`~memgym.backends.openai_http.OpenAIChatReasoner`, OpenAI-compatible HTTP;
* ``structured`` -- :class:`~memgym.backends.structured.StructuredReasoner`, offline, symbolic.
"""
