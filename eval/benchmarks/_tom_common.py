"""Helpers shared by the ToM benchmark loaders.

Three things several loaders need in the same form: reading a release file so that every defect
becomes one `BenchmarkFormatError` line naming the file, the line or record and the field;
multiple-choice prompts with `A. ...` option lines and a seeded, reproducible option order; and
the F1 scores that OpenToM and FANToM report instead of plain accuracy.
"""
from __future__ import annotations

import json
import random
import string
from collections import Counter
from pathlib import Path
from typing import Any, Hashable, Iterable, NoReturn, Sequence

from eval.benchmarks.base import BenchmarkFormatError

LETTERS = string.ascii_uppercase

# ---------------------------------------------------------------------------------------------
# Reading release files


def fail(path: Path | str, where: str, message: str) -> NoReturn:
    """Raise the one-line error every loader uses: `<file>: <line or record>: <message>`."""
    text = " ".join(str(message).split())  # a value quoted in the message must not break the line
    raise BenchmarkFormatError(f"{path}: {where}: {text}" if where else f"{path}: {text}")


def short_repr(value: Any, limit: int = 60) -> str:
    r = repr(value)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def require_file(path: Path, what: str) -> Path:
    if not path.is_file():
        fail(path, "", f"missing file ({what})")
    return path


def read_text(path: Path) -> str:
    if not path.is_file():
        fail(path, "", "no such file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        fail(path, f"byte {e.start}", "not valid UTF-8 text")


def read_json(path: Path) -> Any:
    """A whole-file JSON document (NaN allowed, as pandas writes it)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        fail(path, f"line {e.lineno}", f"invalid JSON ({e.msg})")


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, object) for every non-blank line of a JSON Lines file."""
    out = []
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((lineno, json.loads(line)))
        except json.JSONDecodeError as e:
            fail(path, f"line {lineno}", f"invalid JSON ({e.msg} at column {e.colno})")
    return out


def get(
    record: Any,
    key: str,
    path: Path,
    where: str,
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


def _as_tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


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


# ---------------------------------------------------------------------------------------------
# Multiple-choice prompts


def option_lines(options: Sequence[str]) -> str:
    """`A. first option` / `B. second option` ... one per line."""
    if len(options) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} options, got {len(options)}")
    return "\n".join(f"{LETTERS[i]}. {text}" for i, text in enumerate(options))


def letter_instruction(n: int) -> str:
    letters = ", ".join(LETTERS[: n - 1]) + f" or {LETTERS[n - 1]}"
    return f"Answer with the letter of the correct option ({letters})."


def choice_block(question: str, options: Sequence[str]) -> str:
    """The question, its lettered options and the request for a letter."""
    return f"Question: {question}\n{option_lines(options)}\n\n{letter_instruction(len(options))}"


def seeded_permutation(n: int, key: str, seed: int) -> list[int]:
    """A permutation of range(n) that depends only on (`seed`, `key`): the same item gets the same
    option order on every machine and run (string seeds go through SHA-512, not hash())."""
    order = list(range(n))
    random.Random(f"{seed}:{key}").shuffle(order)
    return order


# ---------------------------------------------------------------------------------------------
# Scores other than accuracy


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


def mean(xs: Iterable[float]) -> float:
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else 0.0
