"""eval.answers.choice: the `choice` rule."""
from __future__ import annotations

import pytest

from eval.answers import is_correct

from .conftest import OPTIONS

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


def test_choice_nested_option_texts():
    opts = ["Sally", "Sally's mother", "Anne"]
    assert is_correct("Sally's mother", "B", "choice", opts)
    assert not is_correct("Sally's mother", "A", "choice", opts)
    assert is_correct("Sally", "A", "choice", opts)


# issue 30: shapes of SmolLM2-135M-Instruct's untagged replies, read as a careful reader would
HITOM = ["blue_container", "blue_bathtub", "green_box", "red_crate", "green_crate", "red_container"]


@pytest.mark.parametrize("reply, letter", [
    ("A. blue_container", "A"),
    ("F. red_container\n\nThe answer is F. red_container.", "F"),
    ("A. red_crate", None),  # the label of one option, the text of another: two options
    ("A. blue_container\nB. blue_bathtub\nC. green_box", None),  # a listing of the options
    ("D because she saw it moved", "D"),
    ("The red_crate, since Anne moved it there.", "D"),  # the one option text named
    ("The red_crate or the green_crate.", None),
])
def test_untagged_choice_replies(reply, letter):
    from eval.answers import read_answer

    assert read_answer(reply, "choice", HITOM).answer == letter


def test_an_option_that_begins_with_answer_is_chosen_by_its_text():
    options = ["answer the phone", "ignore the phone", "throw the phone"]
    assert is_correct("answer the phone", "A", "choice", options)
    assert is_correct("Answer the phone.", "A", "choice", options)
    assert not is_correct("answer the phone", "B", "choice", options)
