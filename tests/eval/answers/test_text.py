"""eval.answers.text: normalisation."""
from __future__ import annotations

from eval.answers import normalize

def test_normalize():
    assert normalize("  The Green_Basket. ") == "green basket"
    assert normalize("An apple, a PEAR!") == "apple pear"
    assert normalize("Emma's   bedroom") == "emmas bedroom"
    assert normalize("") == ""
