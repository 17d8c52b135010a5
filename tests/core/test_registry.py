import importlib
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import memgym
from memgym.cli import main
from memgym.core.errors import PluginImportError, RegistryError
from memgym.core.loading import OPTIONAL_PACKAGES
from memgym.core.protocols import Memory, Scorer
from memgym.core.records import record_class
from memgym.core.registry import ALL_REGISTRIES, LINKERS, MEMORIES, SCORERS, Registry
from memgym.plugin_table import BASES, BUILTIN_RECORD_KINDS, BUILTINS, MEMORY_READS


class Base:
    pass


def test_register_and_get():
    registry: Registry = Registry("widget", Base)

    @registry.register("a")
    class A(Base):
        pass

    assert registry.get("a") is A
    assert registry.names() == ["a"]
    assert "a" in registry
    assert A.registered_name == "a"


def test_register_wrong_type_is_a_type_error():
    registry: Registry = Registry("widget", Base)
    with pytest.raises(TypeError, match="expects a subclass of Base"):
        registry.register("x")(int)


def test_a_base_declared_by_target_is_imported_on_first_use_and_kept():
    registry: Registry = Registry("widget")
    with pytest.raises(RegistryError, match="the widget registry has no base class declared"):
        registry.register("x")(Base)
    registry.declare_base(f"{__name__}:Base")
    registry.declare_base(f"{__name__}:Base")
    registry.register("a")(type("A", (Base,), {}))
    assert registry.base is Base
    with pytest.raises(RegistryError, match="already declared as"):
        registry.declare_base("memgym.core.protocols:Memory")


def test_the_plugin_table_gives_every_registry_its_base_and_the_registry_names_no_module_of_a_kind():
    assert {registry.kind: registry._base_target for registry in ALL_REGISTRIES} == BASES
    source = Path(importlib.import_module("memgym.core.registry").__file__).read_text(encoding="utf-8")
    assert not re.search(r"memgym\.(memory|tasks|envs|backends|pipelines|scenes)\.", source)
    assert LINKERS.base.__name__ == "Linker" and LINKERS.base.__module__ == "memgym.memory.embodied.linking"


def test_two_classes_under_one_name_are_refused():
    registry: Registry = Registry("widget", Base)
    registry.register("a")(type("A", (Base,), {}))
    with pytest.raises(TypeError, match="already registered"):
        registry.register("a")(type("B", (Base,), {}))


def test_unknown_name_lists_registered_names():
    with pytest.raises(RegistryError, match=r"unknown scorer 'nope'; registered: .*exact_match"):
        SCORERS.get("nope")


def test_memory_registry_refuses_a_scorer():
    with pytest.raises(TypeError, match="subclass of Memory"):
        MEMORIES.register("not-a-memory")(type("S", (Scorer,), {"score": lambda self, i, p: {}}))
    assert issubclass(MEMORIES.base, Memory)


# --- names point at "module:attr"; the table and the decorators agree --------------------------------

REGISTERED = re.compile(r"@register_(\w+)\(\"([^\"]+)\"\)\s*\nclass (\w+)")
RECORDED = re.compile(r"@record\(\"([^\"]+)\"\)\s*\n(?:@[^\n]*\n)*class (\w+)")


