"""Hypothesis properties of the whole parser: total, deterministic, normalisation-invariant,
presentation-invariant for math, rewards in {-1, 0, 1}."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval.answers import format_reward, is_correct, normalize, outcome_reward, score

from .conftest import MATH_CASES, OPTIONS, tagged

PIECES = st.sampled_from(
    ["<think>", "</think>", "<answer>", "</answer>", "<ANSWER>", "\\boxed{", "}", "Answer:",
     "the answer is", "A", "B", "(C)", "yes", "no", "not", "knows about it", "basket", "box",
     "42", "1/2", "\\frac{1}{2}", "\\sqrt{", "^", "9", "=", ",", " or ", "\n", " ", "$", "**",
     "x", "i", "\\pm", "\\infty", "\\left(", "\\right]", "[", ")", ";", "-", "+", "\\mathrm{i}",
     "\\text{", "\\cup", "\\{", "\\}", "e^{", "\\le"]
)
COMPLETIONS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=40).map("".join),
)
GOLDS = st.sampled_from(
    [("B", "choice"), ("A", "choice"), ("yes", "yes_no"), ("no", "yes_no"), ("basket", "short"),
     ("knows about it", "knowledge"), ("does not know about it", "knowledge"), ("42", "number"),
     ("1/2", "number"), ("\\sqrt{2}", "number"), ("70", "number"), ("1-5\\mathrm{i}", "number"),
     ("y=\\pm\\sqrt{3}x", "number"), ("\\left[0,\\frac{343}{27}\\right]", "number"),
     ("-x^7-2x^5+x^2", "number"), ("\\frac{2\\sqrt{5}}{5};\\frac{\\sqrt{5}}{5}", "number"),
     ("\\text{parabola}", "number")]
)
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(COMPLETIONS, GOLDS, st.booleans())
def test_total_deterministic_and_rewards_in_range(completion, gold_type, with_choices):
    gold, answer_type = gold_type
    choices = OPTIONS if with_choices or answer_type == "choice" else ()
    first = score(completion, gold, answer_type, choices)
    assert first == score(completion, gold, answer_type, choices)
    assert first.extracted is None or isinstance(first.extracted, str)
    total = format_reward(completion) + outcome_reward(completion, gold, answer_type, choices)
    assert total in (-1.0, 0.0, 1.0)
    if total == 1.0:
        assert first.format_ok and first.correct


@PROPS
@given(st.text(max_size=200), st.text(max_size=30), st.sampled_from(
    ["choice", "yes_no", "short", "knowledge", "number"]))
def test_is_correct_total_on_any_strings(answer, gold, answer_type):
    assert is_correct(answer, gold, answer_type, [answer, gold]) in (True, False)
    assert isinstance(normalize(answer), str)


def _vary(draw, text: str, *, articles: bool) -> str:
    """A rewrite of `text` that changes only case, whitespace, articles and punctuation."""
    case = draw(st.sampled_from([str.lower, str.upper, str.title, str.capitalize, lambda s: s]))
    out = case(text)
    if articles:
        out = draw(st.sampled_from(["", "the ", "The ", "a ", "an "])) + out
    out = draw(st.sampled_from(["", "\"", "'", "("])) + out
    out = out + draw(st.sampled_from(["", ".", "!", "?", ")", "\"", ".)", ";"]))
    pad = draw(st.sampled_from(["", " ", "  ", "\n", "\t"]))
    return pad + out.replace(" ", draw(st.sampled_from([" ", "  ", " \t "]))) + pad


CORRECT_ANSWERS = [
    ("basket", "basket", "short", (), True),
    ("green basket", "green_basket", "short", (), True),
    ("basket", "B", "choice", OPTIONS, True),
    ("bathtub", "D", "choice", OPTIONS, True),
    ("B", "B", "choice", OPTIONS, False),
    ("(C)", "C", "choice", OPTIONS, False),
    ("yes", "yes", "yes_no", (), True),
    ("no", "no", "yes_no", (), True),
    ("knows about it", "knows about it", "knowledge", (), True),
    ("does not know about it", "does not know about it", "knowledge", (), True),
    ("42", "42", "number", (), False),
]


@PROPS
@given(st.data())
def test_normalisation_invariance(data):
    text, gold, answer_type, choices, articles = data.draw(st.sampled_from(CORRECT_ANSWERS))
    assert is_correct(text, gold, answer_type, choices)
    variant = _vary(data.draw, text, articles=articles)
    assert is_correct(variant, gold, answer_type, choices), variant
    assert outcome_reward(tagged(variant), gold, answer_type, choices) == 1.0, variant


AGIEVAL_CASES = [(c["answer"], c["gold"], c["correct"]) for c in MATH_CASES if c["group"] == "agieval"]
MATH_PAIRS = [(a, g) for a, g, ok in AGIEVAL_CASES if ok and "\\text" not in a + g and g != "parabola"]
PRESENTATIONS = ["{}", "${}$", "\\({}\\)", "\\boxed{{{}}}", "$\\boxed{{{}}}$", " {} ", "{}.", "\\[{}\\]"]


@PROPS
@given(st.data())
def test_math_presentation_invariance(data):
    """Delimiters, a box, spacing and a full stop around a correct math answer keep it correct."""
    answer, gold = data.draw(st.sampled_from(MATH_PAIRS))
    spaced = answer.replace(",", data.draw(st.sampled_from([",", ", ", " , "])))
    variant = data.draw(st.sampled_from(PRESENTATIONS)).format(spaced)
    assert is_correct(variant, gold, "number"), variant
    assert outcome_reward(tagged(variant), gold, "number") == 1.0, variant
