"""The careful reading against a grader's verdicts on written reply shapes (issue 40).

`reply_battery.jsonl` holds reply shapes written to probe the reader over every benchmark and
answer kind: negations, hedges and lists, self-corrections, reasons naming other answers, a
belief beside the reality, option numbers, yes/no variants, JSON, Markdown emphasis, casing and
punctuation, tagged and untagged. Each line's `verdict` (right, wrong or unreadable) was decided
when the line was written, before the reader was run on it. Before the careful reading, the
layered reader credited 31 of the 115 wrong or unreadable shapes and missed 33 of the 130 right
ones; now it credits none and misses none.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.answers import score

from .conftest import tagged

DATA = Path(__file__).with_name("reply_battery.jsonl")
CASES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_battery_covers_every_benchmark_and_answer_kind():
    assert len(CASES) >= 150
    assert {c["verdict"] for c in CASES} == {"right", "wrong", "unreadable"}
    benchmarks = Counter(c["benchmark"] for c in CASES)
    assert {"tomi", "hitom", "bigtom", "tombench", "opentom", "socialiqa", "emobench", "fantom",
            "exploretom"} <= set(benchmarks)
    kinds = Counter(c["answer_type"] for c in CASES)
    assert {"choice", "short", "yes_no", "knowledge", "number"} <= set(kinds)
    shapes = {c["shape"] for c in CASES}
    assert {"negation", "hedge", "self-correction", "reason naming another answer",
            "belief beside reality", "tagged"} <= shapes
    for c in CASES:
        if c["answer_type"] == "choice":
            assert len(c["gold"]) == 1 and ord(c["gold"]) - 65 < len(c["choices"]), c
        if c["answer_type"] == "short" and c["candidates"]:
            assert c["gold"] in c["candidates"], c


def _verdict(c: dict):
    return score(c["reply"], c["gold"], c["answer_type"], c["choices"], c["candidates"],
                 question=c["question"])


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['benchmark']}:{c['shape']}:{c['reply'][:40]}")
def test_scored_as_the_grader_says(case):
    v = _verdict(case)
    assert v.correct == (case["verdict"] == "right"), (case["verdict"], v)


def test_no_wrong_or_unreadable_shape_is_credited_and_few_right_ones_are_missed():
    """The issue's goal on a battery: none credited wrongly, at most 5% of right replies missed."""
    credited = [c["reply"] for c in CASES if c["verdict"] != "right" and _verdict(c).correct]
    right = [c for c in CASES if c["verdict"] == "right"]
    missed = [c["reply"] for c in right if not _verdict(c).correct]
    assert credited == []
    assert len(missed) <= 0.05 * len(right), missed


# ---- a reply naming the gold and one other answer is never credited, whatever the gold

NAMES = ["blue_pantry", "red_drawer", "green_bathtub", "kitchen", "garden", "box", "basket",
         "Sally's mother", "happy", "sad", "angry", "the top shelf", "a red crate", "Company B"]
JOINS = ["{g} or {o}", "{o} or {g}", "{g}, {o}", "{g} and {o}", "Either {g} or {o}.",
         "{g}/{o}", "Both {g} and {o}.", "{g}. Or maybe {o}.", "It is {g} or {o}.",
         "Maybe {o}, maybe {g}.", "{g}, {o}", "{o} and {g}"]
LETTER_JOINS = ["{G} or {O}", "{O} or {G}", "{G}, {O}", "{G} and {O}", "({G}) or ({O})",
                "{G}/{O}", "Option {G} or option {O}", "The answer is {G} or {O}.", "{G}{O}"]


@st.composite
def two_answers(draw):
    options = draw(st.lists(st.sampled_from(NAMES), min_size=2, max_size=6, unique=True))
    g = draw(st.integers(0, len(options) - 1))
    o = draw(st.integers(0, len(options) - 1).filter(lambda k: k != g))
    return options, g, o


@settings(max_examples=300, deadline=None)
@given(two_answers(), st.sampled_from(JOINS), st.booleans(), st.sampled_from(["choice", "short"]))
def test_the_gold_and_another_answer_are_never_credited(drawn, join, with_tags, kind):
    options, g, o = drawn
    reply = join.format(g=options[g], o=options[o])
    reply = tagged(reply) if with_tags else reply
    if kind == "choice":
        v = score(reply, "ABCDEF"[g], "choice", options)
    else:
        v = score(reply, options[g], "short", (), options)
    assert not v.correct, (reply, v)


@settings(max_examples=200, deadline=None)
@given(two_answers(), st.sampled_from(LETTER_JOINS), st.booleans())
def test_the_gold_letter_and_another_letter_are_never_credited(drawn, join, with_tags):
    options, g, o = drawn
    reply = join.format(G="ABCDEF"[g], O="ABCDEF"[o])
    reply = tagged(reply) if with_tags else reply
    v = score(reply, "ABCDEF"[g], "choice", options)
    assert not v.correct, (reply, v)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["yes", "no"]), st.sampled_from(
    ["{g} or {o}", "{o} or {g}", "{g} and {o}", "{G}. Actually, {o}.", "{g}/{o}", "{G}, or {o}."]),
    st.booleans())
