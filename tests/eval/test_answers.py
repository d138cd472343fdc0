"""The shared answer parser: example tests for every rule, reward-hacking completions, and
hypothesis properties (total, deterministic, normalisation-invariant, rewards in {-1, 0, 1})."""
from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval.answers import (
    Verdict,
    check_format,
    extract_answer,
    format_reward,
    is_correct,
    normalize,
    outcome_reward,
    score,
)

OPTIONS = ["box", "basket", "crate", "bathtub"]


def tagged(answer: str, think: str = "Sally put it there and left.") -> str:
    return f"<think>{think}</think>\n<answer>{answer}</answer>"


# ---------------------------------------------------------------------------------- format


@pytest.mark.parametrize(
    "completion, ok",
    [
        ("<think>r</think><answer>B</answer>", True),
        ("  <think>\nr\n</think>\n\n<answer> B </answer>\n", True),
        ("<think></think><answer>B</answer>", True),  # empty reasoning is still the format
        ("<think>r</think><answer> </answer>", False),  # but an empty answer is not
        ("<answer>B</answer>", False),
        ("<think>r</think>", False),
        ("<think>r</think>B", False),
        ("<think>r</think>so<answer>B</answer>", False),
        ("<think>r</think><answer>B</answer> extra", False),
        ("<answer>B</answer><think>r</think>", False),
        ("<think>r</think><answer>A</answer><answer>B</answer>", False),
        ("<think>r<think>s</think><answer>B</answer>", False),
        ("<think>r</think><answer>B<answer>C</answer>", False),
        ("<THINK>r</THINK><ANSWER>B</ANSWER>", False),
        ("", False),
    ],
)
def test_check_format(completion, ok):
    assert check_format(completion) is ok
    assert format_reward(completion) == (0.0 if ok else -1.0)


# -------------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    "completion, expected",
    [
        (tagged("basket"), "basket"),
        ("<think>maybe <answer>box</answer></think><answer>basket</answer>", "basket"),  # think ignored
        ("<think>r</think>\nThe ball is in the basket.", "The ball is in the basket."),  # short reply
        ("<think>r</think> long reasoning\nFinal answer: B", "B"),
        ("We compute... so the answer is 42.", "42"),
        ("lots of algebra " * 40 + "giving \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("<think>r</think><answer>B", "B"),  # cut off before the closing tag
        ("<think>never finished", None),
        ("<think>r</think>", None),
        ("", None),
        ("word " * 200, None),  # long, no marker: nothing to extract
        (tagged("A") + "<answer>A</answer>", "A"),  # a repeated identical answer is one answer
        (tagged("A") + "<answer>B</answer>", "A\nB"),  # different answers are kept, to be wrong
    ],
)
def test_extract_answer(completion, expected):
    assert extract_answer(completion) == expected


def test_extract_without_fallback_needs_tags():
    assert extract_answer("<think>r</think> B", fallback=False) is None
    assert extract_answer("Answer: B", fallback=False) is None
    assert extract_answer(tagged(" B "), fallback=False) == "B"


def test_normalize():
    assert normalize("  The Green_Basket. ") == "green basket"
    assert normalize("An apple, a PEAR!") == "apple pear"
    assert normalize("Emma's   bedroom") == "emmas bedroom"
    assert normalize("") == ""


# ---------------------------------------------------------------------------- rules by type


@pytest.mark.parametrize(
    "answer, correct",
    [
        ("B", True), ("(B)", True), ("B.", True), ("B) basket", True), ("B: basket", True),
        ("Option B", True), ("option (b)", True), ("b", True), ("basket", True),
        ("The Basket.", True), ("\\boxed{B}", True), ("**B**", True), ("The answer is (B).", True),
        ("A basket", True),  # the article, not option A
        ("B because she left before it moved", True),
        ("She will look in the basket", True),
        ("A", False), ("A or B", False), ("A, B, C, D", False), ("B and C", False),
        ("B) box", False), ("box or basket", False), ("box basket", False),
        ("(A) (B)", False), ("E", False), ("", False), ("the bathtub", False),
    ],
)
def test_choice(answer, correct):
    assert is_correct(answer, "B", "choice", OPTIONS) is correct


@pytest.mark.parametrize("answer", ["A", "a", "(a)", "A.", "Option A", "box", "A) box"])
def test_choice_letter_a_is_not_an_article(answer):
    assert is_correct(answer, "A", "choice", OPTIONS)


def test_choice_option_texts_that_look_like_letters_or_differ_only_in_signs():
    assert is_correct("A) A", "A", "choice", ["A", "B", "C", "D"])
    assert is_correct("B", "B", "choice", ["A", "B", "C", "D"])
    signs = ["Z= 2 e^(3J)+6e^(-J)", "Z= 2e^(2J)", "Z= 2 e^(-3J)+6e^(J)"]
    assert is_correct("Z= 2 e^(3J)+6e^(-J)", "A", "choice", signs)
    assert is_correct("A) Z= 2 e^(3J)+6e^(-J)", "A", "choice", signs)
    assert not is_correct("Z= 2 e^(-3J)+6e^(J)", "A", "choice", signs)
    pairs = ["A = benzoquinone, B = dimethyl fumarate", "A = benzoquinone, B = methanol"]
    assert is_correct("(B) A = benzoquinone, B = methanol", "B", "choice", pairs)
    assert is_correct("$\\mathrm{NaOH}$ solution", "A", "choice", ["$\\mathrm{NaOH}$ solution", "KOH"])


