"""How many questions of each group a split keeps (`exploretom.datasets.split.plan_counts`); the
splits themselves are checked end to end in test_export.py."""
from __future__ import annotations

from exploretom.datasets.split import plan_counts


def test_plan_counts_meets_share_across_balanced_groups():
    avail = {("belief", "room_location", 1): (10, 30), ("belief", "state", 1): (40, 5),
             ("ground_truth", "room_location", 0): (0, 50)}
    plan, reached = plan_counts(avail, 0.4, balance=True)
    assert reached and {a + b for a, b in plan.values()} == {40}  # the smallest group, whole
    assert sum(a for a, _ in plan.values()) == 48  # 40% of 3 x 40
    # half interesting needs 1.5m interesting rows from groups holding 10 and min(m, 40):
    # 10 + m >= 1.5m, so the groups shrink to m = 20
    plan, reached = plan_counts(avail, 0.5, balance=True)
    assert reached and {a + b for a, b in plan.values()} == {20}
    assert plan[("belief", "room_location", 1)] == (10, 10)
    assert sum(a for a, _ in plan.values()) == 30
    assert all(a <= avail[g][0] and b <= avail[g][1] for g, (a, b) in plan.items())
    # every group holds no interesting question: the share cannot be met, balance still holds
    plan, reached = plan_counts({("g", "x", 0): (0, 9), ("g", "y", 0): (0, 4)}, 0.5, True)
    assert not reached and plan == {("g", "x", 0): (0, 4), ("g", "y", 0): (0, 4)}
