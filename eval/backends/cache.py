"""A disk cache of model responses, shared safely by concurrent processes.

Keyed by a hash of everything that determines a response (backend kind, endpoint, model,
conversation, sampling parameters and extra request fields) and holding only what came back
(texts and token counts). Credentials and headers are never part of the key or the value, so a
cache file can be shared or published. Only successful responses are stored: an error is never
replayed from the cache.

SQLite in WAL mode lets several processes (the shards of `python -m tomsynth generate`) read and
write one file at once. Writes go through a background thread that commits them in batches: a
commit, and now and then a WAL checkpoint, can take tens of milliseconds, which would stall every
request of an event loop that wrote inline. `flush()` (called at the end of every batch of a
backend) and `close()` wait for the writes; a process killed in the middle of a batch may lose the
responses of its last fraction of a second (they are simply asked again), never corrupt the file.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import queue
import random
import sqlite3
import threading
import time
import weakref
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
        self._db = _connect(self.path)
        self._lock = threading.Lock()  # the read connection may be used from several threads
        self._pending: dict[str, str] = {}  # written by put, not yet committed
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._closed = False
        # Daemon writer threads outlive nothing: flush on interpreter exit.
        ref = weakref.ref(self)
        self._at_exit = lambda: ref() is not None and ref().close()
        atexit.register(self._at_exit)

    def get(self, key: str) -> dict[str, Any] | None:
        blob = self._pending.get(key)
        if blob is None:
            with self._lock:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            blob = row[0] if row else None
        return json.loads(blob) if blob is not None else None

    def put(self, key: str, value: dict[str, Any], *, kind: str = "", model: str = "") -> None:
        if self._closed:
            raise ValueError(f"cache {self.path} is closed")
        blob = json.dumps(value, ensure_ascii=False, sort_keys=True)
        self._pending[key] = blob
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="response-cache-writer", daemon=True)
            self._writer.start()
        self._queue.put((key, kind, model, blob, time.time()))

    def flush(self) -> None:
        """Return once everything `put` so far is committed."""
        if self._writer is not None and self._writer.is_alive():
            done = threading.Event()
            self._queue.put(done)
            done.wait()

    def __len__(self) -> int:
        self.flush()
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self._at_exit)
        if self._writer is not None and self._writer.is_alive():
            self._queue.put(None)
            self._writer.join()
        with self._lock:
            self._db.close()

    def _write_loop(self) -> None:
        db = _connect(self.path)
        stop = False
        while not stop:
            items = [self._queue.get()]
            while len(items) < 2000:  # whatever has queued up meanwhile goes in the same commit
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [i for i in items if isinstance(i, tuple)]
            if rows:
                _retry_locked(lambda: _insert(db, rows))
                for key, *_rest, blob, _t in rows:
                    if self._pending.get(key) == blob:
                        self._pending.pop(key, None)
            for i in items:
                if isinstance(i, threading.Event):
                    i.set()
                stop = stop or i is None
        db.close()


def _insert(db: sqlite3.Connection, rows: list[tuple]) -> None:
    db.execute("BEGIN IMMEDIATE")  # one transaction for the whole batch
    try:
        db.executemany("INSERT OR REPLACE INTO responses (key, kind, model, value, created) VALUES (?, ?, ?, ?, ?)",
                       rows)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _retry_locked(fn: Any) -> None:
    # The 60 s busy timeout covers ordinary contention; SQLite may still report "locked" at once
    # in a few situations (switching to WAL while another process opens the file).
    for attempt in range(100):
        try:
            return fn()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or attempt == 99:
                raise
            time.sleep(0.05 + 0.05 * random.random())


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=60, check_same_thread=False, isolation_level=None)

    def init() -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(SCHEMA)

    _retry_locked(init)
    # NORMAL is durable against a killed process (only a power cut can lose the last commits).
    db.execute("PRAGMA synchronous=NORMAL")
    return db
