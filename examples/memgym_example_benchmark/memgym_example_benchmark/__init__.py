"""Digits, a memgym benchmark in a plugin package (docs/plugins.md, "A new benchmark").

Formation says a list of digits, one per step; use asks for the digit at a position. Files:
``env.py`` (the two-phase env and its episodes), ``memory.py`` (a memory that keeps the last
``span`` digits), ``benchmark.py`` (the benchmark: its :class:`~memgym.core.benchmark.BenchmarkInfo`,
``memgym generate digits`` and ``memgym eval digits``, run by memgym's one evaluation driver).
"""
