"""Helpers the benchmark loaders share: reading release files, multiple-choice presentation, the
two seeded option orders, and the scores other than accuracy.

One error contract: `fail` raises a `BenchmarkFormatError` whose one-line message is
`<file>: <line N | record N | ...>: <message>`, so the CLI can print it as it is.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import string
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Hashable, Iterable, Iterator, NoReturn, Sequence

from eval.benchmarks.base import BenchmarkFormatError, mean
from eval.jsonl import InputError, numbered_records

__all__ = [
    "LETTERS", "check_unique_ids", "choice_block", "f1", "fail", "files_in", "get", "has_cjk",
    "letter_instruction", "letters_for", "mean", "multi_valued_breakdown", "option_lines",
    "permutation_sha256", "permutation_str_seed", "read_json", "read_jsonl", "read_text",
    "require", "require_file", "short_repr", "string_list", "token_f1", "warn",
]

LETTERS = string.ascii_uppercase

# ---------------------------------------------------------------------------------------------
# Errors and warnings


def fail(path: Path | str, where: str | int | None, message: str) -> NoReturn:
    """Raise `<path>: <where>: <message>` as one line; an int `where` is a line number, an empty
    one leaves the location out. Raised `from None`: the message already says what the caught
    error (JSON, UTF-8, CSV, Parquet) was."""
    loc = f"line {where}" if isinstance(where, int) and not isinstance(where, bool) else where
    text = " ".join(str(message).split())  # a value quoted in the message must not break the line
    raise BenchmarkFormatError(f"{path}: {loc}: {text}" if loc else f"{path}: {text}") from None


def warn(message: str) -> None:
    """One `warning: ...` line on stderr, as the runner writes its own: a loader's note about odd
    release rows that are loaded anyway (the count, never one line per row)."""
    print(f"warning: {' '.join(message.split())}", file=sys.stderr, flush=True)


def short_repr(value: Any, limit: int = 60) -> str:
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 3] + "..."


# ---------------------------------------------------------------------------------------------
# Reading release files


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        fail(path, "", f"missing file ({what})")
    return path


def files_in(path: Path, pattern: str, benchmark: str) -> list[Path]:
    """`path` itself when it is a file, else the files of the folder matching `pattern`, sorted."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        fail(path, "", "no such file or folder")
    found = sorted(p for p in path.glob(pattern) if p.is_file())
    if not found:
        fail(path, "", f"no {pattern} file of {benchmark} in this folder")
    return found


