"""Where an answer stands in its text, for the careful reading (eval.answers.careful): the
sentences and clauses, a negation before or a denial after an answer, a reason clause that
explains it, an opening option label, a belief or a reality said of it, an answer joined to an
alternative."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from eval.answers.mentions import _ARTICLES, _PUNCT_BOUNDARY, _Mention, _Tok

_SENTENCE_END = frozenset(".!?\n;")
_NEGATIONS = frozenset(
    "not never no nor neither nowhere isnt arent wasnt werent doesnt dont didnt wont cant cannot "
    "shouldnt wouldnt couldnt hasnt havent hadnt aint nt except".split())
_NEGATION_PHRASES = (("rather", "than"), ("instead", "of"), ("other", "than"))
# words that end a clause for the negation look-back: "not in the box but in the basket"
_CLAUSE_WORDS = frozenset("but and or so while whereas although though yet however because since".split())
# a clause that explains the answer before it: its answers are reasons, not answers
_REASON_WORDS = frozenset(
    "because since given after before when while whereas although though which who whom whose "
    "where so therefore thus hence due unlike".split())
_BELIEF_WORDS = frozenset(
    "think thinks thought believe believes believed look looks looking search searches searching "
    "expect expects expected assume assumes assumed suppose supposes belief mind".split())
_REALITY_WORDS = frozenset("really actually reality truly fact truth currently now".split())
_NEGATION_LOOKBACK = 4  # words (articles aside) before an answer that a negation may stand in


def _negated(tokens: list[_Tok], m: _Mention) -> bool:
    """Whether a negation stands before the mention within its clause ("not in the box", "is not
    sympathetic", "rather than C"), looking back a few words."""
    if _denied_after(tokens, m):
        return True
    seen = 0
    i = m.start - 1
    while i >= 0 and tokens[i].low in _BRACKETS:  # "not (A)", "not [A]", "not **A**"
        i -= 1
    while i >= 0 and seen < _NEGATION_LOOKBACK:
        t = tokens[i]
        if t.low in _PUNCT_BOUNDARY or t.low in _CLAUSE_WORDS:
            return False
        if t.low in _NEGATIONS:
            return True
        if i >= 1 and (tokens[i - 1].low, t.low) in _NEGATION_PHRASES:
            return True
        if t.low not in _ARTICLES:
            seen += 1
        i -= 1
    return False


_COPULAS = frozenset("is are was were seems looks s".split())
_DENIALS = frozenset("not wrong incorrect false untrue isnt wasnt arent werent".split())


def _denied_after(tokens: list[_Tok], m: _Mention) -> bool:
    """Whether the words right after an answer deny it: "a) is not it", "B is wrong", "the box
    isn't where she looks"."""
    j = m.end
    while j < len(tokens) and tokens[j].low in _BRACKETS:
        j += 1
    words = [t.low for t in tokens[j:j + 3]]
    if words[:1] and words[0] in ("isnt", "wasnt", "arent", "werent"):
        return True
    return len(words) >= 2 and words[0] in _COPULAS and words[1] in _DENIALS


def _sentences(tokens: list[_Tok], mentions: Sequence[_Mention] = ()) -> list[tuple[int, int]]:
    """Token ranges of the sentences (a full stop right after a lone option letter, "O.", does
    not end one: it is the letter's mark; nor does one inside an answer's own text)."""
    covered = {j for m in mentions for j in range(m.start, m.end - 1)}
    out, start = [], 0
    for i, t in enumerate(tokens):
        if t.low in _SENTENCE_END and i not in covered:
            lone_label = t.low == "." and i >= 1 and len(tokens[i - 1].raw) == 1 and (
                i - 1 == start or tokens[i - 2].low in "([\n")
            if lone_label and i + 1 < len(tokens) and tokens[i + 1].low != "\n":
                continue
            if i > start:
                out.append((start, i))
            start = i + 1
    if start < len(tokens):
        out.append((start, len(tokens)))
    return out


def _clause_start(tokens: list[_Tok], i: int, lo: int) -> int:
    """The first token of the clause holding token i (the sentence starting at lo)."""
    j = i - 1
    while j >= lo and tokens[j].low not in _PUNCT_BOUNDARY and tokens[j].low not in _CLAUSE_WORDS:
        j -= 1
    return j + 1


def _cue_at(tokens: list[_Tok], i: int, words: frozenset, phrases: tuple) -> int:
    """The length of a cue (word or phrase) starting at token i, 0 when none."""
    if tokens[i].low in words:
        return 1
    for p in phrases:
        if tuple(t.low for t in tokens[i:i + len(p)]) == p:
            return len(p)
    return 0


def _opens_clause(tokens: list[_Tok], i: int, lo: int) -> bool:
    return i == lo or tokens[i - 1].low in _PUNCT_BOUNDARY or (
        i - 1 >= lo and tokens[i - 1].low in ("but", "no", "oh", "hmm", "or"))


@dataclass
class _Said:
    affirmed: list[_Mention]
    negated: list[_Mention]


def _said(tokens: list[_Tok], mentions: list[_Mention], lo: int, hi: int,
          label: bool = False) -> _Said:
    """The answers a token range gives and those it negates. Answers inside a reason clause that
    follows a given answer are left out ("X, because ... Y", "X, which is in Y"), as are those of
    a sentence's opening reason ("Because ... Y, she looks in X"); with `label` (a reply opening
    with an option label, "B. <text> ...") everything after the label's own option is its
    explanation."""
    inside = [m for m in mentions if lo <= m.start and m.end <= hi]
    if label and inside:
        first = inside[0]
        glued = len(inside) > 1 and first.key not in inside[1].alts | {inside[1].key} and all(
            not t.low[:1].isalnum() for t in tokens[first.end:inside[1].start])
        if not glued:  # "A. <the text of C>" names two options; "A. <A's text>, because ..." one
            inside = [m for m in inside if m.key == first.key and not any(
                o.key != first.key and o.start < m.start for o in inside)]
    reason_from = None
    covered = {j for m in inside for j in range(m.start, m.end)}
    for i in range(lo, hi):
        if tokens[i].low not in _REASON_WORDS or i in covered:
            continue
        if any(m.start < i for m in inside):
            reason_from = i
            break
        if i == lo:  # a sentence that opens with its reason
            comma = next((k for k in range(i, hi) if tokens[k].low == ","), None)
            if comma is not None:
                inside = [m for m in inside if m.start > comma]
            break
    affirmed, negated = [], []
    for m in inside:
        if reason_from is not None and m.start > reason_from:
            continue
        (negated if _negated(tokens, m) else affirmed).append(m)
    return _Said(affirmed, negated)


def _opening_label(tokens: list[_Tok], mentions: list[_Mention]) -> bool:
    """Whether the text opens with an option label: "B.", "B)", "(B)", "B:", "**B**"."""
    if not mentions:
        return False
    m = mentions[0]
    if m.end - m.start != 1 or len(tokens[m.start].raw) != 1:
        return False
    before = [t.low for t in tokens[:m.start]]
    after = tokens[m.start + 1].low if m.start + 1 < len(tokens) else ""
    lead = all(b in ("(", "[", "*", "#", ">", "-") or b in ("the", "answer", "option", "choice", "final",
                                                           "correct", "is", ":")
               for b in before)
    return lead and (after in (".", ")", "]", ":", "*") or before[-1:] in (["("], ["["]))


def _kind_of_clause(tokens: list[_Tok], m: _Mention, lo: int) -> str | None:
    """"belief" or "reality" when the clause naming the mention says which it is."""
    start = _clause_start(tokens, m.start, lo)
    words = {t.low for t in tokens[start:m.start]}
    belief, reality = bool(words & _BELIEF_WORDS), bool(words & _REALITY_WORDS)
    if belief != reality:
        return "belief" if belief else "reality"
    return None


def _one(mentions: list[_Mention]) -> str | None:
    keys = {m.key for m in mentions}
    return next(iter(keys)) if len(keys) == 1 else None

_BRACKETS = frozenset("()[]*\"'“”‘’`")
_JOINERS = frozenset({"and", "&", "/", ",", "+"})


def _joined(tokens: list[_Tok], mentions: list[_Mention]) -> bool:
    """Whether the first sentence naming an answer joins it to an alternative: "X or Y" (Y any
    words: "blue_pantry or nowhere"), "either X ...", "X and Y", "X/Y", "(a) and (b)" with Y
    another answer."""
    lo, hi = next(((a, b) for a, b in _sentences(tokens, mentions)
                   if any(a <= m.start < b for m in mentions)), (0, len(tokens)))
    inside = [m for m in mentions if lo <= m.start < hi]
    for m in inside:
        j = m.end
        while j < hi and (tokens[j].low in _BRACKETS or tokens[j].low in _ARTICLES):
            j += 1
        if j + 1 < hi and tokens[j].low == "," and tokens[j + 1].low == "or":
            j += 1  # "(a), or maybe the other"
        if j < hi and tokens[j].low == "or" and not (
                j + 1 < hi and tokens[j + 1].low in ("rather", "not", "so")):
            return not _negated(tokens, m)
        if j < hi and tokens[j].low in _JOINERS:
            k = j + 1
            while k < hi and (tokens[k].low in _BRACKETS or tokens[k].low in _ARTICLES):
                k += 1
            if any(o.start == k and o.key != m.key for o in inside):
                return True
        i = m.start - 1
        while i >= lo and (tokens[i].low in _BRACKETS or tokens[i].low in _ARTICLES
                           or tokens[i].low in ("in", "on", "at")):
            i -= 1
        if i >= lo and tokens[i].low in ("either", "both"):
            return True
    return False

