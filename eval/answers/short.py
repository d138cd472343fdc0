"""The `short` rule: a name (room, container, person), alone or in a short phrase that is not a
list and names no other candidate."""
from __future__ import annotations

import re

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
