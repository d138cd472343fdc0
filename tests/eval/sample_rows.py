"""Where the tests read each benchmark's rows: its sample in the shared folder, or, for a benchmark
whose module says the shared folder holds none (`Benchmark.shared_sample`: SimpleToM's data is
only on the hub, ExploreToM is our own data), its fixture in its release layout,
tests/eval/fixtures/<name>. A new benchmark needs no entry here: its module says which."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.benchmarks.base import Benchmark, Row

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def sample_path(bench: Benchmark) -> Path:
    return bench.default_path() if bench.shared_sample else FIXTURES / bench.name


def sample_rows(bench: Benchmark, **options: Any) -> list[Row]:
    """The rows of `bench`'s sample (`options`: its loader's)."""
    return bench.load_rows(sample_path(bench), **options)
