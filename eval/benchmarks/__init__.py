"""The benchmarks, by name. Each module defines `BENCHMARK` and is imported only when used."""
from __future__ import annotations

import importlib

from eval.benchmarks.base import Benchmark, BenchmarkFormatError

__all__ = ["BENCHMARKS", "Benchmark", "BenchmarkFormatError", "UnknownBenchmark", "get_benchmark"]

BENCHMARKS = {
    # Theory of Mind
    "tomi": "eval.benchmarks.tomi",
    "hitom": "eval.benchmarks.hitom",
    "tombench": "eval.benchmarks.tombench",
    "simpletom": "eval.benchmarks.simpletom",
    "tomato": "eval.benchmarks.tomato",
    "opentom": "eval.benchmarks.opentom",
    "opentom_long": "eval.benchmarks.opentom_long",
    "bigtom": "eval.benchmarks.bigtom",
    "fantom": "eval.benchmarks.fantom",
    "exploretom": "eval.benchmarks.exploretom",
    # emotional intelligence and social commonsense
    "emobench": "eval.benchmarks.emobench",
    "socialiqa": "eval.benchmarks.socialiqa",
    # IQ
    "aime2025": "eval.benchmarks.aime2025",
    "gpqa_diamond": "eval.benchmarks.gpqa_diamond",
    "agieval": "eval.benchmarks.agieval",
}


class UnknownBenchmark(KeyError):
    """A benchmark name that is not in BENCHMARKS; str() is the one-line message."""

    def __str__(self) -> str:
        return str(self.args[0])


def get_benchmark(name: str) -> Benchmark:
    """The `BENCHMARK` of the module registered under `name`."""
    if name not in BENCHMARKS:
        raise UnknownBenchmark(f"unknown benchmark {name!r}; choose from: {', '.join(BENCHMARKS)}")
    try:
        module = importlib.import_module(BENCHMARKS[name])
    except ModuleNotFoundError as e:
        if e.name != BENCHMARKS[name]:
            raise
        raise UnknownBenchmark(f"benchmark {name!r}: its module {e.name} is not installed") from None
    return module.BENCHMARK
