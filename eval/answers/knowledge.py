"""The `knowledge` rule: `knows about it` / `does not know about it`, compared by polarity."""
from __future__ import annotations

import re

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.text import clean, normalize


_KNOW_WORDS = frozenset({"know", "knows", "knew", "known", "knowing", "aware", "unaware", "informed"})
_NEGATIONS = frozenset({
    "not", "no", "never", "doesnt", "didnt", "dont", "isnt", "wasnt", "hasnt", "havent", "cannot",
    "cant", "unaware", "uninformed", "neither", "nor", "nt",
})
_CLAUSE_SPLIT = re.compile(r"[,;/|\n]|\bor\b|\band\b|\bbut\b|\bwhile\b", re.I)


def _knowledge_polarities(text: str) -> set[bool]:
    """True for each clause saying someone knows, False for each saying they do not."""
    out = set()
    for clause in _CLAUSE_SPLIT.split(clean(text)):
        tokens = normalize(clause).split()
        if any(t in _KNOW_WORDS for t in tokens):
            out.add(not any(t in _NEGATIONS for t in tokens))
    return out


def is_knowledge(extracted: str, gold: str, choices: list[str]) -> bool:
    if normalize(extracted) == normalize(gold):
        return True
    g = _knowledge_polarities(gold)
    if len(g) != 1:
        return False
    return _knowledge_polarities(extracted) == g


KNOWS, NOT_KNOWS = "knows about it", "does not know about it"
_FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s|\n")


def read_knowledge(reply: str, choices=(), candidates=()) -> str | None:
    """`knows about it` / `does not know about it` from an untagged reply: what its first
    sentence that speaks of knowing says, when it says one thing."""
    for sentence in _FIRST_SENTENCE.split(clean(reply.strip()[:MAX_ANSWER_CHARS])):
        said = _knowledge_polarities(sentence)
        if said:
            return (KNOWS if said == {True} else NOT_KNOWS) if len(said) == 1 else None
    return None
