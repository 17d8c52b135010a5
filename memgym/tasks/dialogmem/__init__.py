"""DialogMem's scorers: ``navigation`` (geodesic success, execution success, SPL) on the geodesic
measures of :mod:`~memgym.tasks.dialogmem.geodesic`; QA is scored by the shared text scorers
(:mod:`memgym.tasks.text_match`, :mod:`memgym.tasks.llm_match`)."""
