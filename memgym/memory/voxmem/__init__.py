"""Spoken-history memories for VoxMem (registered): ``full_history``, ``transcript``, ``cascaded``,
the ground-truth probes ``evidence_only`` and ``oracle_tags``, and the ``no_history`` baseline
(the question alone).

Each observes ``VoxMemEnv`` formation observations and returns, for a question, the whole
chat its reasoner answers (audio parts for audio LMs, text for text LMs; see
:class:`~memgym.memory.voxmem.base.VoxMemMemory`).
"""
