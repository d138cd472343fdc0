"""A disk cache of model responses, shared safely by concurrent processes.

Keyed by a hash of everything that determines a response (backend kind, endpoint, model,
conversation, sampling parameters and extra request fields) and holding only what came back
(texts and token counts). Credentials and headers are never part of the key or the value, so a
cache file can be shared or published. Only successful responses are stored: an error is never
replayed from the cache.

SQLite in WAL mode lets several processes (the shards of `python -m tomsynth generate`) read and
write one file at once; a write is one short transaction, so a process killed at any point leaves
either the whole entry or none of it.
"""
from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Sequence

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    model TEXT NOT NULL,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(
    kind: str,
    base_url: str,
    model: str,
    messages: Sequence[dict],
    params: dict[str, Any],
) -> str:
    """A stable hex digest of one request; `params` holds sampling settings and extra fields."""
    blob = json.dumps(
        {"kind": kind, "base_url": base_url.rstrip("/"), "model": model,
         "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
         "params": params},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """`get(key)` -> the stored dict or None; `put(key, value)` stores a successful response."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per cache object, used from the event loop's thread; the lock covers
        # the rare case of a backend driven from several threads.
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        # Switching to WAL needs a moment of exclusive access, and SQLite may report "locked"
        # at once instead of waiting when several processes open a new file together.
        for attempt in range(100):
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(SCHEMA)
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == 99:
                    raise
                time.sleep(0.05 + 0.05 * random.random())
        # NORMAL is durable against a killed process (only a power cut can lose the last writes).
        self._db.execute("PRAGMA synchronous=NORMAL")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any], *, kind: str = "", model: str = "") -> None:
        blob = json.dumps(value, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, kind, model, value, created) VALUES (?, ?, ?, ?, ?)",
                (key, kind, model, blob, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
