"""The `yes_no` rule: the answer says yes, or no, like the gold, and not both."""
from __future__ import annotations

from eval.answers.short import is_short
from eval.answers.text import clean, normalize


def _yes_no_of(text: str) -> set[str]:
    tokens = set(normalize(clean(text)).split())
    return {w for w in ("yes", "no") if w in tokens}


def is_yes_no(extracted: str, gold: str, choices: list[str]) -> bool:
    g = _yes_no_of(gold)
    if len(g) != 1:
        return is_short(extracted, gold, choices)
    return _yes_no_of(extracted) == g
