"""Run the ``>>>`` examples of a module (its docstrings, recursively) as the tests of its manual."""

from __future__ import annotations

import doctest
import importlib
import io


def failed_examples(module_name: str) -> tuple[int, str]:
    """``(failures, report)`` of every example in ``module_name`` (ellipsis, whitespace-blind)."""
    module = importlib.import_module(module_name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = io.StringIO()
    for test in doctest.DocTestFinder().find(module, module_name):
        runner.run(test, out=report.write)
    return runner.failures, report.getvalue()