def test_yes_and_no_together_are_never_credited(gold, join, with_tags):
    other = "no" if gold == "yes" else "yes"
    reply = join.format(g=gold, o=other, G=gold.capitalize())
    reply = tagged(reply) if with_tags else reply
    assert not score(reply, gold, "yes_no").correct, reply


# ---- the same probes on the rows of every shared benchmark sample, through each benchmark's
# own scoring (its headline `correct`): a hedge, a negation or a correction away from the gold

def _probes(row: dict) -> list[str]:
    kind, gold = row["answer_type"], row["answer"]
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if kind == "choice":
        k = letters.index(gold)
        o = (k + 1) % len(row["choices"])
        gt, ot = row["choices"][k], row["choices"][o]
        return [f"Not {gold}.", f"{gold} or {letters[o]}", f"{letters[o]} or {gold}",
                f"Either {gt} or {ot}.", f"Not {gt}.", f"{gold}. {gt}. Actually {letters[o]}.",
                tagged(f"{gold} or {letters[o]}"), tagged(f"not {gold}"), f"Not ({gold}).",
                f"({gold}) or ({letters[o]})"]
    if kind == "yes_no":
        other = "yes" if gold.lower() == "no" else "no"
        return [f"{gold.capitalize()} or {other}.", f"{gold.capitalize()}. Actually, {other}.",
                tagged(f"{gold} or {other}"), f"{gold.capitalize()} and {other}, it depends."]
    if kind == "short":
        others = [c for c in (_meta(row).get("candidates") or []) if c != gold]
        o = others[0] if others else "nowhere"
        return [f"Not in the {gold}.", f"{gold} or {o}", f"Either the {gold} or the {o}.",
                f"{gold}. Actually, {o}.", tagged(f"{gold} or {o}"), tagged(f"not {gold}"),
                f"{gold} or nowhere"]
    return []


def _meta(row: dict) -> dict:
    return json.loads(row["meta"]) if isinstance(row["meta"], str) else row["meta"]


@pytest.mark.parametrize("name", ["tomi", "hitom", "tombench", "tomato", "opentom", "bigtom", "fantom",
                                  "emobench", "socialiqa", "gpqa_diamond", "agieval"])
def test_probes_on_the_shared_samples_are_never_credited(name):
    """Before the careful reading, 7,954 of 15,611 such probes on all the rows were scored right
    (51%: "<gold> or nowhere" on ToMi, "A or C" on ToMBench, ...); now none is."""
    from eval.benchmarks import get_benchmark
    from eval.benchmarks.base import record_for

    bench = get_benchmark(name)
    try:
        rows = bench.load_rows()
    except FileNotFoundError:
        pytest.skip(f"{name}: no shared sample")
    kinds = {"choice", "yes_no", "short"}
    rows = [r for r in rows if r["answer_type"] in kinds and not (
        name == "emobench" and r["answer_type"] != "choice") and not (
        name == "fantom" and _meta(r).get("question_type") not in ("belief_choice", "answerability_binary",
                                                                   "info_accessibility_binary"))][:40]
    credited = [(r["id"], p) for r in rows for p in _probes(r) if record_for(r, p, bench)["correct"]]
    assert credited == []


@pytest.mark.parametrize("reply,gold,credited", [
    ("The answer is A. Wait, the answer is B.", "B", True),
    ("The answer is A. Wait, the answer is B.", "A", False),
    ("The answer is B. Actually, the answer is A or C.", "B", False),  # corrected to a hedge
    ("The answer is A. The answer is B.", "B", False),  # two answers, no correction: none
    ("The answer is A. The answer is B.", "A", False),
])
def test_a_correction_between_answer_statements_answers_with_the_last(reply, gold, credited):
    v = score(reply, gold, "choice", ["box", "basket", "crate"])
    assert v.correct is credited, v


@pytest.mark.parametrize("reply,gold,credited", [
    ("\\boxed{16}. Actually, 17.", "16", False),
    ("\\boxed{16}. Actually, 17.", "17", True),
    (tagged("16, wait, 17"), "17", True),
    ("\\boxed{1/2}. Actually, 0.5.", "0.5", True),
    ("\\boxed{16}. Wait, 17 or 18.", "16", False),
    ("It is not \\boxed{16}.", "16", False),
    ("Since 3 + 4 = 7, the answer is \\boxed{7}.", "7", True),
])
def test_a_number_corrected_or_negated_after_its_box(reply, gold, credited):
    assert score(reply, gold, "number").correct is credited
