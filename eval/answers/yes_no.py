"""The `yes_no` rule: the answer says yes, or no, like the gold, and not both."""
from __future__ import annotations

import re

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.short import is_short
from eval.answers.text import clean, normalize


# "not sure", "not stated": no answer rather than a no
_HEDGES = frozenset("sure certain clear known specified stated mentioned given enough".split())

# "Yep.", "Nope.": yes and no as people write them
_SAYS = {"yes": "yes", "yeah": "yes", "yep": "yes", "yup": "yes", "no": "no", "nope": "no",
         "nah": "no"}


def _words(text: str) -> list[str]:
    return [_SAYS.get(w, w) for w in normalize(clean(text)).split()]


def _yes_no_of(text: str) -> set[str]:
    words = _words(text)
    said = {w for w in ("yes", "no") if w in words}
    if not said and len(words) > 1 and words[0] == "not" and words[1] not in _HEDGES:
        return {"no"}  # "not by the end of the story"
    return said


def is_yes_no(extracted: str, gold: str, choices: list[str]) -> bool:
    g = _yes_no_of(gold)
    if len(g) != 1:
        return is_short(extracted, gold, choices)
    return _yes_no_of(extracted) == g


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def read_yes_no(reply: str, choices=(), candidates=()) -> str | None:
    """`yes` or `no` from an untagged reply: its first word ("No. He never saw it ..."), else
    its first sentence when that says exactly one of them."""
    text = clean(reply.strip()[:MAX_ANSWER_CHARS])
    words = _words(text)
    if words and words[0] in ("yes", "no"):
        return words[0]
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    said = _yes_no_of(first)
    return next(iter(said)) if len(said) == 1 else None
