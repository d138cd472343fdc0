"""Synthesis: one generator request per (unit, entry), written to disk as each one finishes.

Every finished request appends one record to `<out_dir>/raw/shard-<i>-of-<n>.jsonl` (see
`eval.jsonl.Appender`). A re-run reads every raw log first and only asks for entries without a
successful record, so after `kill -9` at any point nothing is lost (work in flight is redone, and
the response cache usually answers it for free) and nothing is duplicated. Failed requests are
logged too (for the report) and retried by the next run.
"""
from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from eval.backends.base import Completion
from eval.jsonl import write_json
from eval.replies import text_problem
from tomsynth.config import Config
from tomsynth.prompts import synthesis_messages
from eval.jsonl import Appender, complete_records
from tomsynth.units import Unit, select, units


@dataclass(frozen=True)
class Request:
    unit: Unit
    k: int

    @property
    def entry_id(self) -> str:
        return self.unit.entry_id(self.k)


def requests(cfg: Config, *, collections: Iterable[str] | None = None,
             limit_units: int | None = None) -> list[Request]:
    """Every request of the run, in a fixed order (collection, unit, entry)."""
    out = []
    for c in collections or cfg.collections:
        for u in select(units(c), limit_units):
            out += [Request(u, k) for k in range(cfg.entries_per_unit[c])]
    return out


def raw_dir(cfg: Config) -> Path:
    return cfg.out_dir / "raw"


def raw_records(cfg: Config) -> Iterable[dict]:
    for path in sorted(raw_dir(cfg).glob("shard-*.jsonl")):
        yield from complete_records(path)


def done_entries(cfg: Config) -> set[str]:
    """Entries with a successful generator reply in any raw log (from any sharding)."""
    return {r["entry_id"] for r in raw_records(cfg) if r.get("ok") and "entry_id" in r}


@dataclass
class GenerateSummary:
    requested: int
    already_done: int
    attempted: int
    succeeded: int
    failed: int
    usage: dict
    # replies that came back but will not pass the filter's first check (eval.replies): cut off,
    # refused or empty; they are kept in the raw log, so the filter can say so
    problems: Counter = field(default_factory=Counter)

    @property
    def complete(self) -> bool:
        return self.failed == 0


def run(cfg: Config, *, shard: tuple[int, int] = (0, 1), limit_units: int | None = None,
        collections: Iterable[str] | None = None, progress: bool = True) -> GenerateSummary:
    i, n = shard
    mine = [r for j, r in enumerate(requests(cfg, collections=collections, limit_units=limit_units))
            if j % n == i]
    done = done_entries(cfg)
    todo = [r for r in mine if r.entry_id not in done]
    backend = cfg.backend("generator")
    gen = cfg.generator.generation()
    log = Appender(raw_dir(cfg) / f"shard-{i:03d}-of-{n:03d}.jsonl", exclusive=True, sort_keys=True)
    ok = failed = 0
    problems: Counter = Counter()

    def on_result(idx: int, c: Completion) -> None:
        nonlocal ok, failed
        r = todo[idx]
        log.write({
            "entry_id": r.entry_id, "unit": r.unit.id, "collection": r.unit.collection, "k": r.k,
            "ok": c.ok, "text": c.text if c.ok else None, "error": c.error,
            "finish_reason": c.finish_reason(),
            "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
            "cached": c.cached, "backend": backend.name, "model": backend.model,
            "names": r.unit.names_for(r.k),
            "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        })
        if c.ok:
            ok += 1
            found = text_problem(c.text, c.finish_reason())
            if found:
                problems[found] += 1
        else:
            failed += 1

    try:
        if todo:
            backend.generate([synthesis_messages(r.unit, r.k) for r in todo], gen,
                             on_result=on_result, progress=progress)
    finally:
        log.close()
        backend.close()
    usage = backend.usage_summary()
    summary = GenerateSummary(requested=len(mine), already_done=len(mine) - len(todo),
                              attempted=len(todo), succeeded=ok, failed=failed, usage=usage,
                              problems=problems)
    if todo:
        write_json(cfg.out_dir / "reports" / "usage" / f"generate-{time.time_ns()}-shard-{i}-of-{n}.json",
                   {"role": "generator", "backend": backend.describe(), "shard": f"{i}/{n}",
                    "requested": summary.requested, "already_done": summary.already_done,
                    "succeeded": ok, "failed": failed, "usage": usage}, sort_keys=True)
    return summary
