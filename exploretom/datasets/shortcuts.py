"""`export --balance-shortcuts`: keep the belief questions of a split so that no reading shortcut
beats chance on them.

A reader that ignores who saw what can still answer a belief question by where its container sits
in the text: the last container the story mentions, the first, the most named, or where the object
really is (`eval.shortcuts`). On the real recipe's export a true belief is the last-mentioned
container 96-100% of the time and a false belief the first-mentioned one 62-67%; ToMi's are 100%
each. Per order, over true and false beliefs pooled (the reader does not know which one it
faces), this step keeps the largest set of questions on which each shortcut's answer is the gold
as often as chance (one in the number of containers the story names, averaged over the kept
questions), within `TOLERANCE`: then neither always answering a shortcut nor always avoiding it
pays, and the answer has to come from who saw which move.

The questions are bucketed by which shortcuts their gold equals and by their number of
containers; an integer program (scipy's HiGHS) picks how many of each bucket to keep, and a
seeded draw picks which. Questions of other kinds (reality, memory, state, knowledge, rooms) are
kept as they are: their wording names their rule ("now", "at the beginning").
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Sequence

from eval.benchmarks.exploretom import user_prompt
from eval.shortcuts import SHORTCUTS, ShortcutItem, exploretom_item
from exploretom.datasets.draws import stable_hash
from exploretom.datasets.rows import row_meta
from exploretom.datasets.stories import Item

TOLERANCE = 0.02  # each shortcut's accuracy within 2 points of the chance level


def shortcut_item(it: Item) -> ShortcutItem | None:
    """The shortcut view of an export item (its candidates set by add_reasoning), read as the
    row it becomes: the same reader measures the export and the exported rows."""
    row = {"id": f"{it.story.id}-q{it.index}",
           "prompt": [{"role": "user", "content": user_prompt(it.story.text, it.q)}],
           "answer": it.q["answer"], "answer_type": it.q["answer_type"],
           "meta": {**row_meta(it), "candidates": it.candidates}}
    return exploretom_item(row)


def plan(buckets: dict[tuple, int], tolerance: float = TOLERANCE) -> dict[tuple, int]:
    """How many questions to keep of each (signature, containers) bucket: the most in all such
    that for every shortcut, the share whose gold is its answer is within `tolerance` of the
    mean chance. A signature is one 0/1 per shortcut of SHORTCUTS."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp

    keys = sorted(buckets)
    if not keys:
        return {}
    hits = np.array([sig for sig, _ in keys], dtype=float)  # bucket x shortcut
    chance = np.array([1 / k for _, k in keys])
    # sum_b n_b (hit_bs - chance_b) within +-tolerance * sum_b n_b, for every shortcut s
    a = (hits - chance[:, None]).T
    rows = np.vstack([a - tolerance, -a - tolerance])
    res = milp(c=-np.ones(len(keys)), integrality=np.ones(len(keys)),
               bounds=Bounds(0, np.array([buckets[k] for k in keys], dtype=float)),
               constraints=LinearConstraint(rows, -np.inf, 0))
    if res.x is None:  # no solution but keeping nothing, which always fits: nothing is kept
        return {k: 0 for k in keys}
    return {k: int(round(x)) for k, x in zip(keys, res.x)}


def balance(items: Sequence[Item], seed: int, split: str,
            tolerance: float = TOLERANCE) -> tuple[list[Item], dict[str, Any]]:
    """The items kept (input order) and, per belief order, the counts before and after."""
    views = [shortcut_item(it) for it in items]
    groups: dict[int, dict[tuple, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, v in enumerate(views):
        if v is not None and v.kind.endswith("belief") and v.gold is not None:
            sig = tuple(int(v.answers.get(s) == v.gold) for s in SHORTCUTS)
            groups[v.order][(sig, len(v.candidates))].append(i)
    rng = random.Random(stable_hash(seed, "shortcuts", split))
    drop: set[int] = set()
    report: dict[str, Any] = {}
    for order in sorted(groups):
        buckets = groups[order]
        counts = plan({k: len(v) for k, v in buckets.items()}, tolerance)
        for key in sorted(buckets):
            pool = buckets[key]
            keep = set(rng.sample(pool, counts[key]))
            drop.update(i for i in pool if i not in keep)
        report[str(order)] = {"before": sum(len(v) for v in buckets.values()),
                              "after": sum(counts.values())}
    return [it for i, it in enumerate(items) if i not in drop], report
