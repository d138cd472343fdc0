"""Imports run one way (DESIGN.md): inside each package no module imports (even lazily) one that
imports it back, and across packages only down the layers: `eval` imports none of the others,
`exploretom` and `tomsynth` import only `eval`, `rl` may import all three; inside `exploretom`,
its folders import only down their layers (semantics at the bottom).

The graph is read from the source with `ast` (every `import`, including those inside functions),
so a cycle or a back-arrow hidden behind a function-level import is caught too. Modules of
subpackages are named by their dotted path inside the package (`contexts.command`; the package
itself is `contexts`).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("eval", "exploretom", "tomsynth", "rl")
# what each package may import of the others
ALLOWED = {"eval": set(), "exploretom": {"eval"}, "tomsynth": {"eval"},
           "rl": {"eval", "exploretom", "tomsynth"}}
PACKAGE = "exploretom"
ROOT = REPO / PACKAGE


def imported_modules(source: str, modules: set[str], package: str = PACKAGE) -> set[str]:
    """The modules of the package that `source` imports (`from exploretom import x` counts as x,
    `exploretom.x.y.name` as the longest of `x.y`, `x` that is a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] != package:
                continue
            for end in range(len(parts), 1, -1):
                if ".".join(parts[1:end]) in modules:
                    found.add(".".join(parts[1:end]))
                    break
    return found


def import_graph(root: Path = ROOT, package: str | None = None) -> dict[str, set[str]]:
    package = package or (root.name if root.name in PACKAGES else PACKAGE)
    paths = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        if name not in ("__init__", "__main__"):
            paths[name.removesuffix(".__init__")] = path
    return {m: imported_modules(p.read_text(), set(paths), package) - {m} for m, p in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path that ends where it starts, or None (depth-first search with colours)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_in_a_package(package):
    cycle = find_cycle(import_graph(REPO / package))
    assert cycle is None, f"import cycle in {package}: " + " -> ".join(cycle)


def imported_packages(path: Path) -> set[str]:
    """The project's packages a source file imports (lazily or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_run_down_the_layers(package):
    wrong = {str(p.relative_to(REPO)): sorted(imported_packages(p) - ALLOWED[package] - {package})
             for p in (REPO / package).rglob("*.py")}
    wrong = {k: v for k, v in wrong.items() if v}
    assert not wrong, f"{package} may import only {sorted(ALLOWED[package]) or 'none of the others'}: {wrong}"


def test_the_command_line_is_imported_by_no_stage():
    graph = import_graph()
    assert "cli" in graph["cli"] | {"cli"}  # the module exists under that name
    assert sorted(m for m, deps in graph.items() if "cli" in deps) == []
    # it does reach the stages it dispatches to
    assert {"cli_args", "infill.command", "contexts.command", "contexts.records", "search.run",
            "search.bench", "datasets.export", "report.command"} <= graph["cli"]


def test_cycle_finder_sees_lazy_and_package_style_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from exploretom.b import g\n")
    (tmp_path / "b.py").write_text("from exploretom import c\n")
    (tmp_path / "c.py").write_text("import exploretom.a\n")
    (tmp_path / "d.py").write_text("from exploretom.a import f\nimport os\n")
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "d": {"a", "b"}}) is None


def test_cycle_finder_sees_imports_inside_subpackages(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""A package."""\n')
    (tmp_path / "pkg" / "run.py").write_text("from exploretom.pkg.steps import plan\n")
    (tmp_path / "pkg" / "steps.py").write_text("from exploretom import a\n")
    (tmp_path / "a.py").write_text("def f():\n    from exploretom.pkg import run\n")
    graph = import_graph(tmp_path)
    assert graph == {"pkg": set(), "pkg.run": {"pkg.steps"}, "pkg.steps": {"a"},
                     "a": {"pkg", "pkg.run"}}
    assert find_cycle(graph) == ["a", "pkg.run", "pkg.steps", "a"]
    assert import_graph()["contexts.command"]  # the real package's subpackages are read too


# exploretom's folders, bottom first (docs/DESIGN.md draws them): a module imports its own folder
# and the layers below it, never above; the entry points at its top level import anything and
# nothing imports them. Its top level holds those entry points, `cli_args` and the folders.
EXPLORETOM_LAYERS = (("semantics",), ("sampling",), ("cli_args", "llm"), ("datasets", "search"),
                     ("contexts", "infill", "report"))
EXPLORETOM_ENTRY_POINTS = {"cli", "bench", "bench_target", "search_floor"}


def layer_errors(graph: dict[str, set[str]]) -> list[str]:
    """Each import of `graph` that goes up or sideways between exploretom's layers, or to an entry
    point."""
    layer = {name: i for i, names in enumerate(EXPLORETOM_LAYERS) for name in names}
    wrong = []
    for module, deps in graph.items():
        top = module.split(".")[0]
        for dep in deps:
            to = dep.split(".")[0]
            if to in EXPLORETOM_ENTRY_POINTS:
                wrong.append(f"{module} imports the entry point {dep}")
            elif top not in EXPLORETOM_ENTRY_POINTS and to != top and layer[to] >= layer[top]:
                wrong.append(f"{module} imports {dep}, a layer not below its own")
    return sorted(wrong)


def test_exploretom_folders_import_down_the_layers():
    graph = import_graph()
    assert layer_errors(graph) == []
    layers = {name for names in EXPLORETOM_LAYERS for name in names}
    modules = {m.split(".")[0] for m in graph}
    assert modules <= layers | EXPLORETOM_ENTRY_POINTS, \
        f"exploretom modules in no layer: {sorted(modules - layers - EXPLORETOM_ENTRY_POINTS)}"
    loose = sorted(p.stem for p in ROOT.glob("*.py"))
    assert loose == sorted({"__init__", "__main__", "cli_args", *EXPLORETOM_ENTRY_POINTS}), loose


def test_layer_errors_sees_an_import_up_sideways_or_of_an_entry_point():
    graph = {"semantics.story": {"search.run"}, "search.run": {"datasets.rows", "semantics.story"},
             "datasets.rows": {"search_floor"}, "cli": {"report.command"}}
    assert layer_errors(graph) == ["datasets.rows imports the entry point search_floor",
                                   "search.run imports datasets.rows, a layer not below its own",
                                   "semantics.story imports search.run, a layer not below its own"]
