"""What every registered benchmark must do, checked on each one's sample: it loads into valid rows
with unique ids, an answerer that gives the gold answer scores 1.0 on the headline metric, and an
answerer that always gives the same answer scores exactly the chance computed from the golds.
What is particular to a benchmark (its release format, breakdowns, closed-form F1) is tested in
tests/eval/benchmarks/test_<name>.py."""
from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from eval.answers import tagged
from eval.benchmarks import BENCHMARKS, get_benchmark
from eval.benchmarks.base import scripted_metrics
from eval.rows import meta, validate_row
from tests.eval.sample_rows import sample_rows

# FANToM's free-text questions need the embedding judge, whose import alone takes ~18 s: they are
# tested once in test_fantom.py
OPTIONS = {"fantom": {"judge": False}}


@pytest.fixture(scope="module", params=list(BENCHMARKS))
def loaded(request):
    bench = get_benchmark(request.param)
    return bench, sample_rows(bench, **OPTIONS.get(bench.name, {}))


def answer(text: str) -> str:
    return tagged(text, "t")


def test_loads_valid_rows_with_unique_ids(loaded):
    bench, rows = loaded
    assert rows, bench.name
    for r in rows:
        validate_row(r, r["id"])
    assert len({r["id"] for r in rows}) == len(rows)


def test_perfect_answerer_scores_1_on_the_headline_metric(loaded):
    bench, rows = loaded
    metrics = scripted_metrics(bench, rows, lambda r: answer(r["answer"]))
    assert metrics[bench.primary_metric] == 1.0 and metrics["n"] == len(rows)


def _chance(bench, rows, constant) -> dict[str, float]:
    """Metric -> its value for an answerer that always says `constant`, computed from the golds:
    accuracy over the rows, and for FANToM its headline 'all' (a set counts when every question
    in it is right). OpenToM's macro-F1 of a constant has its closed form in test_opentom.py."""
    hit = {r["id"]: r["answer"] == constant for r in rows}
    out = {"accuracy": sum(hit.values()) / len(rows)}
    if bench.primary_metric == "all":
        sets = defaultdict(list)
        for r in rows:
            sets[meta(r)["set_id"]].append(hit[r["id"]])
        out["all"] = sum(all(v) for v in sets.values()) / len(sets)
    return out


def _constants(rows) -> list[str]:
    """Each gold letter of the multiple-choice rows; with none, each gold answer (the ten most
    common when there are more). Only these make the chance a plain share: the shared parser also
    reads a letter in 'B; B' and a place inside a longer answer, as it should for a model."""
    letters = sorted({r["answer"] for r in rows if r["answer_type"] == "choice"})
    if letters:
        return letters
    golds = Counter(r["answer"] for r in rows)
    return sorted(golds) if len(golds) <= 26 else [g for g, _ in golds.most_common(10)]


def test_constant_answerer_scores_the_computed_chance(loaded):
    bench, rows = loaded
    constants = _constants(rows)
    for constant in constants:
        got = scripted_metrics(bench, rows, lambda r: answer(constant))
        for metric, expected in _chance(bench, rows, constant).items():
            assert got[metric] == pytest.approx(expected), (bench.name, constant, metric)
    # not a degenerate sample: some constant scores more than nothing and less than everything
    assert any(0 < _chance(bench, rows, c)["accuracy"] < 1 for c in constants)


def test_every_benchmark_is_found_by_its_module_and_named_as_it():
    # adding a benchmark is adding its module (and its test): no registry to edit
    from pathlib import Path

    import eval.benchmarks as package

    modules = {p.stem for p in Path(package.__file__).parent.glob("*.py")
               if not p.stem.startswith("_") and p.stem != "base"}
    assert set(BENCHMARKS) == modules
    for name in BENCHMARKS:
        bench = get_benchmark(name)
        assert bench.name == name and bench.title and bench.category in ("tom", "ei", "iq")
    tom = [n for n in BENCHMARKS if get_benchmark(n).category == "tom"]
    assert list(BENCHMARKS)[: len(tom)] == tom  # table order: ToM, then EI, then IQ


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_every_check_a_benchmark_names_is_declared(name):
    """A check is found by its entry point (eval/checks.py): a name no installed package declares
    would silently report no share."""
    from eval.checks import load_check

    for check in get_benchmark(name).checks:
        assert callable(load_check(check)), f"{name}: check {check!r} is not a tomrl.checks entry point"
