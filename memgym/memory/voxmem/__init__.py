"""Spoken-history memories for VoxMem (registered): ``full_history``, ``transcript``, ``cascaded``,
and the ground-truth probes ``evidence_only`` and ``oracle_tags``.

Each observes ``VoxMemEnv`` formation observations and returns, for a question, the whole
chat its reasoner answers (audio parts for audio LMs, text for text LMs; see
:class:`~memgym.memory.voxmem.base.VoxMemMemory`).
"""
