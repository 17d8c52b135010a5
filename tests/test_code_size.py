"""Size limits of the package's code: no module under ``memgym/`` over 500 lines, no function
(or method) over 60 lines and none of cyclomatic complexity over 20 (radon, as ``make complexity``
reports it), unless listed below with the reason it is allowed to be longer.

A function's length runs from its ``def`` line to its last line (decorators not counted,
docstring counted). An entry that is no longer over its limit fails too, so the list only
shrinks: remove the entry when the code is split.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memgym"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

LONG_MODULES: dict[str, str] = {}
"""Module (relative to ``memgym/``) -> why it may exceed :data:`MAX_MODULE_LINES`."""

LONG_FUNCTIONS: dict[str, str] = {
    "datasets/amemops/generator.py:StreamGenerator._assemble": "writes a stream's events, items and labels in the fixed draw order",
    "datasets/amemops/generator.py:StreamGenerator._plan": "every random draw of a stream in one fixed order (saved datasets depend on it)",
    "datasets/dialogmem/episode.py:build_episode": "every random draw of an episode in one fixed order (pinned dataset hashes depend on it)",
}
"""``path:qualified name`` (relative to ``memgym/``) -> why it may exceed :data:`MAX_FUNCTION_LINES`."""


MAX_COMPLEXITY = 20
COMPLEX_FUNCTIONS: dict[str, str] = {}
"""``path:qualified name`` (relative to ``memgym/``) -> why its cyclomatic complexity may exceed
:data:`MAX_COMPLEXITY`."""


def _complexities(package: Path = PACKAGE) -> dict[str, int]:
    """Radon's cyclomatic complexity of every function and method (``path:Class.method``; nested
    functions as radon names them) under ``package``."""
    from radon.complexity import cc_visit

    found = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if hasattr(block, "classname"):  # a function or method (classes are scored by their methods)
                qualified = f"{block.classname}.{block.name}" if block.classname else block.name
                found[f"{name}:{qualified}"] = block.complexity
    return found


def _sizes(package: Path = PACKAGE) -> tuple[dict[str, int], dict[str, int]]:
    """Lines of every module and of every function (``path:Class.method``) under ``package``."""
    modules, functions = {}, {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        source = path.read_text(encoding="utf-8")
        modules[name] = len(source.splitlines())
        stack: list[tuple[ast.AST, str]] = [(ast.parse(source), "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    qualified = prefix + child.name
                    if not isinstance(child, ast.ClassDef):
                        functions[f"{name}:{qualified}"] = child.end_lineno - child.lineno + 1
                    stack.append((child, qualified + "."))
    return modules, functions


@pytest.fixture(scope="module")
def sizes() -> tuple[dict[str, int], dict[str, int]]:
    return _sizes()


def test_modules_stay_under_the_limit_unless_listed_with_a_reason(sizes):
    modules, _ = sizes
    too_long = {name: n for name, n in modules.items() if n > MAX_MODULE_LINES and name not in LONG_MODULES}
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines (split them, or list them with a reason): {too_long}"


def test_functions_stay_under_the_limit_unless_listed_with_a_reason(sizes):
    _, functions = sizes
    too_long = {name: n for name, n in functions.items() if n > MAX_FUNCTION_LINES and name not in LONG_FUNCTIONS}
    assert not too_long, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them, or list them with a reason): {too_long}"
    )


@pytest.fixture(scope="module")
def complexities() -> dict[str, int]:
    pytest.importorskip("radon", reason="radon (the test extra) measures cyclomatic complexity")
    return _complexities()


def test_functions_stay_under_the_complexity_limit_unless_listed_with_a_reason(complexities):
    too_complex = {n: c for n, c in complexities.items() if c > MAX_COMPLEXITY and n not in COMPLEX_FUNCTIONS}
    assert not too_complex, (
        f"functions of cyclomatic complexity over {MAX_COMPLEXITY} (split them into named helpers, or list them "
        f"with a reason): {too_complex}"
    )


def test_the_complexity_measure_scores_branches(tmp_path):
    pytest.importorskip("radon", reason="radon (the test extra) measures cyclomatic complexity")
    (tmp_path / "m.py").write_text(
        "def f(x):\n    if x:\n        return 1\n    return 2\n\n"
        "class C:\n    def method(self, xs):\n        return [x for x in xs if x and x > 1]\n"
    )
    assert _complexities(tmp_path) == {"m.py:f": 2, "m.py:C.method": 4}


def test_every_listed_exception_is_still_needed_and_has_a_reason(sizes):
    modules, functions = sizes
    stale = [name for name in LONG_MODULES if modules.get(name, 0) <= MAX_MODULE_LINES]
    stale += [name for name in LONG_FUNCTIONS if functions.get(name, 0) <= MAX_FUNCTION_LINES]
    if COMPLEX_FUNCTIONS:
        pytest.importorskip("radon", reason="radon (the test extra) measures cyclomatic complexity")
        complexity = _complexities()
        stale += [name for name in COMPLEX_FUNCTIONS if complexity.get(name, 0) <= MAX_COMPLEXITY]
    assert not stale, f"listed but within the limits (or gone): remove these entries: {stale}"
    reasons = {**LONG_MODULES, **LONG_FUNCTIONS, **COMPLEX_FUNCTIONS}
    assert all(len(reason.split()) >= 3 for reason in reasons.values()), "every entry needs a written reason"


def test_the_measure_counts_def_to_last_line_and_nested_functions(tmp_path):
    (tmp_path / "m.py").write_text(
        "@decorator\ndef f():\n    def inner():\n        return 1\n    return inner\n\n"
        "class C:\n    def method(self):\n        pass\n"
    )
    modules, functions = _sizes(tmp_path)
    assert modules == {"m.py": 9}
    assert functions == {"m.py:f": 4, "m.py:f.inner": 2, "m.py:C.method": 2}
