"""eval.stats: the intervals and tests the reports print, checked against values worked by hand."""
from __future__ import annotations

import pytest

from eval.stats import mcnemar_exact, paired_bootstrap, wilson


def test_wilson_matches_the_closed_form_and_takes_fractional_counts():
    lo, hi = wilson(48, 60)  # p = 0.8: (0.8 + 0.032) / 1.064 -+ 1.96 * 0.0552 / 1.064
    assert lo == pytest.approx(0.6822, abs=1e-4) and hi == pytest.approx(0.8817, abs=1e-4)
    assert wilson(0, 0) == (0.0, 0.0)
    half, whole = wilson(30.5, 61), wilson(61, 122)  # the same p: half the items, a wider interval
    assert half[0] < whole[0] < 0.5 < whole[1] < half[1]
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0


def test_paired_bootstrap_is_seeded_and_brackets_the_mean_difference():
    a = [1, 0, 1, 0, 1, 0, 1, 0] * 10
    b = [1, 1, 1, 0, 1, 1, 1, 0] * 10
    mean, lo, hi = paired_bootstrap(a, b, seed=3)
    assert mean == pytest.approx(0.25) and lo < 0.25 < hi and lo > 0
    assert paired_bootstrap(a, b, seed=3) == (mean, lo, hi)
    assert paired_bootstrap([0.5, 1.0], [1.0, 1.0])[0] == pytest.approx(0.25)  # fractional items
    assert paired_bootstrap([], []) == (0.0, 0.0, 0.0)


def test_mcnemar_exact_counts_only_discordant_pairs():
    assert mcnemar_exact([1, 1, 0], [1, 1, 0]) == 1.0
    # 6 pairs only b gets right, 0 only a: 2 * 0.5 ** 6
    assert mcnemar_exact([0] * 6 + [1] * 4, [1] * 10) == pytest.approx(2 / 64)


def test_bootstrap_mean_is_the_paired_bootstrap_of_differences():
    from eval.stats import bootstrap_mean

    diffs = [0.2, -0.1, 0.4, 0.0, 0.3]
    assert bootstrap_mean(diffs, seed=7) == paired_bootstrap([0.0] * 5, diffs, seed=7)
    assert bootstrap_mean([0.5]) == (0.5, 0.5, 0.5)  # one unit: no spread to resample
