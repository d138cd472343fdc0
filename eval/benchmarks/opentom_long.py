"""OpenToM-L: OpenToM's questions over the long versions of the narratives that have one
(`meta_data_long.json`, `metadata_long.json` on the hub), scored exactly as OpenToM. A benchmark
of its own so that the CLI and suites can name it (`opentom_long`)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from eval.benchmarks import opentom
from eval.benchmarks.base import Benchmark, Row


def load(path: Path) -> list[Row]:
    return opentom.load(path, long=True)


BENCHMARK: Benchmark = replace(
    opentom.BENCHMARK,
    name="opentom_long",
    display="OpenToM-L",
    rank=opentom.BENCHMARK.rank + 1,
    load=load,
    notes="OpenToM-L (long narratives): " + opentom.BENCHMARK.notes,
)
