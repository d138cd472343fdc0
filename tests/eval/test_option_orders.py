"""eval.option_orders: multiple-choice items asked in several option orders."""
from __future__ import annotations

import json

import pytest

from eval.benchmarks._common import choice_block
from eval.option_orders import movable, with_option_orders
from eval.rows import make_row, meta, user_text


def mc_row(rid="q1", options=("box", "basket", "crate"), gold="B", **extra):
    return make_row(id=rid, source="t", user="Story.\n\n" + choice_block("Where?", options),
                    answer=gold, answer_type="choice", choices=options, meta=extra)


def test_each_option_stands_once_at_every_position_and_the_gold_follows_it():
    rows, fixed = with_option_orders([mc_row()], 3)
    assert fixed == 0 and len(rows) == 3
    assert [r["id"] for r in rows] == ["q1", "q1#shift1", "q1#shift2"]  # release order keeps its id
    assert [r["choices"] for r in rows] == [["box", "basket", "crate"], ["crate", "box", "basket"],
                                            ["basket", "crate", "box"]]
    assert [r["answer"] for r in rows] == ["B", "C", "A"]
    for r in rows:
        assert r["choices"][ord(r["answer"]) - 65] == "basket"
        text = user_text(r)
        assert all(f"{chr(65 + i)}. {o}" in text for i, o in enumerate(r["choices"]))
        assert meta(r)["item"] == "q1"
    # a habit of one position is right exactly once in three orders: chance
    assert sum(r["answer"] == "B" for r in rows) == 1


def test_k_is_capped_by_the_options_and_one_order_changes_nothing():
    row = mc_row(options=("yes", "no"), gold="A")
    assert len(with_option_orders([row], 5)[0]) == 2
    assert with_option_orders([row], 1) == ([row], 0)
    with pytest.raises(ValueError):
        with_option_orders([row], 0)


@pytest.mark.parametrize("row", [
    mc_row(permutation=0),  # ToMBench asks its own orders
    mc_row(gold_letters=["A", "C"]),  # a set of letters as the answer
    make_row(id="x", source="t", user="Pick one: box or basket", answer="B", answer_type="choice",
             choices=["box", "basket"]),  # no lettered option lines in the prompt
])
def test_rows_whose_options_cannot_move_keep_their_order(row):
    assert not movable(row)
    assert with_option_orders([row], 3) == ([row], 1)


def test_other_rows_pass_through():
    short = make_row(id="s", source="t", user="Where?", answer="box", answer_type="short")
    assert with_option_orders([short], 3) == ([short], 0)
    assert json.loads(with_option_orders([mc_row()], 2)[0][1]["meta"])["option_shift"] == 1
