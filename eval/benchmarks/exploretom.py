"""ExploreToM: our own exported datasets, already in the row contract (DESIGN.md, "Rows").

Input: a `DatasetDict` written with `save_to_disk` (the `test` split by default), a single split
folder (a `Dataset` written with `save_to_disk`), a folder of `<split>.jsonl` files, or one JSONL
file. Every row is checked with `validate_row`. Accuracy is broken down by the `meta` keys
`order` (0 for ground-truth and memory questions), `property`, `interesting` and `kind`.
"""
from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any, Iterable

from eval.benchmarks._formats import check_unique_ids, fail, read_jsonl
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Row
from eval.rows import COLUMNS, RowError, validate_row

NAME = "exploretom"
DEFAULT_SPLIT = "test"
BREAKDOWNS = ("order", "property", "interesting", "kind")


def _from_disk(path: Path, split: str) -> tuple[Path, Iterable[dict[str, Any]]]:
    from datasets import Dataset, DatasetDict, load_from_disk  # heavy: only for saved datasets

    try:
        ds = load_from_disk(str(path))
    except Exception as e:  # datasets raises FileNotFoundError/ValueError/Arrow errors alike
        raise fail(path, None, f"not a dataset saved with save_to_disk ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    if isinstance(ds, DatasetDict):
        if split not in ds:
            raise fail(path, None, f"no split {split!r} (splits: {', '.join(sorted(ds)) or 'none'})")
        return path / split, ds[split]
    assert isinstance(ds, Dataset)
    return path, ds


def _records(path: Path, split: str) -> tuple[Path, Iterable[tuple[str, dict[str, Any]]]]:
    """(the file or folder named in errors, (position, record) pairs)."""
    if path.is_file():
        return path, ((f"line {n}", obj) for n, obj in read_jsonl(path))
    if (path / "dataset_dict.json").is_file() or (path / "state.json").is_file():
        where, ds = _from_disk(path, split)
        return where, ((f"record {i}", rec) for i, rec in enumerate(ds, 1))
    jsonl = path / f"{split}.jsonl"
    if jsonl.is_file():
        return jsonl, ((f"line {n}", obj) for n, obj in read_jsonl(jsonl))
    raise BenchmarkFormatError(
        f"{path}: neither a saved dataset (dataset_dict.json or state.json) nor {split}.jsonl"
    )


def load(path: Path, split: str = DEFAULT_SPLIT) -> list[Row]:
    file, records = _records(Path(path), split)
    rows: list[Row] = []
    where: dict[str, str] = {}
    for loc, rec in records:
        row = {c: rec[c] for c in COLUMNS if c in rec}
        try:
            validate_row(row)
            if not isinstance(json.loads(row["meta"]), dict):
                raise RowError(f"row {row['id']!r}: meta must encode a JSON object")
        except RowError as e:
            raise fail(file, loc, str(e)) from None
        rows.append(row)
        where[row["id"]] = loc
    if not rows:
        raise fail(file, None, "no rows")
    check_unique_ids(rows, file, where)
    return rows


def loader(split: str = DEFAULT_SPLIT):
    """`load` bound to another split, e.g. `Benchmark(..., load=loader("validation"))`."""
    return partial(load, split=split)


BENCHMARK = Benchmark(
    name=NAME,
    category="tom",
    load=load,
    default_dir="exploretom",
    hub_id=None,  # our own data: pass the folder the exploretom exporter wrote
    breakdowns=BREAKDOWNS,
    notes="Accuracy under each row's answer_type rule, per order, property, interesting and kind.",
    extra={"split": DEFAULT_SPLIT},
)