def read_text(path: Path) -> str:
    if not path.is_file():
        fail(path, "", "no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        fail(path, f"byte {e.start}", f"not UTF-8 text ({e.reason})")


def read_json(path: Path) -> Any:
    """A whole-file JSON document (NaN allowed, as pandas writes it)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        fail(path, e.lineno, f"not valid JSON ({e.msg})")


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line, read lazily (eval.jsonl's reader); a line
    that is not a JSON object fails."""
    if not path.is_file():
        fail(path, "", "no such file")
    try:
        yield from numbered_records(path)
    except InputError as e:
        raise BenchmarkFormatError(str(e)) from None


# ---------------------------------------------------------------------------------------------
# Checking fields. Two wordings of the same checks, each asserted by its loaders' tests and
# printed to users: `get` (the ToM loaders: "missing field 'x'") and `require` (the EI/IQ
# loaders: "field 'x': missing", also for empty lists).


def get(
    record: Any,
    key: str,
    path: Path,
    where: str | int,
    types: type | tuple[type, ...] = str,
    *,
    nonempty: bool = True,
) -> Any:
    """`record[key]`, checked to exist and to have one of `types` (strings must not be blank)."""
    if not isinstance(record, dict):
        fail(path, where, f"expected a JSON object, got {type(record).__name__}")
    if key not in record:
        fail(path, where, f"missing field {key!r}")
    value = record[key]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        names = "/".join(t.__name__ for t in _as_tuple(types))
        fail(path, where, f"field {key!r} must be {names}, got {short_repr(value)}")
    if nonempty and isinstance(value, str) and not value.strip():
        fail(path, where, f"field {key!r} is empty")
    return value


def require(obj: dict[str, Any], name: str, path: Path, where: str | int,
            kind: type | tuple = str, *, allow_empty: bool = False) -> Any:
    """obj[name], checked for presence (None counts as missing), type and (for strings and
    lists) non-emptiness."""
    if name not in obj or obj[name] is None:
        fail(path, where, f"field {name!r}: missing")
    value = obj[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        fail(path, where, f"field {name!r}: expected {want}, got {type(value).__name__}")
    if not allow_empty and isinstance(value, (str, list)) and not (
        value.strip() if isinstance(value, str) else value
    ):
        fail(path, where, f"field {name!r}: empty")
    return value


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def string_list(obj: dict[str, Any], name: str, path: Path, where: str | int,
                min_len: int = 2) -> list[str]:
    """A list field of non-empty strings with at least `min_len` entries (option lists)."""
    value = require(obj, name, path, where, list)
    if len(value) < min_len or not all(isinstance(v, str) and v.strip() for v in value):
        fail(path, where,
             f"field {name!r}: expected a list of at least {min_len} non-empty strings")
    if len(value) > len(LETTERS):
        fail(path, where, f"field {name!r}: {len(value)} options, at most {len(LETTERS)} supported")
    return value


def check_unique_ids(rows: list[dict[str, Any]], path: Path, where_of: dict[str, str]) -> None:
    """Fail on the second row that reuses an id (row ids key result caches and sample files)."""
    seen: dict[str, str] = {}
    for row in rows:
        rid = row["id"]
        if rid in seen:
            fail(path, where_of.get(rid), f"duplicate item id {rid!r} (first at {seen[rid]})")
        seen[rid] = where_of.get(rid, "?")


def has_cjk(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None


# ---------------------------------------------------------------------------------------------
# Multiple-choice prompts


def option_lines(options: Sequence[str]) -> str:
    """`A. first option` / `B. second option` ... one per line, each text as given."""
    if len(options) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} options, got {len(options)}")
    return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(options))


def letters_for(n: int) -> str:
    """`A-D` style span of the first n letters, for the EI/IQ instruction lines."""
    return f"{LETTERS[0]}-{LETTERS[n - 1]}" if n > 1 else LETTERS[0]


def letter_instruction(n: int) -> str:
    letters = ", ".join(LETTERS[: n - 1]) + f" or {LETTERS[n - 1]}"
    return f"Answer with the letter of the correct option ({letters})."


def choice_block(question: str, options: Sequence[str]) -> str:
    """The question, its lettered options and the request for a letter (the ToM loaders)."""
    return f"Question: {question}\n{option_lines(options)}\n\n{letter_instruction(len(options))}"


# ---------------------------------------------------------------------------------------------
# Seeded option orders. Two algorithms, kept apart on purpose: each fixes the option order (and
# so the gold letter and the scores) of the benchmarks that use it; changing either one moves
# every published figure of those benchmarks.


def permutation_sha256(n: int, *key: object) -> list[int]:
    """A permutation of range(n) seeded by the first 8 bytes of sha256(':'.join(key)) (GPQA
    Diamond): fixed by `key` alone on every machine, whatever else is loaded."""
    digest = hashlib.sha256(":".join(map(str, key)).encode("utf-8")).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def permutation_str_seed(n: int, key: str, seed: int) -> list[int]:
    """A permutation of range(n) seeded by the string f'{seed}:{key}' (BigToM, FANToM, ToMBench;
    `random` hashes string seeds with SHA-512, not the salted hash()), so the same item gets the
    same option order on every machine and run."""
    order = list(range(n))
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


# ---------------------------------------------------------------------------------------------
# Scores other than accuracy


def multi_valued_breakdown(records: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Accuracy per value of a list-valued meta key; an item counts once under each of its values
    (AIME problems carry several topics)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        values = r.get("meta", {}).get(key) or []
        for v in values if isinstance(values, list) else [values]:
            groups[str(v)].append(bool(r["correct"]))
    return {k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(groups.items())}


def f1(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    average: str = "macro",
    labels: Iterable[Hashable] | None = None,
) -> float:
    """Multi-class F1 with scikit-learn's conventions (`f1_score(..., average=..., labels=...)`):
    the classes are `labels`, by default the union of gold and predicted labels; a class with no
    predictions or no gold gets precision or recall 0; 'macro' averages the classes equally,
    'weighted' by their gold support."""
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} gold labels but {len(y_pred)} predictions")
    labels = set(y_true) | set(y_pred) if labels is None else set(labels)
    if not y_true or not labels:
        return 0.0
    support = Counter(y_true)
    predicted = Counter(y_pred)
    hits = Counter(t for t, p in zip(y_true, y_pred) if t == p)
    scores = {}
    for label in labels:
        tp = hits[label]
        precision = tp / predicted[label] if predicted[label] else 0.0
        recall = tp / support[label] if support[label] else 0.0
        scores[label] = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    if average == "macro":
        return sum(scores.values()) / len(scores)
    if average == "weighted":
        total = sum(support[label] for label in labels)
        return sum(scores[label] * support[label] for label in labels) / total if total else 0.0
    raise ValueError(f"average must be 'macro' or 'weighted', got {average!r}")


def token_f1(gold: str, prediction: str) -> float:
    """Bag-of-words F1 between two texts split on whitespace (SQuAD-style, no further cleaning)."""
    g, p = gold.split(), prediction.split()
    common = sum((Counter(g) & Counter(p)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)
