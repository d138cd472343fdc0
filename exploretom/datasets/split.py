"""Which split each story goes to and which of its questions are kept: a story lands in exactly
one split, every split gets its share of every stratum, and the per-story cap, the interesting
share and the per-group balance are seeded, so the same inputs and seed give the same rows."""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Sequence

from exploretom.datasets.draws import stable_hash
from exploretom.datasets.stories import Group, Item

SPLITS = ("train", "validation", "test")


def assign_splits(stories: Sequence[tuple[str, str]], fractions: Sequence[float],
                  seed: int) -> dict[str, str]:
    """story id -> split, for (story id, stratum) pairs. Stories are ordered by stratum, then
    by a seeded hash of their id (so input order does not matter), and dealt one by one to the
    split furthest below its quota: every split gets its fraction of every stratum (within one
    story) and of the whole, and a story is in exactly one split."""
    ordered = sorted(stories, key=lambda s: (s[1], stable_hash(seed, "split", s[0]), s[0]))
    counts = [0] * len(SPLITS)
    out: dict[str, str] = {}
    for i, (sid, _) in enumerate(ordered, 1):
        j = max(range(len(SPLITS)), key=lambda j: (i * fractions[j] - counts[j], -j))
        counts[j] += 1
        out[sid] = SPLITS[j]
    return out


def cap_per_story(questions: list[tuple[int, dict]], k: int | None, seed: int, sid: str):
    if k is None or len(questions) <= k:
        return questions
    keep = set(random.Random(stable_hash(seed, "cap", sid)).sample(range(len(questions)), k))
    return [q for j, q in enumerate(questions) if j in keep]


def _target_counts(n_int: int, n_non: int, ratio: float) -> tuple[int, int]:
    """How many interesting / not interesting items to keep for the share `ratio`; all of
    both when the share cannot be reached (one side is empty)."""
    if (ratio > 0 and n_int == 0) or (ratio < 1 and n_non == 0):
        return n_int, n_non
    if ratio >= 1:
        return n_int, 0
    if ratio <= 0:
        return 0, n_non
    if n_int / (n_int + n_non) < ratio:
        return n_int, min(n_non, round(n_int * (1 - ratio) / ratio))
    return min(n_int, round(n_non * ratio / (1 - ratio))), n_non


def _spread(total: int, lo: dict[Group, int], hi: dict[Group, int]) -> dict[Group, int]:
    """Integers lo[g] <= x[g] <= hi[g] summing to `total` (lo <= total <= sum hi), the extra
    above lo spread in proportion to each group's room, so no group is emptied first."""
    x = dict(lo)
    extra = total - sum(lo.values())
    room = {g: hi[g] - lo[g] for g in lo}
    cap = sum(room.values())
    if extra <= 0 or cap == 0:
        return x
    shares = {g: extra * room[g] / cap for g in lo}
    for g in lo:
        x[g] += int(shares[g])
    left = total - sum(x.values())
    for g in sorted(lo, key=lambda g: (shares[g] - int(shares[g]), str(g)), reverse=True):
        if left == 0:
            break
        if x[g] < hi[g]:
            x[g] += 1
            left -= 1
    return x


def plan_counts(avail: dict[Group, tuple[int, int]], ratio: float | None,
                balance: bool) -> tuple[dict[Group, tuple[int, int]], bool]:
    """Per group, how many (interesting, not interesting) items to keep, given what each group
    has (`avail`); and False when balancing made the share unreachable."""
    if not avail:
        return {}, True
    if not balance:
        if ratio is None:
            return dict(avail), True
        # One pool: which items go is decided uniformly over all groups by the caller.
        n_int = sum(a for a, _ in avail.values())
        n_non = sum(b for _, b in avail.values())
        return {"*": _target_counts(n_int, n_non, ratio)}, True  # type: ignore[dict-item]
    groups = sorted(avail)
    m_max = min(a + b for a, b in avail.values())
    if ratio is None:
        return {g: _natural_split(avail[g], m_max) for g in groups}, True
    # Largest per-group count m at which the share can be met exactly. The reachable range of
    # shares narrows as m grows (max(0, m - non)/m rises, min(m, int)/m falls): scan downwards.
    for m in range(m_max, 0, -1):
        lo = {g: max(0, m - avail[g][1]) for g in groups}
        hi = {g: min(m, avail[g][0]) for g in groups}
        target = round(ratio * m * len(groups))
        if sum(lo.values()) <= target <= sum(hi.values()):
            x = _spread(target, lo, hi)
            return {g: (x[g], m - x[g]) for g in groups}, True
    # Unreachable at any size: keep the balanced maximum, as close to the share as it allows.
    lo = {g: max(0, m_max - avail[g][1]) for g in groups}
    hi = {g: min(m_max, avail[g][0]) for g in groups}
    target = min(max(round(ratio * m_max * len(groups)), sum(lo.values())), sum(hi.values()))
    x = _spread(target, lo, hi)
    return {g: (x[g], m_max - x[g]) for g in groups}, False


def _natural_split(have: tuple[int, int], m: int) -> tuple[int, int]:
    """m items of a group keeping its own interesting share (stratified)."""
    n_int, n_non = have
    k_int = round(m * n_int / (n_int + n_non)) if n_int + n_non else 0
    k_int = min(max(k_int, m - n_non), n_int)
    return k_int, m - k_int


def select(items: list[Item], ratio: float | None, balance: bool, seed: int,
           split: str) -> tuple[list[Item], bool]:
    """The items of one split kept by --interesting-ratio/--balance (seeded), in input order."""
    if (ratio is None and not balance) or not items:
        return items, True
    pools: dict[Any, tuple[list[Item], list[Item]]] = defaultdict(lambda: ([], []))
    for it in items:
        key = it.group if balance else "*"
        pools[key][0 if it.q["interesting"] else 1].append(it)
    avail = {k: (len(a), len(b)) for k, (a, b) in pools.items()}
    plan, reached = plan_counts(avail, ratio, balance)
    rng = random.Random(stable_hash(seed, "select", split))
    keep: set[int] = set()
    for key in sorted(pools, key=str):
        for pool, k in zip(pools[key], plan[key]):
            keep.update(id(it) for it in rng.sample(pool, k))
    kept = [it for it in items if id(it) in keep]
    if ratio is not None and kept:
        share = sum(bool(it.q["interesting"]) for it in kept) / len(kept)
        reached &= abs(share - ratio) <= 1 / len(kept)  # within one row of rounding
    return kept, reached
