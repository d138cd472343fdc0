"""eval.answers.yes_no: the `yes_no` rule."""
from __future__ import annotations

import pytest

from eval.answers import is_correct

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
