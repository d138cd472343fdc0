"""Multiple-choice items asked in several option orders, so that a score is not a position habit.

A small model often answers one letter whatever the question (SmolLM2-135M-Instruct answers B to
58 of 64 BigToM items and scores 60.9% on two-option items that way). With `permutations: k` each
multiple-choice row is asked k times, its options shifted cyclically by 0, 1, ..., k-1 places (the
gold letter follows its option). With k equal to the number of options every option stands once at
every position, so an answerer that always picks the same position scores exactly chance; the
benchmark's metrics are the mean over the orders. Each copy keeps the item's id in `meta.item`, so
`--limit` and `--sample` take or leave an item's orders together, and records carry
`meta.option_shift`.

Rows are left in their release order when their options cannot be moved without changing their
meaning: items the benchmark already asks in several orders (ToMBench's own `permutations`),
answers that are sets of letters (AGIEval's multi-answer items), and prompts in which the lettered
option lines (`_common.option_lines`) do not appear exactly once.
"""
from __future__ import annotations

import json
from typing import Any

from eval.benchmarks._common import LETTERS, option_lines
from eval.rows import meta as meta_of

Row = dict[str, Any]


def movable(row: Row) -> bool:
    """Whether a row's options can be reordered (see the module docstring)."""
    if row.get("answer_type") != "choice" or len(row.get("choices") or ()) < 2:
        return False
    m = meta_of(row)
    if "permutation" in m or "gold_letters" in m:
        return False
    user = [t for t in row["prompt"] if t["role"] == "user"]
    return len(user) == 1 and user[0]["content"].count(option_lines(row["choices"])) == 1


def shifted(row: Row, shift: int) -> Row:
    """The row with its options moved `shift` places down (option i is shown at i + shift)."""
    n = len(row["choices"])
    order = [(i - shift) % n for i in range(n)]  # position p shows original option order[p]
    choices = [row["choices"][i] for i in order]
    gold = LETTERS[order.index(LETTERS.index(row["answer"]))]
    old_block, new_block = option_lines(row["choices"]), option_lines(choices)
    prompt = [dict(t, content=t["content"].replace(old_block, new_block)) if t["role"] == "user"
              else dict(t) for t in row["prompt"]]
    m = meta_of(row)
    m.update(item=m.get("item", row["id"]), option_shift=shift)
    # the release order keeps the row's id, so answers cached without permutations are reused
    rid = row["id"] if shift == 0 else f"{row['id']}#shift{shift}"
    return {**row, "id": rid, "prompt": prompt, "answer": gold,
            "choices": choices, "meta": json.dumps(m, ensure_ascii=False, sort_keys=True)}


def with_option_orders(rows: list[Row], k: int) -> tuple[list[Row], int]:
    """Each movable row asked in `k` orders (at most its number of options; the first is the
    release order); others once. Returns the rows and how many items were left unmoved."""
    if k < 1:
        raise ValueError(f"permutations must be >= 1, got {k}")
    out: list[Row] = []
    fixed = 0
    for row in rows:
        if k == 1:
            out.append(row)
        elif movable(row):
            out.extend(shifted(row, s) for s in range(min(k, len(row["choices"]))))
        else:
            fixed += row.get("answer_type") == "choice"
            out.append(row)
    return out, fixed
