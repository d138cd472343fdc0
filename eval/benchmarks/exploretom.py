"""ExploreToM: our own exported datasets, already in the row contract (DESIGN.md, "Rows"), and
the data the ExploreToM authors released (hub `facebook/ExploreToM`, `ExploreToM-data-sample.csv`).

Input: a `DatasetDict` written with `save_to_disk` (the `test` split by default), a single split
folder (a `Dataset` written with `save_to_disk`), a folder of `<split>.jsonl` files, one JSONL
file, or a CSV file (or a folder holding one). Records in the row contract are checked with
`validate_row`; records in the released schema (`story_structure`, `infilled_story`, `question`,
`expected_answer`, `qprop=params`, `qprop=nth_order`, `qprop=non_unique_mental_state`,
`sprop=is_false_belief_story_1st`, `sprop=global_idx`, `param=story_type`, ...) are turned into
rows: the infilled story (or with `text="structure"` the story structure) and the question, the
expected answer as gold, scored as yes/no, know/does-not-know or a short answer by its wording.
Accuracy is broken down by the `meta` keys `order` (0 for ground-truth and memory questions;
the release's `nth_order` -1), `property`, `interesting`, `kind` and, for the released data,
`story_type`.
"""
from __future__ import annotations

import ast
import csv
import json
import sys
from functools import partial
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from eval.benchmarks._common import check_unique_ids, choice_block, fail, read_jsonl
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Row
from eval.rows import COLUMNS, RowError, make_row, validate_row

NAME = "exploretom"
DEFAULT_SPLIT = "test"
BREAKDOWNS = ("order", "property", "interesting", "kind", "story_type")
# The released schema: these columns must be there; the others are kept in meta when present.
RELEASE_REQUIRED = ("story_structure", "infilled_story", "question", "expected_answer",
                    "qprop=nth_order")
RELEASE_KEPT = {  # release column -> meta key
    "qprop=non_unique_mental_state": "interesting",
    "sprop=is_false_belief_story_1st": "false_belief",
    "sprop=is_false_belief_story_1st_and_2nd": "false_belief_1st_and_2nd",
    "sprop=global_idx": "story",
    "param=story_type": "story_type",
    "param=num_people": "num_people",
    "param=num_moves": "num_moves",
    "param=num_rooms": "num_rooms",
}


# The prompts of ExploreToM rows, ours (`python -m exploretom export`) and the release's alike: the
# paper's story, question and short answer; location questions may be asked as multiple choice.
def instruction(q: dict[str, Any]) -> str:
    """The short-answer request matching the question's answer type (paper: story, question,
    short answer)."""
    if q["answer_type"] == "yes_no":
        return "Give a short answer: yes or no."
    if q["answer_type"] == "knowledge":
        return 'Give a short answer: "knows about it" or "does not know about it".'
    what = {"room_location": "room", "container_location": "container"}.get(q["property"], "place")
    return f"Give a short answer: only the name of the {what}, as the story calls it."


def user_prompt(text: str, q: dict[str, Any]) -> str:
    return (f"Read the story, then answer the question about it.\n\nStory:\n{text.strip()}\n\n"
            f"Question: {q['question']}\n{instruction(q)}")


def choice_prompt(text: str, q: dict[str, Any], options: Sequence[str]) -> str:
    """The same question as multiple choice, its options lettered as the benchmarks show them."""
    return (f"Read the story, then answer the question about it.\n\nStory:\n{text.strip()}\n\n"
            f"{choice_block(q['question'], options)}")


def _from_disk(path: Path, split: str) -> tuple[Path, Iterable[dict[str, Any]]]:
    from datasets import Dataset, DatasetDict, load_from_disk  # heavy: only for saved datasets

    try:
        ds = load_from_disk(str(path))
    except Exception as e:  # datasets raises FileNotFoundError/ValueError/Arrow errors alike
        fail(path, None, f"not a dataset saved with save_to_disk ({type(e).__name__}: {str(e).splitlines()[0]})")
    if isinstance(ds, DatasetDict):
        if split not in ds and len(ds) == 1 and "expected_answer" in next(iter(ds.values())).column_names:
            return path / next(iter(ds)), next(iter(ds.values()))  # the hub release: one 'train' split
        if split not in ds:
            fail(path, None, f"no split {split!r} (splits: {', '.join(sorted(ds)) or 'none'})")
        return path / split, ds[split]
    assert isinstance(ds, Dataset)
    return path, ds


