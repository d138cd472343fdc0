"""Hi-ToM as released: every record asked and scored, the VP copies of CoTP items included with
their own golds (`hitom` asks each distinct item once). A benchmark of its own so that the CLI and
suites can name it (`hitom_raw`)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from eval.benchmarks import hitom
from eval.benchmarks.base import Benchmark, Row


def load(path: Path) -> list[Row]:
    return hitom.load(path, merge=False)


BENCHMARK: Benchmark = replace(
    hitom.BENCHMARK,
    name="hitom_raw",
    load=load,
    notes="Hi-ToM, every release record (VP and CoTP copies each scored): 15-way multiple choice; "
    "accuracy per ToM order 0-4, story length and deception.",
)
