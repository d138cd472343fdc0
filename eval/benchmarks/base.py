"""What a benchmark module provides: rows in the contract, a scoring rule, breakdowns.

Each module in `eval/benchmarks/` defines one `BENCHMARK = Benchmark(...)`. The runner loads rows,
asks a backend, calls `score` on every (row, response) and `aggregate` on the records.
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from eval import answers
from eval.checks import check_shares, run_checks
from eval.rows import SYSTEM_PROMPT, meta

Row = dict[str, Any]
Record = dict[str, Any]

REPO_ROOT = Path(__file__).resolve().parents[2]


def shared_benchmarks_dir() -> Path:
    """Where the benchmark samples live: $TOMRL_BENCHMARKS, else ../shared/benchmarks beside
    the checkout."""
    env = os.environ.get("TOMRL_BENCHMARKS")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "benchmarks"


class BenchmarkFormatError(ValueError):
    """Input that does not match the benchmark's release format; the message names the file,
    the line or record, and the field."""


def default_score(row: Row, response: str) -> Record:
    """The shared parser's verdict: the answer read, how it was read, and its correctness under
    the row's answer_type (a `short` row's `meta.candidates`, when present, are the answers its
    untagged replies are read against; the question asked says whether a reply naming a belief
    beside the reality answers with the one or the other)."""
    v = answers.score(response, row["answer"], row["answer_type"], row["choices"],
                      meta(row).get("candidates") or (), question=question_of(row))
    return verdict_record(v)


def answer_given(rec: Record) -> bool:
    """Whether a record's reply gives an answer: read, and not a negation, a hedge or an unclear
    reading (`eval.answers.careful`), whose text a tagged record keeps though it answers nothing."""
    return rec.get("extracted") is not None and rec.get("read") != "none" and (
        rec.get("flag") not in answers.NO_ANSWER)


def question_of(row: Row) -> str | None:
    """The text of the row's last user turn, which ends with the question asked."""
    for message in reversed(row.get("prompt") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def verdict_record(v: "answers.Verdict") -> Record:
    """The fields of a per-sample record that come from a verdict."""
    rec = {"extracted": v.extracted, "correct": v.correct, "format_ok": v.format_ok,
           "read": v.read}
    if v.flag:
        rec["flag"] = v.flag  # the careful reading's reason: negation, hedge, correction
    return rec


def row_chance(row: Row) -> float | None:
    """A uniform random answerer's chance of being right on one row: 1/options for a choice
    row, 1/2 for yes/no and knowledge rows, 1/candidates for a short row whose candidates are
    known; None where the answers are open."""
    kind = row.get("answer_type")
    if kind == "choice" and row.get("choices"):
        return 1 / len(row["choices"])
    if kind in ("yes_no", "knowledge"):
        return 0.5
    candidates = meta(row).get("candidates") if kind == "short" else None
    return 1 / len(candidates) if candidates else None


def accuracy_with_breakdowns(records: list[Record], keys: tuple[str, ...]) -> dict[str, Any]:
    """Mean of `correct` overall and per value of each breakdown key found in `record['meta']`."""
    out: dict[str, Any] = {"accuracy": mean(r["correct"] for r in records), "n": len(records)}
    for key in keys:
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in records:
            value = r.get("meta", {}).get(key)
            if value is not None:
                groups[str(value)].append(bool(r["correct"]))
        if groups:
            out[f"by_{key}"] = {
                k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(groups.items())
            }
    return out


def mean(xs: Iterable[Any], empty: float | None = 0.0) -> float | None:
    """The mean of numbers or booleans; `empty` when there are none (0.0 for a metric over no
    records; the runner's summary asks for None)."""
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else empty


# the categories in the order tables show them
CATEGORIES = ("tom", "ei", "iq")


@dataclass
class Benchmark:
    name: str  # the name of its module in eval/benchmarks, how commands and suites name it
    category: str  # "tom", "ei", "iq"
    load: Callable[[Path], list[Row]]  # path: a file or folder in the original release format
    default_dir: str = ""  # folder name under shared_benchmarks_dir()
    hub_id: str | None = None  # Hugging Face dataset id, used only when online
    # whether shared_benchmarks_dir() holds a sample of it; the tests read tests/eval/fixtures/<name>,
    # a few items in its release layout, for one that has none there
    shared_sample: bool = True
    breakdowns: tuple[str, ...] = ()  # meta keys reported separately
    primary_metric: str = "accuracy"
    score: Callable[[Row, str], Record] = default_score
    aggregate: Callable[[list[Record]], dict[str, Any]] | None = None
    notes: str = ""  # the original scoring rule, in a sentence
    extra: dict[str, Any] = field(default_factory=dict)
    # the system message its rows are asked with unless a suite or the command line says
    # otherwise (eval.rows.resolve_system_prompt): the think/answer prompt, or the benchmark's
    # own convention
    system_prompt: str | None = SYSTEM_PROMPT
    # the expected accuracy of an answerer that picks uniformly among the possible answers
    chance: Callable[[Row], "float | None"] = row_chance
    display: str = ""  # its name in tables and reports ("Hi-ToM"); empty: `name`
    rank: int = 1000  # where it stands among its category's columns (the papers' order)
    # checks of a reply beyond its answer (eval/checks.py), each reported as the share of the
    # replies it applies to that pass: ("derived",) for ExploreToM's reasoning traces
    checks: tuple[str, ...] = ()
    # the benchmark's original scorer, where it credits replies the careful reading does not
    # (ToMBench's letter vote, OpenToM's first word, ...): each record keeps the fields it reads
    # differently under `original`, and the metrics carry its headline as
    # `<primary_metric>_original` and all its metrics under `original`
    original_score: Callable[[Row, str], Record] | None = None

    @property
    def title(self) -> str:
        return self.display or self.name

    def default_path(self) -> Path:
        return shared_benchmarks_dir() / (self.default_dir or self.name)

    def load_rows(self, path: str | Path | None = None, limit: int | None = None,
                  **options: Any) -> list[Row]:
        """Rows from `path` (default: the shared sample); `options` are the loader's own keyword
        arguments (ToMBench `permutations`, ...)."""
        p = Path(path) if path else self.default_path()
        if not p.exists():
            raise FileNotFoundError(f"{self.name}: no such file or folder: {p}")
        rows = self.load(p, **options)
        return rows[:limit] if limit else rows

    def _aggregate(self, records: list[Record]) -> dict[str, Any]:
        if self.aggregate is not None:
            return self.aggregate(records)
        return accuracy_with_breakdowns(records, self.breakdowns)

    def metrics(self, records: list[Record]) -> dict[str, Any]:
        """The careful metrics (`score`), and beside them the original scorer's where the
        benchmark has one (`original_score`)."""
        out = self._aggregate(records)
        if self.original_score is not None and records:
            original = self._aggregate(original_records(records))
            head = self.primary_metric
            out = {head: out.get(head), f"{head}_original": original.get(head),
                   **{k: v for k, v in out.items() if k != head}, "original": original}
        return {**out, **check_shares(self.checks, records)} if self.checks else out


_ABSENT = object()


def original_records(records: list[Record]) -> list[Record]:
    """The records as the benchmark's original scorer reads them: each with the fields kept
    under `original` in place of the careful reading's."""
    return [{**r, **r["original"]} if isinstance(r.get("original"), dict) else r for r in records]


def record_for(row: Row, response: str, benchmark: Benchmark) -> Record:
    """One per-sample record: the sample file's line and the input of `aggregate`."""
    rec = {
        "id": row["id"],
        "gold": row["answer"],
        "answer_type": row["answer_type"],
        "response": response,
        "meta": meta(row),
    }
    rec.update(benchmark.score(row, response))
    if benchmark.original_score is not None:
        # what the original scorer reads differently (empty: the same reading)
        original = benchmark.original_score(row, response)
        rec["original"] = {k: v for k, v in original.items() if rec.get(k, _ABSENT) != v}
    rec.update(run_checks(benchmark.checks, rec))
    if row["answer_type"] == "choice" and "chosen" not in rec:
        # the position answered, for the position-habit figures (top_position_share)
        rec["chosen"] = answers.chosen_option(rec.get("extracted"), row["choices"])
    return rec


def original_record(row: Row, response: str, benchmark: Benchmark) -> Record:
    """One record as the benchmark's original scorer reads the reply (`record_for` with the
    fields under `original` in place)."""
    return original_records([record_for(row, response, benchmark)])[0]


def scripted_records(benchmark: Benchmark, rows: list[Row],
                     answer_of: Callable[[Row], str]) -> list[Record]:
    """Records of a scripted answerer (`answer_of(row)` -> completion text) asked through a
    `ScriptedBackend`, as the runner would ask a model: perfect and constant baselines, tests.
    Rows with the same prompt must get the same answer (a backend sees only the prompt)."""
    from eval.backends.base import ScriptedBackend

    by_prompt: dict[str, str] = {}
    for r in rows:
        key, answer = json.dumps(r["prompt"]), answer_of(r)
        if by_prompt.setdefault(key, answer) != answer:
            raise ValueError(f"row {r['id']!r}: same prompt as another row, different answer")
    backend = ScriptedBackend(lambda conv: by_prompt[json.dumps(list(conv))])
    completions = backend.generate([r["prompt"] for r in rows])
    return [record_for(r, c.text, benchmark) for r, c in zip(rows, completions)]


def scripted_metrics(benchmark: Benchmark, rows: list[Row],
                     answer_of: Callable[[Row], str]) -> dict[str, Any]:
    """The benchmark's metrics over `scripted_records`."""
    return benchmark.metrics(scripted_records(benchmark, rows, answer_of))
