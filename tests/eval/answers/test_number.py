"""eval.answers.number and the math reader (latex, algebra, structure): the cases in
math_cases.json (groups: `number` single values, `agieval` defects found on real AGIEval cloze
golds (data/v1/math.jsonl and gaokao-mathcloze.jsonl), `blanks` several blanks split at `;`,
`structures` tuples, intervals, sets, relations and expressions), AIME integers, and answers
that must stay cheap."""
from __future__ import annotations

import time

import pytest

from eval.answers import extract_answer, is_correct, outcome_reward, score

from .conftest import MATH_CASES, tagged


@pytest.mark.parametrize("case", MATH_CASES, ids=[f"{i}-{c['group']}" for i, c in enumerate(MATH_CASES)])
def test_math_case(case):
    assert isinstance(case["correct"], bool), case
    assert is_correct(case["answer"], case["gold"], "number") is case["correct"]


AIME_GOLDS = ["0", "7", "70", "204", "999"]


@pytest.mark.parametrize("gold", AIME_GOLDS)
def test_aime_integer_golds(gold):
    n = int(gold)
    for answer in (gold, f"0{gold}", f"\\boxed{{{gold}}}", f"${gold}$", f"{gold}.0", f"The answer is {gold}.",
                   f"x = {gold}", f"{gold} ways", f"\\text{{{gold}}}", f"\\frac{{{2 * n}}}{{2}}"):
        assert is_correct(answer, gold, "number"), answer
        assert outcome_reward(tagged(answer), gold, "number") == 1.0, answer
    wrong = (str(n + 1), f"-{n + 1}", f"{gold} or {n + 1}", f"{n + 1}, {gold}", f"{gold}+1", f"{gold}1",
             f"\\boxed{{{gold}}} \\boxed{{{n + 1}}}", f"x = {n + 1}, y = {gold}",
             f"\\pm {gold}" if n else "\\pm 1",
             f"{gold}-i", f"{gold} < x", "forty-two")
    for answer in wrong:
        assert not is_correct(answer, gold, "number"), answer
        assert outcome_reward(tagged(answer), gold, "number") == 0.0, answer


def test_blanks_mix_numbers_expressions_and_words():
    gold = "3;(1,2);x^2+1;parabola"
    assert is_correct("3; (1, 2); 1+x^2; \\text{parabola}", gold, "number")
    assert not is_correct("3; (2, 1); 1+x^2; parabola", gold, "number")
    assert not is_correct("3; (1, 2); x^2-1; parabola", gold, "number")
    assert not is_correct("3; (1, 2); x^2+1; hyperbola", gold, "number")


def test_several_math_answers_are_wrong():
    assert not is_correct("x=3, x=4", "4", "number")
    assert not is_correct("x = 4 or x = 5", "4", "number")
    assert not is_correct("\\pm 4", "4", "number")
    assert not is_correct("4\n5", "4", "number")
    # two answer blocks differing only in a sign are two answers (normalize alone drops signs)
    assert extract_answer(tagged("-42") + "<answer>42</answer>") == "-42\n42"
    assert not score(tagged("x+1") + "<answer>x-1</answer>", "x+1", "number").correct
    assert not score(tagged("x+1") + "<answer>x-1</answer>", "2x", "number").correct


@pytest.mark.parametrize(
    "answer",
    ["9^{9^9}", "9^9^9^9", "2^{2^{2^{2^{2^{2}}}}}", "\\exp(\\exp(\\exp(100)))", "e^{e^{e^{x}}}",
     "\\sin(e^{x^{64}})", "(x+y+z)^{64}", "((10^{1000}x)^{64})^{64}", "(" * 500 + "1" + ")" * 500,
     "\\frac{" * 60 + "1}{2}" * 60, "\\sqrt{" * 80 + "2" + "}" * 80, "x" * 390, "x^" * 190 + "2",
     "\\pm" * 100 + "1", ",".join(["x"] * 500), "1/0", "\\ln 0", "\\tan(\\pi/2)", "\\infty-\\infty",
     "\\sqrt[100000]{2}", "10^{4000}", "(2^{4000})^{1/2}", "\\sin(10^{1000})", ";" * 1000],
)
def test_pathological_math_is_cheap_and_total(answer):
    start = time.perf_counter()
    for gold in ("1", "x^2+1", "y=\\pm\\sqrt{3}x", "[0,1]", "1-5i", "a;b", answer):
        assert is_correct(answer, gold, "number") in (True, False)
        assert is_correct(gold, answer, "number") in (True, False)
    assert time.perf_counter() - start < 2.0