def _read_csv(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(`line N` where the record starts, record) for each row of a CSV file with a header."""
    csv.field_size_limit(sys.maxsize)  # infilled stories are long quoted fields
    try:
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            start = 2
            for rec in reader:
                yield f"line {start}", rec
                start = reader.line_num + 1
    except UnicodeDecodeError as e:
        fail(path, None, f"not UTF-8 text ({e.reason})")
    except csv.Error as e:
        fail(path, None, f"not valid CSV ({e})")


def _records(path: Path, split: str) -> tuple[Path, Iterable[tuple[str, dict[str, Any]]]]:
    """(the file or folder named in errors, (position, record) pairs)."""
    if path.is_file():
        if path.suffix.lower() == ".csv":
            return path, _read_csv(path)
        return path, ((f"line {n}", obj) for n, obj in read_jsonl(path))
    if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
        where, ds = _from_disk(path, split)
        return where, ((f"record {i}", rec) for i, rec in enumerate(ds, 1))
    jsonl = path / f"{split}.jsonl"
    if jsonl.is_file():
        return jsonl, ((f"line {n}", obj) for n, obj in read_jsonl(jsonl))
    csvs = sorted(path.glob("*.csv"))
    if len(csvs) == 1:
        return csvs[0], _read_csv(csvs[0])
    raise BenchmarkFormatError(
        f"{path}: neither a saved dataset (dataset_dict.json or state.json) nor {split}.jsonl "
        f"nor one ExploreToM .csv file"
    )


def is_release_record(rec: dict[str, Any]) -> bool:
    """A record in the released schema rather than the row contract."""
    return "prompt" not in rec and any(c in rec for c in ("expected_answer", "infilled_story"))


def _flag(value: Any, file: Path, loc: str, column: str) -> bool | None:
    """A release boolean: a bool (hub datasets) or its CSV text (`True`, `FALSE`)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    fail(file, loc, f"field {column!r}: expected True or False, got {value!r}")


def _int(value: Any, file: Path, loc: str, column: str) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        fail(file, loc, f"field {column!r}: expected an integer, got {value!r}")


def _params(value: Any) -> tuple[list[str], str | None, str | None]:
    """(people, thing, property) from `qprop=params`, a Python tuple written as text, e.g.
    `(['Bob', 'Alice'], 'key', 'container_location-False')`; empty parts when it reads otherwise."""
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        return [], None, None
    if not isinstance(parsed, tuple) or len(parsed) < 3:
        return [], None, None
    people = [p for p in parsed[0] if isinstance(p, str)] if isinstance(parsed[0], (list, tuple)) else []
    thing = parsed[1] if isinstance(parsed[1], str) else None
    prop = parsed[2].rsplit("-", 1)[0] if isinstance(parsed[2], str) else None
    return people, thing, prop


def answer_type_of(answer: str) -> str:
    """yes_no, knowledge (`knows about it` / `does not know about it`) or short, by the wording of
    the expected answer."""
    from eval import answers

    low = answers.normalize(answer)
    if low in ("yes", "no"):
        return "yes_no"
    if "know" in low.split() or "knows" in low.split():
        return "knowledge"
    return "short"


def release_row(rec: dict[str, Any], file: Path, loc: str, n: int, text: str) -> Row:
    """A row from one record of the released schema."""
    missing = [c for c in RELEASE_REQUIRED if c not in rec]
    if missing:
        fail(file, loc, f"missing column(s) {', '.join(missing)} (ExploreToM release schema)")
    story = rec["infilled_story" if text == "infilled" else "story_structure"]
    question, gold = rec["question"], rec["expected_answer"]
    for column, value in (("infilled_story" if text == "infilled" else "story_structure", story),
                          ("question", question), ("expected_answer", gold)):
        if not isinstance(value, str) or not value.strip():
            fail(file, loc, f"field {column!r}: empty")
    gold = gold.strip()
    nth = _int(rec["qprop=nth_order"], file, loc, "qprop=nth_order")
    people, thing, prop = _params(rec.get("qprop=params"))
    answer_type = answer_type_of(gold)
    meta: dict[str, Any] = {"order": max(nth, 0), "nth_order": nth, "property": prop,
                            "people": people, "thing": thing, "text_source": text,
                            "release_record": n}
    for column, key in RELEASE_KEPT.items():
        value = rec.get(column)
        if column in ("qprop=non_unique_mental_state", "sprop=is_false_belief_story_1st",
                      "sprop=is_false_belief_story_1st_and_2nd"):
            meta[key] = _flag(value, file, loc, column)
        elif key in ("story", "num_people", "num_moves", "num_rooms") and value not in (None, ""):
            meta[key] = _int(value, file, loc, column)
        elif value not in (None, ""):
            meta[key] = str(value)
    q = {"question": question.strip(), "answer_type": answer_type, "property": prop}
    return make_row(id=f"{NAME}-release-{n}", source=NAME, user=user_prompt(story, q),
                    answer=gold.lower() if answer_type == "yes_no" else gold,
                    answer_type=answer_type, meta=meta)


def load(path: Path, split: str = DEFAULT_SPLIT, *, text: str = "infilled") -> list[Row]:
    """Rows of our exports, or of the released data (`text`: `infilled` story or `structure`)."""
    if text not in ("infilled", "structure"):
        raise ValueError(f"text must be 'infilled' or 'structure', got {text!r}")
    file, records = _records(Path(path), split)
    rows: list[Row] = []
    where: dict[str, str] = {}
    for n, (loc, rec) in enumerate(records, 1):
        if is_release_record(rec):
            row = release_row(rec, file, loc, n, text)
        else:
            row = {c: rec[c] for c in COLUMNS if c in rec}
        try:
            validate_row(row)
            if not isinstance(json.loads(row["meta"]), dict):
                raise RowError(f"row {row['id']!r}: meta must encode a JSON object")
        except RowError as e:
            fail(file, loc, str(e))
        rows.append(row)
        where[row["id"]] = loc
    if not rows:
        fail(file, None, "no rows")
    check_unique_ids(rows, file, where)
    return rows


def loader(split: str = DEFAULT_SPLIT):
    """`load` bound to another split, e.g. `Benchmark(..., load=loader("validation"))`."""
    return partial(load, split=split)


BENCHMARK = Benchmark(
    display="ExploreToM",
    rank=100,
    name=NAME,
    category="tom",
    load=load,
    default_dir="exploretom",
    hub_id=None,  # our own data: pass the folder the exploretom exporter wrote
    shared_sample=False,
    breakdowns=BREAKDOWNS,
    checks=("derived",),
    notes="Accuracy under each row's answer_type rule, per order, property, interesting, kind and "
    "(released data) story type; `derived`: the share of our rows answered right with a think text "
    "that exploretom.semantics.trace_check accepts as a derivation.",
    extra={"split": DEFAULT_SPLIT},
)
