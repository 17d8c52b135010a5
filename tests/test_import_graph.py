"""No import circles in ``memgym/``: every ``import`` statement of a module (at the top, under
``TYPE_CHECKING`` or inside a function) is an arrow to the memgym module it names, and no chain of
arrows leads back to where it started. A circle hidden behind a ``TYPE_CHECKING`` or
function-level import counts: the fix is a lower module holding what both sides need.

An import of ``memgym.a.b`` is an arrow to ``memgym.a.b`` (the package ``memgym.a`` it runs first is
not counted, as it would put every package's ``__init__`` in a circle with what it re-exports);
``from memgym.a import b`` is an arrow to the module ``memgym.a.b`` when there is one, else to
``memgym.a``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "memgym"


def module_files(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package`` (a package is its ``__init__``)."""
    files = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports anywhere in its source (module docstring)."""
    files = module_files(package)
    root = package.name

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in files.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {known(a.name) for a in node.names if a.name.split(".")[0] == root}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                if base.split(".")[0] == root:
                    targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in files else known(base) for a in node.names}
        graph[name] = targets - {name, None}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each sorted), by Tarjan's algorithm
    written without recursion."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_memgym_has_no_import_circles():
    graph = import_graph(PACKAGE)
    assert len(graph) > 200 and sum(map(len, graph.values())) > 500, "the walk found too few modules or imports"
    assert circles(graph) == [], "import circles (move what both sides need into a lower module)"


def test_a_circle_behind_type_checking_or_a_function_import_is_found(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub.b import B\n")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from ..c import C\n\nB = 1\n")
    (package / "c.py").write_text("import pkg.a\nC = 1\n")
    (package / "d.py").write_text("from pkg import a, c\n")
    graph = import_graph(package)
    assert graph["pkg.sub.b"] == {"pkg.c"} and graph["pkg.d"] == {"pkg.a", "pkg.c"}
    assert circles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (package / "c.py").write_text("C = 1\n")
    assert circles(import_graph(package)) == []
