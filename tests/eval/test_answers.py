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


# ------------------------------------------------------------------ math answers (number rule)

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


# Defects found on real AGIEval cloze golds (data/v1/math.jsonl and gaokao-mathcloze.jsonl).
AGIEVAL_CASES = [
    # a complex number: the lone real token is not the value
    ("1", "1-5\\mathrm{i}", False), ("1-5", "1-5\\mathrm{i}", False), ("1+5i", "1-5\\mathrm{i}", False),
    ("1-5i", "1-5\\mathrm{i}", True), ("1 - 5 \\mathrm{i}", "1-5\\mathrm{i}", True),
    ("-5i+1", "1-5\\mathrm{i}", True), ("\\frac{2-10i}{2}", "1-5\\mathrm{i}", True),
    # an equation with ±: the pair of lines y = √3x and y = -√3x
    ("3", "y=\\pm\\sqrt{3}x", False), ("\\sqrt{3}", "y=\\pm\\sqrt{3}x", False),
    ("y=\\sqrt{3}x", "y=\\pm\\sqrt{3}x", False), ("y=\\pm\\sqrt{2}x", "y=\\pm\\sqrt{3}x", False),
    ("x=\\pm\\sqrt{3}y", "y=\\pm\\sqrt{3}x", False),
    ("y=\\pm\\sqrt{3}x", "y=\\pm\\sqrt{3}x", True), ("y = \\pm \\sqrt3 x", "y=\\pm\\sqrt{3}x", True),
    ("$y=\\pm\\sqrt{3} x$", "y=\\pm\\sqrt{3}x", True), ("y=±√3x", "y=\\pm\\sqrt{3}x", True),
    ("y=\\sqrt{3}x, y=-\\sqrt{3}x", "y=\\pm\\sqrt{3}x", True), ("\\pm\\sqrt{3}x=y", "y=\\pm\\sqrt{3}x", True),
    ("y=\\pm\\frac{3}{\\sqrt{3}}x", "y=\\pm\\sqrt{3}x", True),
    # a polynomial: signs matter
    ("x^7+2x^5-x^2", "-x^7-2x^5+x^2", False), ("-x^7-2x^5+x^3", "-x^7-2x^5+x^2", False),
    ("x^2-x^7-2x^5", "-x^7-2x^5+x^2", True), ("-x^2(x^5+2x^3-1)", "-x^7-2x^5+x^2", True),
    ("- x^{7} - 2 x^{5} + x^{2}", "-x^7-2x^5+x^2", True),
    # intervals: element by element, brackets included
    ("[0, 343/27]", "\\left[0,\\frac{343}{27}\\right]", True),
    ("\\left[ 0, \\dfrac{343}{27} \\right]", "\\left[0,\\frac{343}{27}\\right]", True),
    ("(0, 343/27]", "\\left[0,\\frac{343}{27}\\right]", False),
    ("[0, 12.7]", "\\left[0,\\frac{343}{27}\\right]", False),
    ("[343/27, 0]", "\\left[0,\\frac{343}{27}\\right]", False),
    ("[0, 343/27], [1, 2]", "\\left[0,\\frac{343}{27}\\right]", False),
    ("x \\in [0, \\frac{343}{27}]", "\\left[0,\\frac{343}{27}\\right]", True),
    ("(-1/4, +\\infty)", "\\left(-\\frac{1}{4},+\\infty\\right)", True),
    ("(-0.25, ∞)", "\\left(-\\frac{1}{4},+\\infty\\right)", True),
    ("\\left(-\\frac14, \\infty\\right)", "\\left(-\\frac{1}{4},+\\infty\\right)", True),
    ("(-1/4, -\\infty)", "\\left(-\\frac{1}{4},+\\infty\\right)", False),
    ("[-1/4, +\\infty)", "\\left(-\\frac{1}{4},+\\infty\\right)", False),
    ("(1/4, +\\infty)", "\\left(-\\frac{1}{4},+\\infty\\right)", False),
    ("-1/4", "\\left(-\\frac{1}{4},+\\infty\\right)", False),
    # numbers and a word
    ("\\frac{3}{200}", "0.015", True), ("1.5\\%", "0.015", False), ("-1", "-1", True), ("1", "-1", False),
    ("parabola", "parabola", True), ("\\text{parabola}", "\\text{parabola}", True),
    ("A parabola.", "\\text{parabola}", True), ("hyperbola", "\\text{parabola}", False),
]


