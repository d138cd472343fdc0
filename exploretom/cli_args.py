"""Argument helpers shared by `python -m exploretom` and the stage modules it dispatches to
(`KEY=VALUE` options, shards, counts and exit codes are every command's: eval.cli_common).

Kept apart from `cli.py` so that the stages (`datasets.export`, `report.command`, and the entry
points `bench`, `bench_target`, `search_floor`) can use them without importing the command line
that imports them: imports in `exploretom/` run one way.
"""
from __future__ import annotations

import argparse
import random
from typing import Any

from exploretom.sampling.action_sets import Conditions
from exploretom.sampling.sampler import sample_story
from exploretom.semantics.label import story_text
from exploretom.semantics.questions import CONTAINER, KNOWLEDGE, ROOM, STATE, generate_questions


class UsageError(ValueError):
    """A bad argument; printed as one line."""


def story_id(cond: Conditions, seed: int, k: int) -> str:
    asym = "-asym" if cond.asymmetric else ""
    return (f"{cond.action_set}{asym}-p{cond.people}-m{cond.moves}-r{cond.rooms}"
            f"-n{cond.max_actions}-s{seed}-{k:06d}")


def sample_one(cond: Conditions, seed: int, k: int, label: bool, max_order: int,
               contexts=None, steered: bool = True, constrained: bool = True) -> dict[str, Any]:
    """Story number k of a run: its own random stream, so shards and re-runs agree."""
    rng = random.Random(f"{seed}:{k}")
    story, tracker = sample_story(cond, rng, story_id(cond, seed, k), max_order=max_order,
                                  contexts=contexts, steered=steered, constrained=constrained)
    out = story.to_json()
    if label:
        out["text"] = story_text(tracker)
        out["questions"] = generate_questions(tracker)
    return out


def orders_arg(text: str) -> list[int] | None:
    """--orders: comma-separated orders, or `all` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        orders = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated orders like 0,1,2 or 'all', "
                                         f"got {text!r}") from None
    if not orders or orders[0] < 0:
        raise argparse.ArgumentTypeError(f"orders must be >= 0, got {text!r}")
    return orders


PROPERTIES = (ROOM, CONTAINER, KNOWLEDGE, STATE)


def properties_arg(text: str) -> list[str]:
    """--properties: comma-separated question properties."""
    names = sorted({x.strip() for x in text.split(",") if x.strip()})
    unknown = [n for n in names if n not in PROPERTIES]
    if not names or unknown:
        raise argparse.ArgumentTypeError(f"expected comma-separated properties among "
                                         f"{', '.join(PROPERTIES)}, got {text!r}")
    return names
