"""The benchmarks, found by their modules: every module of this package whose name does not start
with an underscore (but `base`) defines `BENCHMARK`, named as the module. Adding a benchmark is
adding its module (and its test); `BENCHMARKS` lists them in table order (category, then rank).
"""
from __future__ import annotations

import importlib
from pathlib import Path

from eval.benchmarks.base import CATEGORIES, Benchmark, BenchmarkFormatError

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkFormatError", "UnknownBenchmark", "get_benchmark"]

_HERE = Path(__file__).resolve().parent


class UnknownBenchmark(KeyError):
    """A benchmark name that is not in BENCHMARKS; str() is the one-line message."""

    def __str__(self) -> str:
        return str(self.args[0])


def _discover() -> tuple[dict[str, str], dict[str, str]]:
    """{name: module} in table order, and {name: why it cannot load} for modules whose optional
    dependencies are missing."""
    found: dict[str, Benchmark] = {}
    broken: dict[str, str] = {}
    for path in sorted(_HERE.glob("*.py")):
        name = path.stem
        if name.startswith("_") or name == "base":
            continue
        try:
            found[name] = importlib.import_module(f"eval.benchmarks.{name}").BENCHMARK
        except ImportError as e:
            broken[name] = f"its module needs {e.name}, which is not installed"
    order = sorted(found, key=lambda n: (CATEGORIES.index(found[n].category)
                                         if found[n].category in CATEGORIES else len(CATEGORIES),
                                         found[n].rank, n))
    return {n: f"eval.benchmarks.{n}" for n in order}, broken


BENCHMARKS, _UNAVAILABLE = _discover()


def get_benchmark(name: str) -> Benchmark:
    """The `BENCHMARK` of the module named `name`."""
    if name in _UNAVAILABLE:
        raise UnknownBenchmark(f"benchmark {name!r}: {_UNAVAILABLE[name]}")
    if name not in BENCHMARKS:
        raise UnknownBenchmark(f"unknown benchmark {name!r}; choose from: {', '.join(BENCHMARKS)}")
    return importlib.import_module(BENCHMARKS[name]).BENCHMARK
