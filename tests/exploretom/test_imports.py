"""Imports inside `exploretom/` run one way: no module imports (even lazily) one importing it back.

The graph is read from the source with `ast` (every `import`, including those inside functions),
so a cycle hidden behind a function-level import is caught too.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "exploretom"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE


def imported_modules(source: str, modules: set[str]) -> set[str]:
    """The modules of the package that `source` imports (`from exploretom import x` counts as x)."""
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
            if parts[0] == PACKAGE and len(parts) > 1 and parts[1] in modules:
                found.add(parts[1])
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = {p.stem for p in root.glob("*.py")} - {"__init__", "__main__"}
    return {m: imported_modules((root / f"{m}.py").read_text(), modules) - {m} for m in modules}


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


def test_no_import_cycle_in_exploretom():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_command_line_is_imported_by_no_stage():
    graph = import_graph()
    assert "cli" in graph["cli"] | {"cli"}  # the module exists under that name
    assert sorted(m for m, deps in graph.items() if "cli" in deps) == []
    # it does reach the stages it dispatches to
    assert {"cli_args", "infill", "llm_context", "search_run", "export", "report"} <= graph["cli"]


def test_cycle_finder_sees_lazy_and_package_style_imports(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    from exploretom.b import g\n")
    (tmp_path / "b.py").write_text("from exploretom import c\n")
    (tmp_path / "c.py").write_text("import exploretom.a\n")
    (tmp_path / "d.py").write_text("from exploretom.a import f\nimport os\n")
    graph = import_graph(tmp_path)
    assert graph == {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "d": {"a", "b"}}) is None
