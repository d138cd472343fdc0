"""eval.answers.extract: the format check and answer extraction, including the fallback for
replies without tags."""
from __future__ import annotations

import pytest

from eval.answers import check_format, extract_answer, format_reward, outcome_reward, score

from .conftest import tagged


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


def test_boxed_whole_answer_is_unwrapped():
    assert extract_answer(tagged("\\boxed{Sally, Anne}")) == "Sally, Anne"
    assert extract_answer("Final answer: \\boxed{\\frac{1}{2}}") == "\\frac{1}{2}"
    assert extract_answer(tagged("\\boxed{1}+\\boxed{2}")) == "\\boxed{1}+\\boxed{2}"


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


# issue 30: an untagged reply must say one thing (shapes from SmolLM2-135M-Instruct's replies)
BOXES = ["lidded plastic bin", "canvas bag", "filing cabinet", "styling case"]


@pytest.mark.parametrize("reply, answer_type, candidates, read", [
    ("B. canvas bag\n\nThe answer is B. canvas bag.", "choice", (), "B"),
    ("A. canvas bag\n\nThe answer is B. canvas bag.", "choice", (), "B"),  # a statement with B's text
    ("A. canvas bag\n\nThe answer is A.", "choice", (), None),  # label and text disagree
    ("B. canvas bag\n\nThe answer is A.", "choice", (), None),  # label and statement disagree
    ("C. filing cabinet. The answer is D. The correct answer is C.", "choice", (), None),
    ("A. lidded plastic bin\nB. canvas bag\nC. filing cabinet\n\nThe correct answer is: C. filing "
     "cabinet", "choice", (), "C"),  # a listing, then one consistent statement
    ("The answer is E. a shoebox", "choice", (), None),  # no option
    ("The story is about Anne entering the kitchen.", "short", ("kitchen", "box"), None),
    ("Anne entered the kitchen.\nAnne moved the apple to the box.", "short", ("kitchen", "box"), None),
    ("Anne will look in the box.", "short", ("kitchen", "box"), "box"),
    ("not by the end of the story", "yes_no", (), "no"),
    ("not sure", "yes_no", (), None),
    ("The answer is $A, B, C$", "number", (), None),
    ("The answer is $\\frac{3}{206}+\\frac{9}{2\\cdot 103^2}+\\cdots$", "number", (), None),
    ("The answer is 42.", "number", (), "42"),
])
def test_untagged_replies_that_say_one_thing_or_nothing(reply, answer_type, candidates, read):
    from eval.answers import read_answer

    got = read_answer(reply, answer_type, BOXES if answer_type == "choice" else (), candidates)
    assert got.answer == read


@pytest.mark.parametrize("completion, expected", [
    ("<think> Anne saw it. </think><answer>box</answer>", "Anne saw it."),
    ("<think>first</think> <think>second</think><answer>a</answer>", "first"),
    ("<think>never closed <answer>box</answer>", None),
    ("<answer>box</answer>", None),
    ("<think></think><answer>box</answer>", ""),
])
def test_think_text_is_the_first_closed_think_block(completion, expected):
    from eval.answers import think_text

    assert think_text(completion) == expected
