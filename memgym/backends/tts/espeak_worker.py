"""The eSpeak NG synthesis worker (standard library only; runs as its own small process).

libespeak-ng carries state from one utterance to the next (pitch-flutter phase, filter memories)
that re-initialising does not reset, so the same request would give slightly different samples
depending on what was spoken before. The worker initialises the engine once and then *forks a
child per request* from that pristine state: every utterance is synthesised from identical engine
state, in any order and in any process. Forking this small process costs about a millisecond.

The engine also has a random generator of its own, seeded from the clock (``time()``, whole
seconds) when it initialises; variants with breath noise (``f2``, ``f3``, ``f5``, ...) draw from
it. Every request re-seeds it with :data:`RAND_SEED` (``espeak_ng_SetRandSeed``), so those
voices too give the same samples in any process started at any time.

Protocol on stdin/stdout (little-endian):

* worker -> client at start: ``int32 sample_rate``
* client -> worker: ``int32 n`` + ``n`` bytes of JSON ``{"voice", "rate", "pitch", "range", "ssml"}``
* worker -> client: ``int32 status`` (0 ok, -1 unknown voice, -2 worker child failed, >0 eSpeak
  error) + ``int32 n_samples`` + ``n_samples`` int16 samples

Run: ``python espeak_worker.py LIBRARY_PATH DATA_PATH``.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys

AUDIO_OUTPUT_SYNCHRONOUS = 2
ESPEAK_CHARS_UTF8 = 1
ESPEAK_SSML = 0x10
PARAM_RATE, PARAM_VOLUME, PARAM_PITCH, PARAM_RANGE = 1, 2, 3, 4
RAND_SEED = 0
"""Seed of the engine's own random generator (breath noise), set before every utterance."""
NO_VOICE = -1
CHILD_FAILED = -2
CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


class Engine:
    """libespeak-ng initialised for synchronous synthesis into memory."""

    def __init__(self, library_path: str, data_path: str) -> None:
        self.lib = ctypes.CDLL(library_path)
        self.lib.espeak_Initialize.restype = ctypes.c_int
        self.lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self.lib.espeak_ng_SetRandSeed.argtypes = [ctypes.c_long]
        self.lib.espeak_ng_SetRandSeed.restype = None
        self.sample_rate = int(self.lib.espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), 0))
        self._chunks: list[bytes] = []
        self._callback = CALLBACK(self._collect)  # keep a reference: ctypes must not free it
        self.lib.espeak_SetSynthCallback(self._callback)
        self.lib.espeak_SetVoiceByName(b"en-us")  # load the English tables once, before any fork

    def _collect(self, wav, count, events) -> int:
        if count > 0:
            self._chunks.append(ctypes.string_at(wav, 2 * count))
        return 0

    def synthesize(self, request: dict) -> tuple[int, bytes]:
        """``(status, int16 little-endian sample bytes)`` for one request."""
        if self.lib.espeak_SetVoiceByName(str(request["voice"]).encode()) != 0:
            return NO_VOICE, b""
        self.lib.espeak_SetParameter(PARAM_RATE, int(request["rate"]), 0)
        self.lib.espeak_SetParameter(PARAM_PITCH, int(request["pitch"]), 0)
        self.lib.espeak_SetParameter(PARAM_RANGE, int(request["range"]), 0)
        self.lib.espeak_SetParameter(PARAM_VOLUME, 100, 0)
        self.lib.espeak_ng_SetRandSeed(RAND_SEED)
        self._chunks = []
        data = str(request["ssml"]).encode("utf-8") + b"\0"
        status = self.lib.espeak_Synth(
            ctypes.c_char_p(data), ctypes.c_size_t(len(data)), 0, 1, 0, ESPEAK_SSML | ESPEAK_CHARS_UTF8, None, None
        )
        samples, self._chunks = b"".join(self._chunks), []
        return int(status), samples


def serve(library_path: str, data_path: str) -> None:
    """The worker loop: one forked child per request (see the module docstring)."""
    engine = Engine(library_path, data_path)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sink.write(struct.pack("<i", engine.sample_rate))
    sink.flush()
    while True:
        header = source.read(4)
        if len(header) < 4:
            return
        (length,) = struct.unpack("<i", header)
        request = json.loads(source.read(length))
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                status, samples = engine.synthesize(request)
                sink.write(struct.pack("<ii", status, len(samples) // 2) + samples)
                sink.flush()
                code = 0
            finally:
                os._exit(code)
        _, exit_status = os.waitpid(pid, 0)
        if exit_status != 0:
            sink.write(struct.pack("<ii", CHILD_FAILED, 0))
            sink.flush()


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
