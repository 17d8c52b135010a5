"""AMemOps: audio streams that test memory updates (paper: "AMemOps: Evaluating Memory Updates in
Long Audio Streams").

* :mod:`.config` — constants (attribute classes, none = 4, ignore = -100) and :class:`StreamConfig`
  (``attribute_values``: 4 physical gains/pans, or e.g. 16 for the symbolic controls).
* :mod:`.symbolic` — the symbolic controls: one-hot identities and attribute classes.
* :mod:`.generator` — :class:`StreamGenerator`: 2,048-frame streams with queries, by seed.
* :mod:`.templates` — the 192 matched-history templates and their controls.
* :mod:`.controls` — recording controls (fixed / cycle2 / cycle4 / unrestricted).
* :mod:`.audio` — render a stream record to ``(2, N)`` float32 audio at 16 kHz.
* :mod:`.features` — ``(T, 131)`` inputs and the two heads' labels.
* :mod:`.sampler` — batched torch sampler for training.
"""
