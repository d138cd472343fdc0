"""AIME 2025 (I and II): 30 competition problems with integer answers 0-999.

Release format: the Hugging Face dataset MathArena/aime_2025, i.e. `data/train-*.parquet` with
`problem_idx` (1-15 = AIME I, 16-30 = AIME II), `problem` (LaTeX), `answer` (int) and
`problem_type` (list of topics); a JSONL file with the same fields is read too.
Scoring: exact match of the final integer (the shared parser's `number` rule), per contest and
per topic (a problem counts under each of its topics). A reply without answer tags is read as
MathArena's parser reads every reply (`extract_answer`, strict): the content of its last
`\boxed{}` (or `\fbox{}`); a reply without a box, which MathArena scores wrong, is read by the
shared fallback (an "answer: X" line, a short reply).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from eval.benchmarks._common import check_unique_ids, fail, multi_valued_breakdown, read_jsonl, require
from eval import answers
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import (
    Benchmark, BenchmarkFormatError, Record, Row, accuracy_with_breakdowns, default_score,
)
from eval.rows import make_row

NAME = "aime2025"
INSTRUCTION = "Give the final answer as a single integer from 0 to 999."


def _parquet_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    import pyarrow.parquet as pq  # pyarrow comes with datasets; imported only for parquet input

    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for truncated or foreign files
        fail(path, None, f"not a readable Parquet file ({type(e).__name__}: {str(e).splitlines()[0]})")
    for i, rec in enumerate(table.to_pylist(), 1):
        yield f"record {i}", rec


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    # A hub snapshot may hold the same records as parquet and as JSONL: read one form only.
    for pattern in ("*.parquet", "*.jsonl"):
        files = sorted(path.rglob(pattern))
        if files:
            return files
    raise BenchmarkFormatError(f"{path}: no .parquet or .jsonl file found (expected data/train-*.parquet)")


def _records(file: Path) -> Iterator[tuple[str | int, dict[str, Any]]]:
    if file.suffix == ".parquet":
        yield from _parquet_records(file)
    elif file.suffix in (".jsonl", ".json"):
        yield from read_jsonl(file)
    else:
        fail(file, None, "expected a .parquet or .jsonl file")


def _integer(value: Any, name: str, file: Path, where: str | int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (
        isinstance(value, str) and not value.strip().isdigit()
    ):
        fail(file, where, f"field {name!r}: expected an integer, got {value!r}")
    return int(value)


def load(path: Path) -> list[Row]:
    rows: list[Row] = []
    where: dict[str, str] = {}
    files = _files(Path(path))
    for file in files:
        before = len(rows)
        for loc, rec in _records(file):
            idx = _integer(require(rec, "problem_idx", file, loc, (int, str)), "problem_idx", file, loc)
            problem = require(rec, "problem", file, loc)
            answer = _integer(require(rec, "answer", file, loc, (int, str)), "answer", file, loc)
            if not 0 <= answer <= 999:
                fail(file, loc, f"field 'answer': {answer} is outside 0-999")
            topics = rec.get("problem_type") or []
            if isinstance(topics, str):
                topics = [topics]
            rid = f"{NAME}-{idx}"
            rows.append(make_row(
                id=rid, source=NAME, user=f"{problem.strip()}\n\n{INSTRUCTION}", answer=str(answer),
                answer_type="number",
                meta={"problem_idx": idx, "contest": "I" if idx <= 15 else "II",
                      "problem_type": [str(t) for t in topics]},
            ))
            where[rid] = loc if isinstance(loc, str) else f"line {loc}"
        if len(rows) == before:
            fail(file, None, "no records")
    check_unique_ids(rows, files[0] if len(files) == 1 else Path(path), where)
    return rows


def _balanced(text: str, open_at: int) -> int | None:
    """The index of the brace closing the one at `open_at`, or None."""
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return i
    return None


def last_box(reply: str) -> str | None:
    """The content of the last `boxed{...}` or `fbox{...}` of a reply, boxes read left to right
    without overlapping and their braces balanced, boxes inside it unwrapped (MathArena's
    `find_last_boxed_content`); None when there is none."""
    found, pos = None, 0
    while True:
        starts = [i for i in (reply.find("boxed{", pos), reply.find("fbox{", pos)) if i >= 0]
        if not starts:
            return found
        open_at = reply.index("{", min(starts))
        close = _balanced(reply, open_at)
        if close is None:
            pos = open_at + 1
            continue
        found, pos = last_box_unwrapped(reply[open_at + 1:close]), close + 1


def last_box_unwrapped(text: str) -> str:
    """`text` with every `\\boxed{x}` / `\\fbox{x}` inside it replaced by x."""
    while True:
        starts = [i for i in (text.find("\\boxed{"), text.find("\\fbox{")) if i >= 0]
        if not starts:
            return text
        at = min(starts)
        open_at = text.index("{", at)
        close = _balanced(text, open_at)
        if close is None:
            return text
        text = text[:at] + text[open_at + 1:close] + text[close + 1:]


def original_score(row: Row, response: str) -> Record:
    """The shared parser's verdict; a reply without answer tags that holds a box answers its
    last box's content (`last_box`)."""
    rec = default_score(row, response)
    reply = untagged_reply(response)
    boxed = last_box(reply) if reply is not None else None
    if boxed is not None and boxed.strip():
        rec.update(extracted=boxed.strip(), read="fallback",
                   correct=answers.is_correct(boxed.strip(), row["answer"], "number"))
    return rec


def chance_of(row: Row) -> float:
    """A uniform random answerer's chance: one integer of 0-999."""
    return 1 / 1000


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    out = accuracy_with_breakdowns(records, ("contest",))
    out["by_problem_type"] = multi_valued_breakdown(records, "problem_type")
    return out


# The system message of the benchmark's own convention (a suite's or the command line's
# system_prompt setting overrides it): reason, then state the answer in the form its scorer reads.
SYSTEM_PROMPT = (
    "Solve the competition problem. Reason step by step, then write the final answer, an integer "
    "from 0 to 999, inside \\boxed{}."
)


BENCHMARK = Benchmark(
    display="AIME 2025",
    rank=130,
    name=NAME,
    category="iq",
    load=load,
    default_dir="aime2025",
    hub_id="MathArena/aime_2025",
    breakdowns=("contest", "problem_type"),
    score=default_score,
    original_score=original_score,
    aggregate=aggregate,
    chance=chance_of,
    notes="Exact match of the final integer answer (0-999); accuracy per contest (I, II) and topic.",
    system_prompt=SYSTEM_PROMPT,
)
