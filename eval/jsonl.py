"""JSON and JSON Lines files: read with errors that name the file and line, appended one record at
a time and resumed after any interruption, or replaced whole and atomically.

A killed writer can leave a partial last line; `resume` cuts it off and returns the ids already
written, so a re-run appends exactly what is missing: nothing lost, nothing duplicated. A file
replaced whole is written beside its path and renamed over it, so a reader never sees half of it.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator


class InputError(ValueError):
    """Bad input file: the message names the file and line."""


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-empty lines of a file; InputError if unreadable."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: " + ("is a folder, expected a file" if p.is_dir() else "no such file"))
    try:
        with open(p, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    yield n, line
    except UnicodeDecodeError as e:
        raise InputError(f"{p}: not a UTF-8 text file ({e.reason})") from None


def iter_records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """("FILE: line N", object) for every non-empty line; InputError names the line of a line
    that is not a JSON object."""
    for n, line in iter_lines(path):
        at = f"{path}: line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{at}: invalid JSON ({e.msg}, column {e.colno})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{at}: expected a JSON object")
        yield at, obj


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    for _, obj in iter_records(path):
        yield obj


def resume(path: str | Path) -> set[Any]:
    """Ids already in `path` (after dropping a partial last line); empty if it does not exist."""
    p = Path(path)
    if not p.exists():
        return set()
    with open(p, "rb+") as f:
        data = f.read()
        cut = data.rfind(b"\n") + 1 if data and not data.endswith(b"\n") else len(data)
        done = set()
        # Check every complete line before cutting anything: never truncate a file this tool
        # did not write.
        try:
            text = data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{p}: not a JSON Lines file (not UTF-8); refusing to append to "
                             "it") from None
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    done.add(json.loads(line)["id"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise InputError(f"{p}: line {n}: not a record of this tool; refusing to "
                                     "append to it") from None
        if cut < len(data):  # the partial last line a killed writer left
            if not data[cut:].startswith(b"{"):
                raise InputError(f"{p}: its last line is not a record of this tool; refusing "
                                 "to append to it")
            f.seek(cut)
            f.truncate()
    return done


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` at once (the temporary file carries the process id, so two
    writers never share one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json(path: str | Path, obj: Any, **dumps: Any) -> None:
    """One JSON document, atomically; `dumps` are json.dumps' options (indent 2 unless given)."""
    dumps.setdefault("indent", 2)
    write_text_atomic(path, json.dumps(obj, ensure_ascii=False, **dumps) + "\n")


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]], **dumps: Any) -> None:
    """A whole JSON Lines file, atomically (one record a line)."""
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False, **dumps) + "\n"
                                    for r in records))


class Appender:
    """Append JSON objects one line at a time, flushed so a crash loses at most one line."""

    def __init__(self, path: str | Path, fsync_every: int = 200) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "a", encoding="utf-8")
        self._every, self._n = fsync_every, 0

    def write(self, obj: dict[str, Any]) -> None:
        self._f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self._f.flush()
        self._n += 1
        if self._n % self._every == 0:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()

    def __enter__(self) -> "Appender":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
