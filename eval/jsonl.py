"""JSON and JSON Lines files: read with errors that name the file and line, appended one record at
a time and resumed after any interruption, or replaced whole and atomically.

A killed writer can leave a partial last line; `resume` cuts it off and returns the ids already
written, so a re-run appends exactly what is missing: nothing lost, nothing duplicated. A file
replaced whole is written beside its path and renamed over it, so a reader never sees half of it.
"""
from __future__ import annotations

import fcntl
import json
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator


class InputError(ValueError):
    """Bad input file: the message names the file and line."""


def iter_lines(path: str | Path, *, torn: Callable[[int], None] | None = None
               ) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-empty lines of a file; InputError names the file, and the
    line of one that is not UTF-8, unless `torn` is given: such a line (a write cut within a
    character) is then passed over and its number given to `torn`."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: " + ("is a folder, expected a file" if p.is_dir() else "no such file"))
    with open(p, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                if torn is not None:
                    torn(n)
                    continue
                raise InputError(f"{p}: line {n}: not UTF-8 text ({e.reason})") from None
            if line.strip():
                yield n, line


def _ignore(n: int) -> None:
    pass


def numbered_records(path: str | Path, *, skip_torn: bool = False,
                     on_torn: Callable[[int], None] | None = None
                     ) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line of a JSON Lines file, read lazily: the one
    reader of every JSONL file the project reads (releases, rows, runs' own records). InputError
    `FILE: line N: not valid JSON (...)` or `...: expected a JSON object, got list`. `skip_torn`
    passes over lines that are not JSON (or not UTF-8: cut within a character), as a killed
    writer leaves them, for readers of a run still being written, and gives each one's number to
    `on_torn`; a line of JSON that is not an object still fails."""
    torn = (on_torn or _ignore) if skip_torn else None
    for n, line in iter_lines(path, torn=torn):
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as e:
            if torn is not None:
                torn(n)
                continue
            why = f"{e.msg}, column {e.colno}" if isinstance(e, json.JSONDecodeError) else "nested too deeply"
            raise InputError(f"{path}: line {n}: not valid JSON ({why})") from None
        if not isinstance(obj, dict):
            raise InputError(f"{path}: line {n}: expected a JSON object, got {type(obj).__name__}")
        yield n, obj


def iter_records(path: str | Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """("FILE: line N", object) for every non-empty line (`numbered_records`)."""
    for n, obj in numbered_records(path):
        yield f"{path}: line {n}", obj


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    for _, obj in numbered_records(path):
        yield obj


def resume(path: str | Path) -> set[Any]:
    """Ids already in `path` (after dropping a partial last line); empty if it does not exist."""
    p = Path(path)
    if not p.exists():
        return set()
    with open(p, "rb+") as f:
        cut = torn_tail(f)
        f.seek(0)
        data = f.read()
        cut = len(data) if cut is None else cut
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
            f.truncate(cut)
    return done


def repair(path: str | Path) -> list[int]:
    """Drop the lines of a JSON Lines output that are not whole records with an id (a torn write
    in the middle of a file, e.g. two runs appending at once or a full disk) and say which; a
    partial last line is left for `resume` to cut."""
    p = Path(path)
    if not p.is_file():
        return []
    lines = p.read_bytes().splitlines(keepends=True)
    kept, dropped = [], []
    for n, line in enumerate(lines, 1):
        if not line.endswith(b"\n"):
            kept.append(line)
            continue
        try:
            obj = json.loads(line) if line.strip() else {"id": None}
        except (UnicodeDecodeError, json.JSONDecodeError):
            obj = None
        if isinstance(obj, dict) and "id" in obj:
            kept.append(line)
        else:
            dropped.append(n)
    if dropped:
        tmp = p.with_name(p.name + ".repair")
        tmp.write_bytes(b"".join(kept))
        tmp.replace(p)
        print(f"repaired {p}: dropped line(s) {', '.join(map(str, dropped))} (not a whole "
              "record)", file=sys.stderr)
    return dropped


def make_parent(path: str | Path) -> None:
    """Create the folders above an output path; InputError when a part of it is a file (said
    as such, not as mkdir's "already exists")."""
    parent = Path(path).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        blocker = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()),
                       parent)
        raise InputError(f"{path}: {blocker} is a file, not a folder") from None


def write_text_atomic(path: str | Path, text: str) -> None:
    """Replace `path` with `text` at once (the temporary file carries the process id, so two
    writers never share one)."""
    path = Path(path)
    make_parent(path)
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


class LogBusy(InputError):
    """Another live process is writing the same output (`Appender(..., exclusive=True)`,
    `hold`): one writer per output."""


def lock(f: Any, path: str | Path) -> None:
    """Take the one-writer lock of an open file (or folder) descriptor; LogBusy when another
    live process holds it. The lock dies with its process, so a kill -9 never leaves it stale."""
    try:
        fcntl.flock(f if isinstance(f, int) else f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise LogBusy(f"{path}: is being written by another process (one writer per output: "
                      "wait for it to end, or choose another output path)") from None


class hold:
    """`with hold(path):` the one-writer lock of an output for the duration of a command:
    a file (created empty if missing, never truncated) or a folder (created if missing), for
    outputs written by code that opens them itself. A second process gets LogBusy at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __enter__(self) -> "hold":
        if self.path.is_dir():
            self._fd = os.open(self.path, os.O_RDONLY)
        else:
            make_parent(self.path)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            lock(self._fd, self.path)
        except LogBusy:
            os.close(self._fd)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)


class Appender:
    """Append JSON objects one line at a time, flushed so a crash loses at most one line.

    `exclusive`: one writer per file, for logs that several processes (shards) may be pointed at
    by mistake: a second process opening it gets `LogBusy` (the lock dies with its process, so a
    kill -9 never leaves it stale), and the partial last line a killed writer left is cut off
    first (it was never acknowledged: its work is redone). `sort_keys` as json.dumps'."""

    def __init__(self, path: str | Path, fsync_every: int = 200, *, exclusive: bool = False,
                 sort_keys: bool = False) -> None:
        make_parent(path)
        self._f = open(path, "a", encoding="utf-8")
        self._every, self._n, self._sort = fsync_every, 0, sort_keys
        if exclusive:
            try:
                lock(self._f, path)
            except LogBusy:
                self._f.close()
                raise
            cut_torn_tail(path)

    def write(self, obj: dict[str, Any]) -> None:
        self._f.write(json.dumps(obj, ensure_ascii=False, sort_keys=self._sort) + "\n")
        self._f.flush()
        self._n += 1
        if self._n % self._every == 0:
            os.fsync(self._f.fileno())

    def close(self) -> None:
        if self._f.closed:
            return
        self._f.flush()
        os.fsync(self._f.fileno())
        self._f.close()

    def __enter__(self) -> "Appender":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def torn_tail(f: BinaryIO) -> int | None:
    """Where the partial last line of an open binary file starts (the line a killed writer
    left), or None when the file is empty or ends with a newline; read backwards in blocks, so a
    long log is not read whole."""
    end = f.seek(0, os.SEEK_END)
    if end == 0:
        return None
    f.seek(end - 1)
    if f.read(1) == b"\n":
        return None
    pos, block = end, 65536
    while pos > 0:
        start = max(0, pos - block)
        f.seek(start)
        idx = f.read(pos - start).rfind(b"\n")
        if idx >= 0:
            return start + idx + 1
        pos = start
    return 0


def cut_torn_tail(path: str | Path) -> None:
    """Truncate a file after its last newline (the partial line a killed writer left)."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb+") as f:
        cut = torn_tail(f)
        if cut is not None:
            f.truncate(cut)


def complete_records(path: str | Path) -> Iterator[dict[str, Any]]:
    """The records of a log that may still be written or was killed mid-line: nothing when it
    does not exist, and a partial line passed over."""
    if Path(path).exists():
        for _, obj in numbered_records(path, skip_torn=True):
            yield obj
