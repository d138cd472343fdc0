"""A `contexts` output file as the story sampler uses it: every record checked, then made into
the sampler's `Context`."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from eval.jsonl import InputError, read_jsonl
from exploretom.contexts.validation import context_problems
from exploretom.sampling.lexicon import Context, StateUpdate


def context_from_record(record: dict[str, Any], people: int | None = None,
                        rooms: int | None = None, rng: random.Random | None = None) -> Context:
    """A sampler `Context` from one validated record: its first `people` characters and first
    `rooms` rooms (the starting room first), the first object and its containers."""
    ppl = record["people"][:people] if people else record["people"]
    obj = record["objects"][0] if rng is None else rng.choice(record["objects"])
    return Context(
        setting=record["id"], description=record["description"],
        people=tuple(p["name"] for p in ppl), roles=tuple(p["role"] for p in ppl),
        rooms=tuple(record["rooms"][:rooms] if rooms else record["rooms"]),
        object=obj["name"], containers=tuple(obj["containers"]), topics=tuple(record["topics"]),
        state_updates=tuple(StateUpdate(**u) for u in obj["state_updates"]))


def read_contexts(path: str | Path) -> list[dict[str, Any]]:
    """The context records of a `contexts` output file, each checked; InputError names the
    file, line and field of the first defect."""
    out = []
    for n, record in enumerate(read_jsonl(path), 1):
        problems = context_problems(record)
        if problems:
            raise InputError(f"{path}: context {n} ({record.get('id')!r}): {problems[0][1]}")
        out.append(record)
    if not out:
        raise InputError(f"{path}: no contexts")
    return out
