"""Which rows a run takes: `--limit` (the first items in release order) and `--sample` (items
drawn at random, seeded per benchmark, in proportion per task). An item is the unit rows are
scored as: ToMBench's option orders of one question, FANToM's questions of one set, else a row.
"""
from __future__ import annotations

import random
from typing import Any, Callable

from eval.rows import meta

Row = dict[str, Any]
Log = Callable[[str], None]

# meta keys naming the item a row belongs to, when several rows are scored as one: ToMBench's
# option orders of one question (majority vote), FANToM's questions of one set ("All" scores)
ITEM_KEYS = ("item", "set_id")


def item_of(row: Row) -> str:
    """The item a row (or a sample record) belongs to: the unit that --limit and --sample count
    and reports pair on; rows scored together stay together."""
    m = meta(row)
    return next((f"{k}={m[k]}" for k in ITEM_KEYS if m.get(k) is not None), row["id"])


def select_rows(rows: list[Row], *, limit: int | None = None, sample: int | None = None,
                seed: int = 0, name: str = "", log: Log | None = None) -> tuple[list[Row], dict[str, Any]]:
    """`sample` items drawn at random (seeded by `seed` and the benchmark's name, so each
    benchmark's draw is fixed and independent of the others), kept in release order; then the
    first `limit` of them. A benchmark whose rows name their task (`meta.task`: OpenToM, EmoBench,
    AGIEval, ToMBench) is sampled per task in proportion, at least one item each, so a quick
    check covers every task; `limit` takes items in release order and `log` is told when that
    leaves whole tasks out. Returns the rows and a record of what was taken."""
    items: dict[str, list[Row]] = {}
    for row in rows:
        items.setdefault(item_of(row), []).append(row)
    keys = list(items)
    task_of = {k: str(meta(items[k][0]).get("task", "")) for k in keys}
    tasks = sorted(set(task_of.values()))
    record: dict[str, Any] = {"items_available": len(keys)}
    if sample is not None:
        if sample < len(keys):
            chosen = _stratified(keys, task_of, tasks, sample, f"{seed}:{name}")
            keys = [k for k in keys if k in chosen]
        record.update(sample=sample, seed=seed)
    if limit is not None:
        keys = keys[:limit]
        record["limit"] = limit
        left_out = sorted(set(tasks) - {task_of[k] for k in keys})
        if left_out and len(tasks) > 1 and log is not None:
            log(f"warning: {name}: --limit {limit} takes items in release order and leaves out "
                f"{len(left_out)} of its {len(tasks)} tasks ({', '.join(left_out[:5])}"
                f"{', ...' if len(left_out) > 5 else ''}); --sample {limit} draws from every task")
    record["items"] = len(keys)
    return [row for k in keys for row in items[k]], record


def _stratified(keys: list[str], task_of: dict[str, str], tasks: list[str], n: int,
                seed: str) -> set[str]:
    """`n` of `keys` at random; with several tasks, each task's share in proportion to its size
    (largest remainders), at least one item each when `n` allows."""
    if len(tasks) < 2:
        return {keys[i] for i in random.Random(seed).sample(range(len(keys)), n)}
    by_task = {t: [k for k in keys if task_of[k] == t] for t in tasks}
    quota = {t: n * len(by_task[t]) / len(keys) for t in tasks}
    take = {t: min(len(by_task[t]), max(1 if n >= len(tasks) else 0, int(quota[t]))) for t in tasks}
    for t in sorted(tasks, key=lambda t: quota[t] - int(quota[t]), reverse=True):
        if sum(take.values()) >= n:
            break
        if take[t] < len(by_task[t]):
            take[t] += 1
    while sum(take.values()) > n:  # the at-least-one rule overshot: trim the largest
        t = max(tasks, key=lambda t: take[t])
        take[t] -= 1
    chosen: set[str] = set()
    for t in tasks:
        rng = random.Random(f"{seed}:{t}")
        chosen.update(rng.sample(by_task[t], take[t]))
    return chosen
