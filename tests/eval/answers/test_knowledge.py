"""eval.answers.knowledge: the `knowledge` rule."""
from __future__ import annotations

import pytest

from eval.answers import is_correct

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
