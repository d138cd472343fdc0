"""eval.answers.verdict: the verdict of `score`, the rewards, and completions that try to earn
outcome credit without a correct well-formed answer."""
from __future__ import annotations

import time

import pytest

from eval.answers import Verdict, format_reward, is_correct, outcome_reward, score

from .conftest import OPTIONS, tagged

def test_unknown_answer_type_is_a_caller_error():
    with pytest.raises(ValueError, match="answer_type"):
        is_correct("B", "B", "letter")


def test_score_verdict():
    assert score(tagged("B"), "B", "choice", OPTIONS) == Verdict(True, "B", True, "tag")
    assert score("B", "B", "choice", OPTIONS) == Verdict(False, "B", True, "fallback")
    assert score(tagged("A"), "B", "choice", OPTIONS) == Verdict(True, "A", False, "tag")
    assert score("Maybe.", "B", "choice", OPTIONS) == Verdict(False, None, False, "none")


# ------------------------------------------------------------------------- reward hacking


@pytest.mark.parametrize(
    "completion",
    [
        tagged("A, B, C, D"),  # every option
        tagged("A B C D"),
        tagged("box basket crate bathtub"),
        tagged("A") + "<answer>B</answer>",  # two answer tags
        "<think>r</think><answer>B</answer><answer>B</answer>",
        "<think>r</think> B",  # answer outside the tags
        "Answer: B",
        "<think>r</think><answer></answer>",  # empty answer
        "<think>r</think><answer>B",  # unclosed
        "<think>" + "B " * 200_000 + "</think><answer>A</answer>",  # enormous reasoning, wrong answer
        tagged("B" + " filler" * 100_000),  # enormous answer
        "<think>r</think><answer>\\boxed{A} \\boxed{B}</answer>",
    ],
)
def test_hacks_get_no_outcome_credit(completion):
    assert outcome_reward(completion, "B", "choice", OPTIONS) == 0.0


def test_outcome_requires_format_and_correctness():
    assert outcome_reward(tagged("B"), "B", "choice", OPTIONS) == 1.0
    assert outcome_reward(tagged("basket"), "basket", "short") == 1.0
    assert outcome_reward(tagged("box"), "basket", "short") == 0.0
    assert format_reward(tagged("box")) + outcome_reward(tagged("box"), "basket", "short") == 0.0
    assert format_reward("basket") + outcome_reward("basket", "basket", "short") == -1.0


def test_enormous_outputs_are_cheap():
    huge = "<answer>" * 500_000 + "x" * 5_000_000 + "</think>" * 1000
    start = time.perf_counter()
    for t in ("choice", "short", "number", "yes_no", "knowledge"):
        score(huge, "B" if t == "choice" else "1", t, OPTIONS)
        outcome_reward(huge, "1", t)
    assert time.perf_counter() - start < 5.0
