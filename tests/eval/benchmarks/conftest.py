"""Real model replies for the agreement tests: every benchmark's untagged replies are checked
against a small oracle of its original scorer's reading rule, on committed reply shapes and on
the replies a real model gave, when a run saved them under runs/real/<run>/samples/ (a
development machine's runs; CI has none, and those tests skip)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from eval.benchmarks import get_benchmark

REAL_RUNS = Path(__file__).resolve().parents[3] / "runs" / "real"


def _real_replies(name: str) -> list[tuple[dict, str]]:
    """(row, response) for every reply saved for benchmark `name` under runs/real/*/samples/
    whose row is in the benchmark's shared sample; skips the test when there are none."""
    files = sorted(REAL_RUNS.glob(f"*/samples/{name}.jsonl")) if REAL_RUNS.is_dir() else []
    if not files:
        pytest.skip(f"no real replies saved for {name} under {REAL_RUNS}")
    rows = {r["id"]: r for r in get_benchmark(name).load_rows(None)}
    pairs = []
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            if line.strip():
                d = json.loads(line)
                if d.get("id") in rows and isinstance(d.get("response"), str):
                    pairs.append((rows[d["id"]], d["response"]))
    if not pairs:
        pytest.skip(f"no saved {name} reply matches a row of the shared sample")
    return pairs


@pytest.fixture
def real_replies():
    """`real_replies(name)` -> [(row, response), ...] of the saved real replies (skips if none)."""
    return _real_replies


def report(name: str, counts: Counter) -> None:
    """One line of agreement figures, shown with `pytest -s`: how many replies, how many the
    original reads, how many of those we read alike, and the listed differences."""
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"\n[agreement] {name}: {parts}")


@pytest.fixture
def agreement_report():
    """`agreement_report(name, counts)`: print the figures of an agreement test (`pytest -s`)."""
    return report
