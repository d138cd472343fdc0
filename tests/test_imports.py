"""Imports run one way (DESIGN.md): inside each package no module imports (even lazily) one that
imports it back, and across packages only down the layers: `eval` imports none of the others,
`exploretom` and `tomsynth` import only `eval`, `rl` may import all three.

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
