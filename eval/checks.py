"""Checks of a reply beyond its answer, owned by the packages above eval.

A benchmark names its checks (`Benchmark.checks`, e.g. the exploretom benchmark's `derived`:
right with a reasoning trace the story supports). A check is a function (per-sample record) ->
bool | None (None: the check does not apply to that row), declared by the package that owns it as
a `tomrl.checks` entry point in pyproject.toml. eval finds it by that name because it imports
none of the packages above it (docs/DESIGN.md): the entry point is how a package above supplies
code that eval runs.
"""
from __future__ import annotations

import sys
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Callable

GROUP = "tomrl.checks"

Check = Callable[[dict[str, Any]], "bool | None"]


@cache
def load_check(name: str) -> Check | None:
    """The check declared as `name`, or None (said once on stderr) when no installed package
    declares it: the project installed without `pip install -e .`, say."""
    found = entry_points(group=GROUP, name=name)
    if not found:
        print(f"warning: no '{name}' in the {GROUP} entry points (is the project installed with "
              f"pip install -e .?): the {name} share is not reported", file=sys.stderr)
        return None
    return next(iter(found)).load()


def run_checks(names: tuple[str, ...], record: dict[str, Any]) -> dict[str, bool]:
    """The verdicts of the checks that apply to `record`, by name."""
    out = {}
    for name in names:
        check = load_check(name)
        verdict = check(record) if check is not None else None
        if verdict is not None:
            out[name] = bool(verdict)
    return out


def check_shares(names: tuple[str, ...], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per check, the share of the records it applies to that pass (`name`) and their count
    (`n_name`); a check that applies to none is left out."""
    out: dict[str, Any] = {}
    for name in names:
        verdicts = [bool(r[name]) for r in records if r.get(name) is not None]
        if verdicts:
            out[name] = sum(verdicts) / len(verdicts)
            out[f"n_{name}"] = len(verdicts)
    return out
