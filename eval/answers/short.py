"""The `short` rule: a name (room, container, person), alone or in a short phrase that is not a
list and names no other candidate."""
from __future__ import annotations

import re
from typing import Sequence

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.text import LETTERS, clean, contains_phrase, mentioned_options, normalize


_LIST_SPLIT = re.compile(r"[,;/|&\n+]|\bor\b|\band\b|\bversus\b|\bvs\b", re.I)
# Words that may surround a name in a short answer ("she will look in the basket").
_FILLER = frozenset("""
in inside into on onto at under underneath within from to of by near behind beside
it its is was are were be been being will would should could might may must can
he she they them her his their him we you i one someone
look looks looking search searches searching find finds check checks go goes think thinks
believe believes expect expects where located location placed put kept still now then there
probably likely most answer final object item container room place my this that which
""".split())


def is_short(extracted: str, gold: str, choices: list[str]) -> bool:
    gold = clean(gold)  # the same presentation is removed from both: `\text{parabola}`
    n, g = normalize(clean(extracted)), normalize(gold)
    if not n or not g:
        return False
    if n == g:
        return True
    segments = [normalize(seg) for seg in _LIST_SPLIT.split(clean(extracted))]
    # "box or basket", "box, basket": a list, unless the gold itself is written with the separator
    content = [s for s in segments if s and not set(s.split()) <= _FILLER]
    if len(content) > 1 and not _LIST_SPLIT.search(gold):
        return False
    if not contains_phrase(n, g):
        return False
    if choices:
        letters = LETTERS[: len(choices)]
        norm_options = [normalize(clean(c)) for c in choices]
        mentioned = mentioned_options(n, norm_options, letters)
        gold_letters = {letters[i] for i, o in enumerate(norm_options) if o == g}
        if mentioned - gold_letters:
            return False
        if gold_letters:
            return True
    rest = f" {n} ".replace(f" {g} ", " ", 1).split()
    return all(t in _FILLER for t in rest)


_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def read_short(reply: str, choices=(), candidates: Sequence[str] = ()) -> str | None:
    """The candidate an untagged reply names, when the answers are known to be among
    `candidates` (the places and containers of a story): the first sentence that names any
    candidate must name exactly one ("Sally will look for the apple in the red_box."); two or
    more is no answer. Without candidates, None: the caller decides."""
    if not candidates:
        return None
    cands = [c for c in candidates if isinstance(c, str) and normalize(clean(c))]
    norm = [normalize(clean(c)) for c in cands]
    text = clean(reply.strip()[:MAX_ANSWER_CHARS])
    sentences = [s for s in _SENTENCES.split(text) if s.strip()]
    everywhere = set().union(*(mentioned_options(normalize(s), norm, range(len(norm)))
                               for s in sentences)) if sentences else set()
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    if len(lines) > 1 and (len(everywhere) > 1 or sum(bool(_STORY_LINE.search(ln)) for ln in lines) > 1):
        return None  # the story told again line by line, not an answer
    for sentence in sentences:
        if _ABOUT_THE_STORY.match(sentence):
            continue  # "The story is about ...": what the story is, not where the thing is
        named = mentioned_options(normalize(sentence), norm, range(len(norm)))
        if named:
            return cands[next(iter(named))] if len(named) == 1 else None
    return None


_STORY_LINE = re.compile(r"(?i)\b(?:entered|exited|left|moved|told)\s+(?:the|privately|publicly)\b")
_ABOUT_THE_STORY = re.compile(r"(?i)\s*(?:the|this)\s+story\s+(?:is\s+about|describes|tells|begins|starts)\b")