def test_boxed_whole_answer_is_unwrapped():
    assert extract_answer(tagged("\\boxed{Sally, Anne}")) == "Sally, Anne"
    assert extract_answer("Final answer: \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert extract_answer(tagged("\\boxed{1}+\\boxed{2}")) == "\\boxed{1}+\\boxed{2}"


def test_choice_nested_option_texts():
    opts = ["Sally", "Sally's mother", "Anne"]
    assert is_correct("Sally's mother", "B", "choice", opts)
    assert not is_correct("Sally's mother", "A", "choice", opts)
    assert is_correct("Sally", "A", "choice", opts)


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("Yes", "yes", True), ("Yes.", "yes", True), ("yes, she does", "yes", True),
        ("NO", "no", True), ("No, she does not.", "no", True), ("no", "yes", False),
        ("yes and no", "yes", False), ("Yes/No", "no", False), ("maybe", "yes", False),
        ("nobody knows", "no", False),
    ],
)
def test_yes_no(answer, gold, correct):
    assert is_correct(answer, gold, "yes_no") is correct


@pytest.mark.parametrize(
    "answer, choices, correct",
    [
        ("basket", (), True), ("The basket.", (), True), ("in the basket", (), True),
        ("green_basket", (), False),  # a different object than "basket"
        ("box or basket", (), False), ("box, basket", (), False), ("basket/box", (), False),
        ("box basket", (), False), ("the box", (), False),
        ("Sally will look in the basket", OPTIONS, True),
        ("Sally will look in the basket", (), False),  # extra content words, no candidates known
        ("basket or crate", OPTIONS, False), ("basket crate", OPTIONS, False),
    ],
)
def test_short(answer, choices, correct):
    assert is_correct(answer, "basket", "short", choices) is correct


def test_short_multiword_gold():
    assert is_correct("The green basket", "green_basket", "short")
    assert not is_correct("basket", "green_basket", "short")


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("knows about it", "knows about it", True),
        ("Knows about it.", "knows about it", True),
        ("She knows.", "knows about it", True),
        ("is aware of it", "knows about it", True),
        ("does not know about it", "knows about it", False),
        ("does not know about it", "does not know about it", True),
        ("She doesn't know about it.", "does not know about it", True),
        ("unaware", "does not know about it", True),
        ("knows about it", "does not know about it", False),
        ("knows about it or does not know about it", "knows about it", False),
        ("yes", "knows about it", False),
    ],
)
def test_knowledge(answer, gold, correct):
    assert is_correct(answer, gold, "knowledge") is correct


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("42", "42", True), ("42.0", "42", True), ("\\boxed{42}", "42", True), ("$42$", "42", True),
        ("042", "42", True), ("The answer is 42.", "42", True), ("x = 42", "42", True),
        ("1/2", "0.5", True), ("\\frac{1}{2}", "0.5", True), ("\\dfrac{3}{6}", "1/2", True),
        ("2\\sqrt{2}", "\\sqrt{8}", True), ("1,000", "1000", True), ("-3", "−3", True),
        ("2^{10}", "1024", True), ("\\pi/2", "\\frac{\\pi}{2}", True),
        ("43", "42", False), ("42 or 43", "42", False), ("0.333", "1/3", False),
        ("9^9^9^9", "1", False), ("", "42", False), ("forty-two", "42", False),
    ],
)
def test_number(answer, gold, correct):
    assert is_correct(answer, gold, "number") is correct


def test_unknown_answer_type_is_a_caller_error():
    with pytest.raises(ValueError, match="answer_type"):
        is_correct("B", "B", "letter")


def test_score_verdict():
    assert score(tagged("B"), "B", "choice", OPTIONS) == Verdict(True, "B", True)
    assert score("B", "B", "choice", OPTIONS) == Verdict(False, "B", True)  # eval fallback
    assert score(tagged("A"), "B", "choice", OPTIONS) == Verdict(True, "A", False)


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


# ------------------------------------------------------------------------------ properties

PIECES = st.sampled_from(
    ["<think>", "</think>", "<answer>", "</answer>", "<ANSWER>", "\\boxed{", "}", "Answer:",
     "the answer is", "A", "B", "(C)", "yes", "no", "not", "knows about it", "basket", "box",
     "42", "1/2", "\\frac{1}{2}", "\\sqrt{", "^", "9", "=", ",", " or ", "\n", " ", "$", "**"]
)
COMPLETIONS = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=40).map("".join),
)
GOLDS = st.sampled_from(
    [("B", "choice"), ("A", "choice"), ("yes", "yes_no"), ("no", "yes_no"), ("basket", "short"),
     ("knows about it", "knowledge"), ("does not know about it", "knowledge"), ("42", "number"),
     ("1/2", "number"), ("\\sqrt{2}", "number")]
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
