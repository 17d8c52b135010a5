"""Access to pretrained models: reasoners and judges, TTS, ASR, encoders (one interface per kind)."""
