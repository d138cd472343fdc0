"""Reading release files and presenting multiple-choice items, shared by the EI/IQ loaders.

Every error is a `BenchmarkFormatError` whose one-line message starts with `file, line N` (or
`record N` where the format has no lines), so the CLI can print it as it is.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

from eval.benchmarks.base import BenchmarkFormatError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def fail(path: Path | str, where: str | int | None, message: str) -> BenchmarkFormatError:
    """The error to raise: `path: line 3: field 'label': ...` (an int `where` is a line number)."""
    loc = f"line {where}" if isinstance(where, int) else where
    text = " ".join(str(message).split())  # one line, whatever the quoted value holds
    return BenchmarkFormatError(f"{path}: {loc}: {text}" if loc else f"{path}: {text}")


def warn(message: str) -> None:
    """One `warning: ...` line on stderr, as the runner writes its own: a loader's note about odd
    release rows that are loaded anyway (the count, never one line per row)."""
    print(f"warning: {' '.join(message.split())}", file=sys.stderr, flush=True)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a line that is not a JSON object fails."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise fail(path, None, "no such file") from None
    except UnicodeDecodeError as e:
        raise fail(path, None, f"not UTF-8 text ({e.reason})") from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise fail(path, n, f"not valid JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(obj, dict):
            raise fail(path, n, f"expected a JSON object, got {type(obj).__name__}")
        yield n, obj


def require(obj: dict[str, Any], name: str, path: Path, where: str | int, kind: type | tuple = str,
          *, allow_empty: bool = False) -> Any:
    """obj[name], checked for presence, type and (for strings and lists) non-emptiness."""
    if name not in obj or obj[name] is None:
        raise fail(path, where, f"field {name!r}: missing")
    value = obj[name]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise fail(path, where, f"field {name!r}: expected {want}, got {type(value).__name__}")
    if not allow_empty and isinstance(value, (str, list)) and not (
        value.strip() if isinstance(value, str) else value
    ):
        raise fail(path, where, f"field {name!r}: empty")
    return value


def string_list(obj: dict[str, Any], name: str, path: Path, where: str | int,
                min_len: int = 2) -> list[str]:
    """A list field of non-empty strings with at least `min_len` entries (option lists)."""
    value = require(obj, name, path, where, list)
    if len(value) < min_len or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(path, where, f"field {name!r}: expected a list of at least {min_len} non-empty strings")
    if len(value) > len(LETTERS):
        raise fail(path, where, f"field {name!r}: {len(value)} options, at most {len(LETTERS)} supported")
    return value


def option_lines(options: list[str]) -> str:
    """Options as `A. text` lines, the presentation every multiple-choice prompt here uses."""
    return "\n".join(f"{LETTERS[i]}. {text.strip()}" for i, text in enumerate(options))


def letters_for(n: int) -> str:
    """`A-D` style span of the first n letters, for the instruction line."""
    return f"{LETTERS[0]}-{LETTERS[n - 1]}" if n > 1 else LETTERS[0]


def seeded_permutation(n: int, *key: object) -> list[int]:
    """A permutation of range(n) fixed by `key` alone (sha256, not Python's salted hash), so an
    item is shuffled the same way in every run, on every machine, whatever else is loaded."""
    digest = hashlib.sha256(":".join(map(str, key)).encode("utf-8")).digest()
    order = list(range(n))
    random.Random(int.from_bytes(digest[:8], "big")).shuffle(order)
    return order


def check_unique_ids(rows: list[dict[str, Any]], path: Path, where_of: dict[str, str]) -> None:
    """Fail on the second row that reuses an id (row ids key result caches and sample files)."""
    seen: dict[str, str] = {}
    for row in rows:
        rid = row["id"]
        if rid in seen:
            raise fail(path, where_of.get(rid), f"duplicate item id {rid!r} (first at {seen[rid]})")
        seen[rid] = where_of.get(rid, "?")


def multi_valued_breakdown(records: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Accuracy per value of a list-valued meta key; an item counts once under each of its values
    (AIME problems carry several topics)."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        values = r.get("meta", {}).get(key) or []
        for v in values if isinstance(values, list) else [values]:
            groups[str(v)].append(bool(r["correct"]))
    return {k: {"accuracy": sum(v) / len(v), "n": len(v)} for k, v in sorted(groups.items())}


def has_cjk(text: str) -> bool:
    return re.search(r"[\u4e00-\u9fff]", text) is not None
