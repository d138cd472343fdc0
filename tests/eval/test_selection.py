"""eval.selection: what --limit and --sample take."""
from __future__ import annotations

from eval.rows import make_row, meta
from eval.selection import select_rows
from tests.eval.test_runner import tiny_task


def test_limit_takes_the_first_items_and_sample_a_seeded_draw(tmp_path):
    rows = tiny_task(tmp_path).rows
    first, record = select_rows(rows, limit=3)
    assert [r["id"] for r in first] == ["q0", "q1", "q2"]
    assert record == {"items_available": 10, "limit": 3, "items": 3}
    drawn, record = select_rows(rows, sample=4, seed=7, name="tiny")
    ids = [r["id"] for r in drawn]
    assert len(ids) == 4 and ids == sorted(ids, key=lambda i: int(i[1:]))  # release order kept
    assert record == {"items_available": 10, "sample": 4, "seed": 7, "items": 4}
    assert [r["id"] for r in select_rows(rows, sample=4, seed=7, name="tiny")[0]] == ids
    draws = {tuple(r["id"] for r in select_rows(rows, sample=4, seed=s, name="tiny")[0])
             for s in range(8)}
    assert len(draws) > 4  # the seed matters
    assert select_rows(rows, sample=4, seed=7, name="other")[0] != drawn  # each benchmark its own
    assert select_rows(rows, sample=50, seed=7)[0] == rows  # more than there is: all of them
    both, _ = select_rows(rows, sample=4, seed=7, name="tiny", limit=2)
    assert both == drawn[:2]


def test_rows_scored_together_are_taken_together():
    # FANToM's "All" scores a set's questions together; ToMBench votes over an item's orders
    rows = [make_row(id=f"s{s}-q{q}", source="x", user=f"set {s} question {q}", answer="yes",
                     answer_type="yes_no", meta={"set_id": s}) for s in range(5) for q in range(3)]
    first, record = select_rows(rows, limit=2)
    assert [r["id"] for r in first] == ["s0-q0", "s0-q1", "s0-q2", "s1-q0", "s1-q1", "s1-q2"]
    assert record["items_available"] == 5
    drawn, _ = select_rows(rows, sample=2, seed=1, name="fantom")
    sets = [r["id"].split("-")[0] for r in drawn]
    assert len(drawn) == 6 and len(set(sets)) == 2 and all(sets.count(s) == 3 for s in sets)


def test_sample_draws_from_every_task_and_limit_warns_when_it_drops_tasks():
    rows = [make_row(id=f"r{i}", source="t", user="q", answer="yes", answer_type="yes_no",
                     meta={"task": "big" if i < 90 else f"small{i % 3}"}) for i in range(100)]
    drawn, _ = select_rows(rows, sample=10, seed=0, name="t")
    tasks = {meta(r)["task"] for r in drawn}
    assert len(drawn) == 10 and tasks == {"big", "small0", "small1", "small2"}
    warnings = []
    select_rows(rows, limit=10, name="t", log=warnings.append)
    assert len(warnings) == 1 and "leaves out 3 of its 4 tasks" in warnings[0]
    assert "--sample 10" in warnings[0]
