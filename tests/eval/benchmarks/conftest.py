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


@pytest.fixture(scope="module")
def sample(request):
    """The shared sample of the test module's `BENCHMARK` (its default folder)."""
    return request.module.BENCHMARK.default_path()


@pytest.fixture(scope="module")
def rows(request, sample):
    """The rows the test module's `BENCHMARK` loads from its shared sample."""
    return request.module.BENCHMARK.load_rows(sample)


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


def _agrees_with_original(name: str, compare) -> Counter:
    """Compare our reading with the original's (`compare(row, reply)` -> a verdict) on every
    saved real reply of `name`; print one line of figures (shown with `pytest -s`) and fail on
    any verdict that starts with DISAGREE."""
    counts = Counter(compare(row, reply) for row, reply in _real_replies(name))
    parts = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"\n[agreement] {name}: {parts}")
    assert not [k for k in counts if k.startswith("DISAGREE")], counts
    return counts


@pytest.fixture
def agrees_with_original():
    """`agrees_with_original(name, compare)`: the agreement test on saved real replies."""
    return _agrees_with_original


def _check_cases(cases, compare, benchmark) -> None:
    """Each (row, reply, correct, verdict) case: our record's `correct` and the comparison with
    the original's rule."""
    from eval.benchmarks.base import record_for

    for row, reply, correct, verdict in cases:
        assert record_for(row, reply, benchmark)["correct"] is correct, reply
        assert compare(row, reply) == verdict, (reply, compare(row, reply))


@pytest.fixture
def check_cases():
    """`check_cases(cases, compare, benchmark)`: committed reply shapes against the oracle."""
    return _check_cases
