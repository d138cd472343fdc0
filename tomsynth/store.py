"""Append-only JSONL logs that survive `kill -9` at any point.

Each record is one line written with a single `write` call on a file opened with O_APPEND, so
a killed process leaves at most one incomplete last line. Opening a log for appending first cuts
such a torn tail off (it was never acknowledged, so the work is simply redone), and readers skip
it, so a record is either wholly present or absent.
"""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any, Iterator


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The complete records of a log (a torn last line is ignored)."""
    if not path.exists():
        return
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return  # torn tail of a killed writer
            try:
                record = json.loads(raw)
            except ValueError:
                continue
            if isinstance(record, dict):
                yield record


class LogBusy(RuntimeError):
    """Another live process is appending to the same log."""


class AppendLog:
    """`append(record)` adds one line and makes it visible to other processes immediately.
    One writer per file: a second process opening the same log gets `LogBusy`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            # Released by the kernel when the process dies, so a kill -9 never leaves it stale.
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            self._fd = -1
            raise LogBusy(f"{self.path} is being written by another process") from None
        _cut_torn_tail(self.path)

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        view = memoryview(line)
        while view:  # os.write may write less than asked (never in practice for regular files)
            view = view[os.write(self._fd, view):]

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> "AppendLog":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _cut_torn_tail(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        # Walk back to the last newline and truncate after it.
        pos = f.seek(0, os.SEEK_END)
        block = 65536
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            idx = chunk.rfind(b"\n")
            if idx >= 0:
                f.truncate(start + idx + 1)
                return
            pos = start
        f.truncate(0)
