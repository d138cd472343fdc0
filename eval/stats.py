"""The statistics the reports print: a binomial interval (Wilson), paired differences with a
bootstrap interval, and McNemar's exact test. Plain Python, deterministic for a seed.

Scores per item may be fractions (an item asked in several option orders scores the share of
orders answered right), so the paired functions take numbers, booleans included.
"""
from __future__ import annotations

import math
import random
from typing import Sequence

Z95 = 1.96


def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of k successes in n trials (k may be fractional: a sum of
    per-item scores)."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(values: Sequence[float], reps: int = 5000,
                   seed: int = 0) -> tuple[float, float, float]:
    """Mean of `values` and its 95% percentile interval over resampled values (items, or the
    units of a search comparison)."""
    rng = random.Random(seed)
    n = len(values)
    if n == 0:
        return 0.0, 0.0, 0.0
    values = [float(v) for v in values]
    stats = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(reps))
    return sum(values) / n, stats[int(0.025 * reps)], stats[int(0.975 * reps) - 1]


def paired_bootstrap(a: Sequence[float], b: Sequence[float], reps: int = 5000,
                     seed: int = 0) -> tuple[float, float, float]:
    """Mean of b - a over paired items and its 95% percentile interval over resampled items."""
    return bootstrap_mean([float(y) - float(x) for x, y in zip(a, b)], reps, seed)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided exact p-value that a and b are equally accurate (discordant pairs binomial)."""
    only_a = sum(bool(x) and not y for x, y in zip(a, b))
    only_b = sum(bool(y) and not x for x, y in zip(a, b))
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)