@pytest.mark.parametrize("answer, gold, correct", AGIEVAL_CASES)
def test_agieval_cloze_golds(answer, gold, correct):
    assert is_correct(answer, gold, "number") is correct


@pytest.mark.parametrize(
    "answer, correct",
    [
        ("\\frac{2\\sqrt{5}}{5};\\frac{\\sqrt{5}}{5}", True),
        ("\\frac{2}{\\sqrt5}; \\frac{1}{\\sqrt5}", True),
        ("\\boxed{\\frac{2\\sqrt{5}}{5}}; \\boxed{\\frac{\\sqrt{5}}{5}}", True),
        ("\\frac{2\\sqrt{5}}{5}；\\frac{\\sqrt{5}}{5}", True),  # full-width semicolon
        ("\\frac{2\\sqrt{5}}{5};\\frac{\\sqrt{5}}{5};", True),
        ("\\frac{\\sqrt{5}}{5};\\frac{2\\sqrt{5}}{5}", False),  # blanks are ordered
        ("\\frac{2\\sqrt{5}}{5}", False), ("\\frac{2\\sqrt{5}}{5}, \\frac{\\sqrt{5}}{5}", False),
        ("\\frac{2\\sqrt{5}}{5};\\frac{\\sqrt{5}}{5};1", False), ("0.894; 0.447", False),
    ],
)
def test_blanks_are_compared_one_by_one(answer, correct):
    assert is_correct(answer, "\\frac{2\\sqrt{5}}{5};\\frac{\\sqrt{5}}{5}", "number") is correct


def test_blanks_mix_numbers_expressions_and_words():
    gold = "3;(1,2);x^2+1;parabola"
    assert is_correct("3; (1, 2); 1+x^2; \\text{parabola}", gold, "number")
    assert not is_correct("3; (2, 1); 1+x^2; parabola", gold, "number")
    assert not is_correct("3; (1, 2); x^2-1; parabola", gold, "number")
    assert not is_correct("3; (1, 2); x^2+1; hyperbola", gold, "number")


@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("(1, 2)", "(1,2)", True), ("(2, 1)", "(1,2)", False), ("[1, 2]", "(1,2)", False),
        ("(1, 2, 3)", "(1,2)", False), ("\\left(\\frac{1}{2}, -3\\right)", "(0.5,-3)", True),
        ("2, -3", "-3, 2", True), ("x = 2, x = -3", "-3, 2", True), ("2", "-3, 2", False),
        ("2, -3, 5", "-3, 2", False), ("\\pm 2", "2, -2", True), ("\\{-2, 2\\}", "\\pm 2", True),
        ("\\{1, 2\\}", "\\{2, 1\\}", True), ("\\{1\\}", "\\{1, 2\\}", False),
        ("(3, \\infty) \\cup (-\\infty, -2)", "(-\\infty,-2)\\cup(3,\\infty)", True),
        ("(-\\infty,-2)", "(-\\infty,-2)\\cup(3,\\infty)", False),
        ("(-\\infty,-2]\\cup(3,\\infty)", "(-\\infty,-2)\\cup(3,\\infty)", False),
        ("x \\ge 2", "x\\geq 2", True), ("2 \\le x", "x\\geq 2", True), ("x > 2", "x\\geq 2", False),
        ("-1 < x \\le 3", "-1<x\\leq3", True), ("-1 < x < 3", "-1<x\\leq3", False),
        ("2x + 1 = y", "y=2x+1", True), ("y = 2x - 1", "y=2x+1", False), ("2x+1", "y=2x+1", True),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", True), ("\\sqrt[3]{8}", "2", True),
        ("e^{i\\pi}", "-1", True), ("2\\pi r", "2r\\pi", True), ("\\pi r^2", "2r\\pi", False),
        ("\\frac{x+1}{x^2-1}", "\\frac{1}{x-1}", True), ("\\frac{x-1}{x^2-1}", "\\frac{1}{x-1}", False),
        ("(a+b)^2", "a^2+2ab+b^2", True), ("(a-b)^2", "a^2+2ab+b^2", False), ("x", "y", False),
        ("\\sin^2 x + \\cos^2 x", "1", False),  # \sin^2 is not read: an unreadable answer is wrong
        ("10", "10\\text{ inches}", True), ("10 inches", "10\\text{ inches}", True),
        ("12", "10\\text{ inches}", False), ("30", "30^\\circ", True), ("\\$18.90", "18.90", True),
        ("(C)", "\\text{(C)}", True), ("D", "\\text{(C)}", False),
    ],
)
def test_math_structures(answer, gold, correct):
    assert is_correct(answer, gold, "number") is correct


