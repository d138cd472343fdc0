"""What the benchmark tests share: each test module's sample and rows (read from its `BENCHMARK`),
a writable copy of the sample to break, the one-line error its loader raises, line edits; and the
agreement tests: every benchmark's untagged replies are checked against a small oracle of its
original scorer's reading rule, on committed reply shapes and on the replies a real model gave,
when a run saved them under runs/real/<run>/samples/ (a development machine's runs; CI has none,
and those tests skip)."""
from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest

from eval.benchmarks import get_benchmark
from eval.benchmarks.base import BenchmarkFormatError
from tests.eval.sample_rows import sample_path

REAL_RUNS = Path(__file__).resolve().parents[3] / "runs" / "real"


@pytest.fixture(scope="module")
def sample(request):
    """The sample of the test module's `BENCHMARK`: its shared one, or its fixture where its
    module says it has none (tests/eval/sample_rows.py)."""
    return sample_path(request.module.BENCHMARK)


@pytest.fixture(scope="module")
def rows(request, sample):
    """The rows the test module's `BENCHMARK` loads from its sample."""
    return request.module.BENCHMARK.load_rows(sample)


@pytest.fixture
def copy(sample, tmp_path) -> Path:
    """A writable copy of the test module's sample (its folder, or its file) to break."""
    dst = tmp_path / sample.name
    if sample.is_dir():
        shutil.copytree(sample, dst)
    else:
        shutil.copy(sample, dst)
    return dst


@pytest.fixture
def one_line_error(request) -> Callable[..., str]:
    """`one_line_error(path, **options)`: the error the test module's `BENCHMARK` raises loading
    `path`, asserted to be one line."""
    def error(path: Path, **options: Any) -> str:
        with pytest.raises(BenchmarkFormatError) as e:
            request.module.BENCHMARK.load(path, **options)
        assert "\n" not in str(e.value)
        return str(e.value)

    return error


def _edit_line(path: Path, n: int, change: Callable[[str], str]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[n - 1] = change(lines[n - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def edit_line() -> Callable[[Path, int, Callable[[str], str]], None]:
    """`edit_line(path, n, change)`: replace line n (from 1) of a text file with change(line)."""
    return _edit_line


@pytest.fixture
def edit_record() -> Callable[[Path, int, Callable[[dict], None]], None]:
    """`edit_record(path, n, change)`: change (in place) the JSON object on line n of a JSONL file."""
    def edit(path: Path, n: int, change: Callable[[dict], None]) -> None:
        def rewrite(line: str) -> str:
            obj = json.loads(line)
            change(obj)
            return json.dumps(obj, ensure_ascii=False)
        _edit_line(path, n, rewrite)

    return edit


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
    """Each (row, reply, correct, verdict) case: the record's `correct` as the original's reading
    gives it (`original_record`: the careful reading where the benchmark has no original scorer)
    and the comparison with the original's rule."""
    from eval.benchmarks.base import original_record

    for row, reply, correct, verdict in cases:
        assert original_record(row, reply, benchmark)["correct"] is correct, reply
        assert compare(row, reply) == verdict, (reply, compare(row, reply))


@pytest.fixture
def check_cases():
    """`check_cases(cases, compare, benchmark)`: committed reply shapes against the oracle."""
    return _check_cases
