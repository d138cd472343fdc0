"""The benchmarks, found by their modules: every module of this package whose name does not start
with an underscore (but `base`) defines `BENCHMARK`, named as the module. Adding a benchmark is
adding its module (and its test); `BENCHMARKS` lists them in table order (category, then rank).
The modules are looked for in the package's folders (`__path__`, eval.registry).
"""
from __future__ import annotations

import importlib

from eval.benchmarks.base import CATEGORIES, Benchmark, BenchmarkFormatError
from eval.registry import module_names

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkFormatError", "UnknownBenchmark", "discover",
           "get_benchmark"]


class UnknownBenchmark(KeyError):
    """A benchmark name that is not in BENCHMARKS; str() is the one-line message."""

    def __str__(self) -> str:
        return str(self.args[0])


def _discover() -> tuple[dict[str, str], dict[str, str]]:
    """{name: module} in table order, and {name: why it cannot load} for modules whose optional
    dependencies are missing."""
    found: dict[str, Benchmark] = {}
    broken: dict[str, str] = {}
    for name in module_names(__path__, skip=("base",)):
        try:
            found[name] = importlib.import_module(f"{__name__}.{name}").BENCHMARK
        except ImportError as e:
            broken[name] = f"its module needs {e.name}, which is not installed"
    order = sorted(found, key=lambda n: (CATEGORIES.index(found[n].category)
                                         if found[n].category in CATEGORIES else len(CATEGORIES),
                                         found[n].rank, n))
    return {n: f"{__name__}.{n}" for n in order}, broken


BENCHMARKS: dict[str, str] = {}  # name -> its module, in table order
_UNAVAILABLE: dict[str, str] = {}  # name -> why its module cannot load


def discover() -> None:
    """Fill `BENCHMARKS` from the modules in the package's folders, in place, so that every
    module that imported it sees a folder added to `__path__` after the import."""
    found, broken = _discover()
    BENCHMARKS.clear()
    BENCHMARKS.update(found)
    _UNAVAILABLE.clear()
    _UNAVAILABLE.update(broken)


discover()


def get_benchmark(name: str) -> Benchmark:
    """The `BENCHMARK` of the module named `name`."""
    if name in _UNAVAILABLE:
        raise UnknownBenchmark(f"benchmark {name!r}: {_UNAVAILABLE[name]}")
    if name not in BENCHMARKS:
        raise UnknownBenchmark(f"unknown benchmark {name!r}; choose from: {', '.join(BENCHMARKS)}")
    return importlib.import_module(BENCHMARKS[name]).BENCHMARK