def _decorated(pattern: re.Pattern) -> list[tuple[str, ...]]:
    """Every decorator use in memgym's sources: match groups + the module it is in."""
    root = Path(memgym.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        found += [(*match, module) for match in pattern.findall(path.read_text())]
    return found


def test_every_table_entry_is_the_class_its_module_registers_under_that_name():
    for registry in ALL_REGISTRIES:
        for name, target in BUILTINS[registry.kind].items():
            module, attr = target.split(":")
            cls = getattr(importlib.import_module(module), attr)
            assert registry.get(name) is cls, f"{registry.kind} '{name}'"
            assert cls.registered_name == name
    for kind, target in BUILTIN_RECORD_KINDS.items():
        module, attr = target.split(":")
        assert record_class(kind) is getattr(importlib.import_module(module), attr)


def test_the_reads_column_is_what_each_memory_class_reads():
    from memgym.core.protocols import READS
    from memgym.memory import memories_reading

    for name, reads in MEMORY_READS.items():
        assert MEMORIES.get(name).reads == reads, name
        assert reads and reads <= set(READS), (name, reads - set(READS))
    assert memories_reading({"audio"}) == sorted(n for n, r in MEMORY_READS.items() if r == {"audio"})


def test_every_decorated_class_is_in_the_table():
    from memgym.memory.recurrent.core_memory import CORE_MEMORIES  # registered in a loop, not by a decorator

    found: dict[str, dict[str, str]] = {kind: {} for kind in BUILTINS}
    for kind, name, cls, module in _decorated(REGISTERED):
        found[kind][name] = f"{module}:{cls}"
    found["memory"].update({core: f"{cls.__module__}:{cls.__name__}" for core, cls in CORE_MEMORIES.items()})
    assert found == BUILTINS
    recorded = _decorated(RECORDED)
    assert len(recorded) == len(BUILTIN_RECORD_KINDS)
    for kind, cls, module in recorded:
        assert BUILTIN_RECORD_KINDS[kind] == f"{module}:{cls}", f"@record('{kind}') in {module}"


def test_core_memories_are_module_attributes_and_pickle_by_reference():
    from memgym.memory.recurrent import core_memory

    cls = MEMORIES.get("no_erase")
    assert core_memory.NoEraseMemory is cls and cls.__module__ == core_memory.__name__
    assert pickle.loads(pickle.dumps(cls)) is cls
    with pytest.raises(AttributeError):
        core_memory.NoSuchMemory  # noqa: B018


def test_optional_packages_name_the_extras_of_pyproject():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    extras = tomllib.loads((Path(memgym.__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for package, (dist, extra) in OPTIONAL_PACKAGES.items():
        listed = [re.split(r"[<>=;\[ ]", req)[0] for req in extras[extra]]
        assert dist in listed, f"{package}: {dist} is not in the '{extra}' extra"


def test_a_malformed_target_is_refused():
    registry: Registry = Registry("widget", Base)
    with pytest.raises(PluginImportError, match="expected 'module:attr'"):
        registry.declare("a", "no_colon_here")


def test_a_decorator_must_agree_with_the_declared_target():
    registry: Registry = Registry("widget", Base)
    registry.declare("a", f"{__name__}:Declared")
    with pytest.raises(TypeError, match=r"@register_widget\('a'\) on .*:Other, but 'a' is declared at .*:Declared"):
        registry.register("a")(type("Other", (Base,), {"__module__": __name__}))


def test_a_table_entry_its_module_does_not_register_is_an_error(monkeypatch):
    monkeypatch.setitem(SCORERS._declared, "drifted", "memgym.tasks.text_match:ExactMatchScorer")
    with pytest.raises(RegistryError, match=r"did not register 'drifted'.*@register_scorer\('drifted'\)"):
        SCORERS.get("drifted")


# --- import on first use; failures leave nothing half registered ---------------------------------------

HALF_PLUGIN = """
from memgym.core.protocols import Memory, Scorer
from memgym.core.registry import register_scorer


@register_scorer("half_scorer")
class HalfScorer(Scorer):
    def score(self, item, prediction):
        return {"ok": 1.0}


import gguf  # an optional extra that is "not installed" in the test
"""


def test_a_missing_extra_is_one_error_and_leaves_no_half_registered_class(tmp_path, monkeypatch, capsys):
    (tmp_path / "half_plugin.py").write_text(HALF_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "gguf", None)  # import gguf -> ModuleNotFoundError
    monkeypatch.setitem(MEMORIES._declared, "half", "half_plugin:HalfMemory")
    for _ in range(2):  # the second try fails the same way (no "already registered" TypeError)
        with pytest.raises(PluginImportError) as failure:
            MEMORIES.get("half")
        assert str(failure.value) == (
            "memory 'half' needs the optional package gguf, which is not installed: pip install 'memgym[models]'"
        )
        assert "half_scorer" not in SCORERS.names() and "half_plugin" not in sys.modules
    assert "half" in MEMORIES  # still listed: the name is known, its extra is missing
    assert MEMORIES.get("dialogue").registered_name == "dialogue"  # other names keep working
    assert main(["list", "--describe"]) == 0
    out = capsys.readouterr().out
    assert "  half                         unavailable: memory 'half' needs the optional package gguf" in out
    assert "  exact_match                  1.0 when the normalised prediction equals" in out


def test_a_broken_dependency_of_a_plugin_names_it(tmp_path, monkeypatch):
    (tmp_path / "broken_plugin.py").write_text("import no_such_package_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(SCORERS._declared, "broken", "broken_plugin:Broken")
    with pytest.raises(
        PluginImportError,
        match=r"scorer 'broken' cannot be imported from 'broken_plugin:Broken': No module named 'no_such_package_anywhere'",
    ):
        SCORERS.get("broken")


NO_EXTRAS = """
import sys
for package in {packages!r}:
    sys.modules[package] = None  # as if the optional extras were not installed
from memgym.cli import main
from memgym.core.errors import PluginImportError
from memgym.core.registry import MEMORIES, SCORERS
assert main(["list"]) == 0
print("IMPORTED", sorted(m for m in sys.modules if m.startswith("memgym.") or m == "torch"))
for _ in range(2):
    try:
        MEMORIES.get("3dmem")
    except PluginImportError as exc:
        print("ERROR", exc)
print("SCORER", SCORERS.get("exact_match").__name__)
"""


def test_list_imports_no_plugin_and_works_without_the_optional_extras():
    script = NO_EXTRAS.format(packages=sorted(OPTIONAL_PACKAGES))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "  3dmem                        memgym.memory.embodied.snapshots:SnapshotMemory" in out
    imported = eval(next(line for line in out.splitlines() if line.startswith("IMPORTED"))[len("IMPORTED ") :])
    assert "torch" not in imported
    assert {m.split(".")[1] for m in imported} <= {"core", "cli", "envs", "plugin_table"}, imported
    assert "memgym.envs.registration" in imported and len([m for m in imported if m.startswith("memgym.envs")]) == 2
    errors = [line for line in out.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 2 and errors[0] == errors[1], errors  # the same clear error both times
    assert re.fullmatch(
        r"ERROR memory '3dmem' needs the optional package (open3d-cpu|numba), which is not installed: "
        r"pip install 'memgym\[embodied\]'",
        errors[0],
    ), errors[0]
    assert "SCORER ExactMatchScorer" in out


# --- third-party plugins through entry points -----------------------------------------------------------


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory) -> Path:
    """tests/support/plugin_package pip-installed (no deps, offline) into a fresh folder."""
    source = tmp_path_factory.mktemp("plugin_src") / "plugin_package"
    shutil.copytree(Path(__file__).parents[1] / "support" / "plugin_package", source)
    target = tmp_path_factory.mktemp("plugin_site")
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    subprocess.run([*pip, "--target", str(target), str(source)], check=True, capture_output=True)
    return target


@pytest.fixture
def forget_new_entries():
    """Drop whatever the test registered in the global registries."""
    before = {registry.kind: set(registry._entries) for registry in ALL_REGISTRIES}
    yield
    for registry in ALL_REGISTRIES:
        for name in set(registry._entries) - before[registry.kind]:
            del registry._entries[name]


def test_an_installed_plugin_adds_a_memory(installed_plugin, monkeypatch, capsys, forget_new_entries):
    assert "keyword_notes" not in MEMORIES
    monkeypatch.syspath_prepend(str(installed_plugin))
    assert "keyword_notes" in MEMORIES.names() and "memgym_keyword_notes" not in sys.modules
    assert main(["list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  keyword_notes "))
    assert line == "  keyword_notes                memgym_keyword_notes:KeywordNotesMemory  [memgym-keyword-notes]"
    assert "memgym_keyword_notes" not in sys.modules  # what a plugin reads is shown only when imported
    from memgym.cli import _memory_reads  # the reads column of `memgym list --describe`

    assert _memory_reads("keyword_notes", describe=False) is None
    assert _memory_reads("keyword_notes", describe=True) == []  # it declares no reads
    memory = MEMORIES.get("keyword_notes")(top_k=1)
    assert memory.registered_name == "keyword_notes" and isinstance(memory, Memory)
    for note in ["the red mug is in the kitchen", "the keys are on the shelf", "a blue mug sits in the hall"]:
        memory.observe(note)
    assert memory.retrieve("the blue mug") == ["a blue mug sits in the hall"]


def _fake_dist(folder: Path, entry_points: str) -> None:
    info = folder / "fake_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(entry_points)
    (folder / "fake_plugin.py").write_text("class NotAMemory:\n    pass\n")


def test_a_plugin_entry_point_that_is_not_a_memory_is_refused(tmp_path, monkeypatch, forget_new_entries):
    _fake_dist(tmp_path, "[memgym.memories]\nfake = fake_plugin:NotAMemory\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert MEMORIES.locate("fake") == ("fake_plugin:NotAMemory", "fake-plugin")
    with pytest.raises(
        RegistryError, match="memory 'fake' points at 'fake_plugin:NotAMemory', which is not a subclass of Memory"
    ):
        MEMORIES.get("fake")


def test_a_plugin_cannot_take_a_builtin_name(tmp_path, monkeypatch):
    _fake_dist(tmp_path, "[memgym.scorers]\nexact_match = fake_plugin:NotAMemory\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.warns(
        UserWarning, match=r"scorer 'exact_match' from entry point fake_plugin:NotAMemory \(fake-plugin\) is ignored"
    ):
        assert SCORERS.names().count("exact_match") == 1
    assert SCORERS.locate("exact_match") == ("memgym.tasks.text_match:ExactMatchScorer", "memgym")
    assert SCORERS.get("exact_match").__name__ == "ExactMatchScorer"
