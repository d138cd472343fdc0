"""eval.answers.short: the `short` rule."""
from __future__ import annotations

import pytest

from eval.answers import is_correct

from .conftest import OPTIONS

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


def test_text_golds_are_cleaned_like_answers():
    # the short rule removes the same LaTeX presentation from the gold as from the answer
    assert is_correct("parabola", "\\text{parabola}", "short")
    assert is_correct("\\text{parabola}", "\\text{parabola}", "short")
    assert is_correct("$\\textbf{basket}$", "\\text{basket}", "short")
    assert not is_correct("ellipse", "\\text{parabola}", "short")