def test_text_golds_are_cleaned_like_answers():
    # the short rule removes the same LaTeX presentation from the gold as from the answer
    assert is_correct("parabola", "\\text{parabola}", "short")
    assert is_correct("\\text{parabola}", "\\text{parabola}", "short")
    assert is_correct("$\\textbf{basket}$", "\\text{basket}", "short")
    assert not is_correct("ellipse", "\\text{parabola}", "short")


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


# ------------------------------------------------------- long untagged multiple-choice replies
# Issue 16 item 5: a model without the tags that answers "B. <option text>" with an option longer
# than the short-reply fallback (200 characters) used to count as no answer (ToMBench 9 of 2,860
# items, ToMATO 27 of 806 with a perfect answerer).

TOMATO_OPTIONS = [  # ToMATO-style options: "She thinks that ..." sentences, one over 200 characters
    "She thinks that he feels hopeful about the deal.",
    "She thinks that he feels persistent and determined to get the best deal possible on the couch "
    "set, but also respectful of her boundaries and of the price she set at the start, and that he "
    "will not push further if she says no again.",
    "She thinks that he feels cautious about the price.",
    "She thinks that he feels confident and decisive.",
]


@pytest.mark.parametrize("reply", [
    "B. " + TOMATO_OPTIONS[1],
    "(B) " + TOMATO_OPTIONS[1],
    "B) " + TOMATO_OPTIONS[1] + "\n\nThe conversation shows him holding his offer politely.",
    "<think>He keeps his offer.</think>\nB: " + TOMATO_OPTIONS[1],
    TOMATO_OPTIONS[1],  # the option's text alone
])
def test_long_untagged_choice_reply_with_a_leading_label_is_read(reply):
    assert len(TOMATO_OPTIONS[1]) > 200
    v = score(reply, "B", "choice", TOMATO_OPTIONS)
    assert v.correct and not v.format_ok


@pytest.mark.parametrize("reply", [
    "B. " + TOMATO_OPTIONS[1] + " Or maybe C: he is cautious about the price of the set.",  # two
    "C. " + TOMATO_OPTIONS[1],  # label and text disagree
    "E. " + TOMATO_OPTIONS[1],  # no option E
    "A lot happens here. " + TOMATO_OPTIONS[1] + " " + TOMATO_OPTIONS[2],  # "A" is the article
    "<think>B. " + TOMATO_OPTIONS[1],  # still thinking
    "<answer>C</answer> B. " + TOMATO_OPTIONS[1],  # the tagged answer decides
])
def test_long_untagged_choice_reply_is_not_credited_without_one_label(reply):
    assert not score(reply, "B", "choice", TOMATO_OPTIONS).correct


def test_leading_label_is_only_read_for_choice_questions_and_never_rewarded():
    reply = "B. " + TOMATO_OPTIONS[1]
    assert extract_answer(reply) is None  # no options given: nothing to read a label against
    assert extract_answer(reply, choices=TOMATO_OPTIONS) == reply
    assert not score(reply, "basket", "short", TOMATO_OPTIONS).correct
    assert outcome_reward(reply, "B", "choice", TOMATO_OPTIONS) == 0.0  # the reward needs the tags


def test_tombench_style_two_option_item_with_a_long_option():
    # ToMBench items carry their own "A. " prefixes in some options; the loader strips them, the
    # model may echo them back.
    options = ["Yes", "No, because " + "she had not seen the note that he left on the table. " * 5]
    assert score("B. " + options[1], "B", "choice", options).correct
    assert not score("A. " + options[1], "B", "choice", options).correct
