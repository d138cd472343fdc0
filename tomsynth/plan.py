"""`python -m tomsynth plan`: every unit with its factors, definition and rendered prompts, offline.

One row per unit; `messages` holds the exact conversation sent to the generator for each of the
unit's entries (entries differ only in the character names offered), so the plan documents the
whole synthesis job before any request is made.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from tomsynth.prompts import synthesis_messages
from tomsynth.units import select, units


def features():
    from datasets import Features, List, Value

    message = {"role": Value("string"), "content": Value("string")}
    return Features({
        "unit": Value("string"), "collection": Value("string"), "dimension": Value("string"),
        "mental_state": Value("string"), "mental_state_key": Value("string"),
        "definition": Value("string"), "domain": Value("string"), "situation": Value("string"),
        "format": Value("string"), "entry_ids": List(Value("string")),
        "names": List(List(Value("string"))), "messages": List(List(message)),
    })


def rows(collection: str, entries: int, limit_units: int | None = None) -> Iterable[dict]:
    for u in select(units(collection), limit_units):
        f = u.factors()
        yield {
            "unit": u.id, "collection": collection, "dimension": f["dimension"],
            "mental_state": f["mental_state"], "mental_state_key": f["mental_state_key"],
            "definition": u.mental_state.definition, "domain": f["domain"], "situation": f["situation"],
            "format": f["format"], "entry_ids": [u.entry_id(k) for k in range(entries)],
            "names": [u.names_for(k) for k in range(entries)],
            "messages": [synthesis_messages(u, k) for k in range(entries)],
        }


def run(out: Path, entries_per_unit: dict[str, int], collections: Iterable[str],
        limit_units: int | None = None):
    """Write a DatasetDict with one split per collection to `out`; returns it."""
    from datasets import Dataset, DatasetDict

    dd = DatasetDict({c: Dataset.from_list(list(rows(c, entries_per_unit[c], limit_units)), features=features())
                      for c in collections})
    dd.save_to_disk(str(out))
    return dd
