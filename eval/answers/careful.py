"""The careful reading of an answer text: which one answer it gives, or why it gives none.

A grader does not credit a reply only because the gold answer occurs in it. This module finds
every answer an answer text names (option letters and texts, option numbers, a story's places,
yes and no) and decides, as a careful grader would:

- **negation**: an answer under a negation in its own clause is not given ("Not in the
  blue_pantry.", "Definitely not D.", "Sydney is not sympathetic.", "Not (A).", "a) is not it.",
  "Not 42."); an answer text whose only answers are negated gives none;
- **hedge**: two or more different answers given ("Either the blue_pantry or the fridge.",
  "A or C", "A, C", "(a) and (b)", "No or yes.", a later "Or maybe C."), or one answer offered
  with an alternative ("blue_pantry or nowhere"), give none;
- **self-correction**: a later "Actually K." / "Wait, ..." / "I mean ..." naming one other answer
  replaces the first ("O. green_bathtub. Actually K." answers K; "16, wait, 17" answers 17);
  naming several, none;
- **reasons**: answers named in a clause that explains the first one ("X, because she did not see
  Olivia move it to the Y", "X, which is in the Y") are not answers; "X, not Y" answers X;
- **belief beside reality**: "She thinks it is in X but it is really in Y" answers what the
  question asks, when its wording asks for one of them (`asked_about`: "Where will she look
  for ...?" and "Where does she think ...?" ask for the belief, "Where is it really?" for the
  reality); else it gives none.

A reply that is one JSON object is read by its `answer`. `judge` returns a `Judgement`: the one answer's key (an option letter, a candidate as written, yes
or no), or a flag saying why there is none; `key` None and `flag` None mean that the text names no
answer this module knows, and the type's own rule decides. Every function is total on strings
and bounded by `MAX_ANSWER_CHARS`.
"""
from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.text import LETTERS, clean, normalize

NEGATION, HEDGE, CORRECTION = "negation", "hedge", "correction"
# the reader of the answer type and this module read two different answers (eval.answers.reading)
UNCLEAR = "unclear"
# flags under which the text gives no answer (a correction to one answer gives that answer)
NO_ANSWER = (NEGATION, HEDGE, UNCLEAR)


@dataclass(frozen=True)
class Judgement:
    key: str | None  # the one answer given (letter, candidate, "yes"/"no"), None: none found
    flag: str | None = None  # NEGATION, HEDGE, CORRECTION (key None: the correction was unclear)
    resolved: bool = False  # several answers were named and the reading chose one of them

    @property
    def unreadable(self) -> bool:
        return self.key is None and self.flag is not None


NOTHING = Judgement(None)

# tokens: words (underscores split them, as `normalize` does; apostrophes dropped: isn't -> isnt)
# and single punctuation marks
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[^\w\s]")
_ARTICLES = frozenset({"a", "an", "the"})
_SENTENCE_END = frozenset(".!?\n;")
_PUNCT_BOUNDARY = frozenset(",.;:!?()[]{}\n—–")
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
_CORRECTION_WORDS = frozenset("actually wait sorry correction oops instead rather".split())
_CORRECTION_PHRASES = (("i", "mean"), ("on", "second", "thought"), ("scratch", "that"),
                       ("let", "me", "correct"), ("no", "wait"), ("i", "meant"))
_HEDGE_OPENERS = frozenset("or maybe perhaps possibly alternatively".split())
_BELIEF_WORDS = frozenset(
    "think thinks thought believe believes believed look looks looking search searches searching "
    "expect expects expected assume assumes assumed suppose supposes belief mind".split())
_REALITY_WORDS = frozenset("really actually reality truly fact truth currently now".split())
_YES = frozenset("yes yeah yep yup".split())
_NO = frozenset("no nope nah".split())
_NEGATION_LOOKBACK = 4  # words (articles aside) before an answer that a negation may stand in
# "option 2", "choice 3", "answer 1"
_NUMBER_WORDS = frozenset({"option", "choice", "answer", "number"})


@dataclass(frozen=True)
class _Tok:
    low: str  # lower-cased, apostrophes dropped
    raw: str
    start: int  # character offsets in the text


def _tokens(text: str) -> list[_Tok]:
    """The tokens of a text, read as `normalize` reads it (NFKC: "①" is "1")."""
    out = []
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        low = unicodedata.normalize("NFKC", raw).lower().replace("'", "").replace("’", "")
        out.append(_Tok(low, raw, m.start()))
    # line breaks end sentences as full stops do
    for m in re.finditer(r"\n", text):
        out.append(_Tok("\n", "\n", m.start()))
    out.sort(key=lambda t: t.start)
    return out


@dataclass(frozen=True)
class _Mention:
    start: int  # token indices
    end: int
    key: str
    # the keys of every answer written the same way (two options with the same text)
    alts: frozenset = frozenset()


# An option's or a candidate's words, and a question's wording, are read again for every reply to
# that question (a GRPO group's completions, the samples of a prompt): kept once read.
@functools.lru_cache(maxsize=4096)
def _phrase_tokens(text: str) -> tuple[str, ...]:
    return tuple(normalize(clean(text)).split())


@functools.lru_cache(maxsize=4096)
def _lead(text: str) -> tuple[str, ...]:
    """The tokens an option's text opens with that normalisation drops ("A = ..." opens with the
    article-like A and "="): a match of the option covers them too."""
    lead = []
    for t in _tokens(clean(text)):
        if t.low in _ARTICLES or not t.low[:1].isalnum():
            lead.append(t.low)
        else:
            break
    return tuple(lead)


def _phrases(tokens: list[_Tok], phrases: list[tuple[str, str]]) -> list[_Mention]:
    """Occurrences of the phrases (normalised words, articles dropped from both sides), longest
    first and never overlapping ("Sally's mother" is not also "Sally")."""
    words = [(i, t.low) for i, t in enumerate(tokens)
             if t.low not in _ARTICLES and (t.low[:1].isalnum())]
    taken = [False] * len(tokens)
    found = []
    shaped = [(_phrase_tokens(text), _lead(text), key) for text, key in phrases]
    same: dict[tuple[str, ...], set[str]] = {}
    for words_of, _, key in shaped:
        same.setdefault(words_of, set()).add(key)
    for words_of, lead, key in sorted(shaped, key=lambda p: -len(p[0])):
        n = len(words_of)
        if not n:
            continue
        for k in range(len(words) - n + 1):
            if all(words[k + j][1] == words_of[j] for j in range(n)):
                start, end = words[k][0], words[k + n - 1][0] + 1
                if lead and start >= len(lead) and tuple(
                        t.low for t in tokens[start - len(lead):start]) == lead:
                    start -= len(lead)
                if any(taken[start:end]):
                    continue
                for j in range(start, end):
                    taken[j] = True
                found.append(_Mention(start, end, key, frozenset(same[words_of])))
    return found


_AFTER_LETTER = frozenset(
    "or and nor vs versus is was seems looks appears would should could might must also too not "
    "because since as then maybe perhaps probably".split())


def _letters(tokens: list[_Tok], letters: str, covered: set[int]) -> list[_Mention]:
    """Option letters written as letters: a capital alone ("B", "(C)", "D."), not the article A or
    the pronoun I before a word; a lower-case letter only in brackets or after "option"."""
    out = []
    for i, t in enumerate(tokens):
        if i in covered or len(t.raw) != 1 or not t.raw.isalpha():
            continue
        prev = tokens[i - 1].low if i else ""
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        letter = t.raw.upper()
        if letter not in letters:
            continue
        if t.raw.islower():
            bracketed = nxt is not None and nxt.low in (")", "]") and (
                prev in ("(", "[") or prev in _PUNCT_BOUNDARY or i == 0)  # "(a)", "a)"
            if not (bracketed or prev in _NUMBER_WORDS or prev == "is" and i == len(tokens) - 1):
                continue
        elif t.raw in "AI" and nxt is not None and nxt.low[:1].isalpha() and nxt.raw[:1].islower() \
                and nxt.low not in _AFTER_LETTER:
            continue  # "A basket", "I think"
        out.append(_Mention(i, i + 1, letter))
    return out


def _option_numbers(tokens: list[_Tok], n_choices: int) -> list[_Mention]:
    """"Option 2", "choice 3": the option of that number (an explicit answer, like a label)."""
    out = []
    for i in range(1, len(tokens)):
        if tokens[i - 1].low in _NUMBER_WORDS and tokens[i].low.isdigit():
            k = int(tokens[i].low)
            if 1 <= k <= n_choices:
                out.append(_Mention(i - 1, i + 1, LETTERS[k - 1]))
    return out


def _yes_no(tokens: list[_Tok]) -> list[_Mention]:
    """Yes and no said as answers: at the start of a sentence, or followed by a punctuation mark
    or the end ("No, she ...", "The answer is no."), not the determiner of "no idea"."""
    out = []
    for i, t in enumerate(tokens):
        if t.low not in _YES and t.low not in _NO:
            continue
        nxt = tokens[i + 1].low if i + 1 < len(tokens) else "."
        prev = tokens[i - 1].low if i else "."
        said = nxt in _PUNCT_BOUNDARY or prev in _PUNCT_BOUNDARY or prev in ("is", "say", "says")
        if said:
            out.append(_Mention(i, i + 1, "yes" if t.low in _YES else "no"))
    return out


def _mentions(tokens: list[_Tok], answer_type: str, choices: Sequence[str],
              candidates: Sequence[str], gold: str) -> list[_Mention]:
    if answer_type == "choice" and choices:
        letters = LETTERS[: len(choices)]
        found = _phrases(tokens, [(c, letters[i]) for i, c in enumerate(choices)])
        found += _option_numbers(tokens, len(choices))
        covered = {j for m in found for j in range(m.start, m.end)}
        found += _letters(tokens, letters, covered)
    elif answer_type == "short":
        names = [c for c in candidates if isinstance(c, str)] or [gold]
        found = _phrases(tokens, [(c, c) for c in names])
    elif answer_type == "yes_no":
        found = _yes_no(tokens)
    else:
        return []
    return sorted(found, key=lambda m: m.start)


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


_ASKS_BELIEF = re.compile(
    r"(?i)\b(?:think|thinks|believe|believes|look|looks|search|searches|expect|expects|"
    r"look\s+for|try\s+to\s+find|go\s+to\s+find)\b")
_ASKS_REALITY = re.compile(
    r"(?i)\b(?:really|actually|in\s+reality|now|currently|(?:at|by)\s+the\s+end)\b")
_PERSPECTIVE = re.compile(r"(?i)\bfrom\s+(?:the\s+)?(\w+)(?:['’]s)?\s+(?:perspective|point\s+of\s+view)")


def _last_question(text: str) -> str | None:
    """The text's last question: from the line break or question mark before its last question
    mark up to that mark (the last match of `[^\\n?]*\\?`, whose search is quadratic in the
    length of a line without a question mark: 18 ms on a Hi-ToM story)."""
    end = text.rfind("?")
    if end < 0:
        return None
    return text[max(text.rfind("\n", 0, end), text.rfind("?", 0, end)) + 1:end + 1]


@functools.lru_cache(maxsize=1024)
def asked_about(question: str | None) -> str | None:
    """What a question asks for when a reply names a belief beside the reality: "belief" for
    "Where will Isabella look for the X?" or "Where does she think the X is?", "reality" for
    "Where is the X really?"; None when its wording does not say (the last question of the text
    is the one asked)."""
    if not isinstance(question, str) or not question.strip():
        return None
    q = _last_question(question[-4000:]) or question[-400:]
    perspective = _PERSPECTIVE.search(q)  # OpenToM: "From Jeremy's perspective, ..."
    if perspective:
        return "reality" if perspective.group(1).lower() == "narrator" else "belief"
    belief, reality = bool(_ASKS_BELIEF.search(q)), bool(_ASKS_REALITY.search(q))
    if belief != reality:
        return "belief" if belief else "reality"
    return None


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


_NUMBER = re.compile(r"-?\d+(?:[.,/]\d+)*")


def _number(tokens: list[_Tok], text: str) -> Judgement:
    """A number answer checked for a negation of its last number ("Not 42.", "It is not
    \\boxed{42}.")."""
    numbers = [i for i, t in enumerate(tokens) if t.low[:1].isdigit()]
    if not numbers:
        return NOTHING
    cues = [i for i in range(1, len(tokens)) if _opens_clause(tokens, i, 0) and numbers[0] < i
            and _cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)]
    if cues:  # "\\boxed{16}. Actually, 17.": the number after the correction, when it is one
        at = tokens[cues[-1]].start
        after = {m.group(0) for m in _NUMBER.finditer(text[at:])}
        before = {m.group(0) for m in _NUMBER.finditer(text[:at])}
        if len(after) > 1:
            return Judgement(None, CORRECTION)
        if after and after != before:
            return Judgement(next(iter(after)), CORRECTION, True)
    if _negated(tokens, _Mention(numbers[-1], numbers[-1] + 1, tokens[numbers[-1]].low)):
        return Judgement(None, NEGATION)
    return NOTHING


def _json_answer(text: str) -> str | None:
    """The `answer` of a reply that is one JSON object ({"answer": "B"})."""
    s = text.strip()
    if s.startswith("```"):
        s = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", s)
    if not (s.startswith("{") and s.endswith("}")) or len(s) > MAX_ANSWER_CHARS:
        return None
    try:
        obj = json.loads(s)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    values = [v for k, v in obj.items() if isinstance(k, str) and k.lower() in ("answer", "final_answer")]
    return str(values[0]) if len(values) == 1 and isinstance(values[0], (str, int)) else None


def judge(text: str | None, answer_type: str | None, choices: Sequence[str] = (),
          candidates: Sequence[str] = (), gold: str = "", asks: str | None = None) -> Judgement:
    """The careful reading of an answer text (see the module docstring). The first sentence that
    names an answer gives it; later sentences count only when they correct it ("Actually K.")
    or hedge ("Or maybe C.")."""
    if not isinstance(text, str) or not text.strip() or answer_type not in (
            "choice", "short", "yes_no", "number"):
        return NOTHING
    text = text[: 4 * MAX_ANSWER_CHARS]
    inner = _json_answer(text)
    if inner is not None:
        text = inner
    choices = [c for c in choices if isinstance(c, str)]
    text = clean(text)  # LaTeX wrappers and emphasis away, as from the options
    tokens = _tokens(text)
    if answer_type == "number":
        return _number(tokens, text)
    mentions = _mentions(tokens, answer_type, choices, candidates, gold)
    if not mentions:
        return NOTHING
    if _joined(tokens, mentions):
        return Judgement(None, HEDGE)
    sentences = _sentences(tokens, mentions)
    key, flag, resolved = None, None, False
    first = negated_only = None
    label = answer_type == "choice" and _opening_label(tokens, mentions)
    for k, (lo, hi) in enumerate(sentences):
        inside = [m for m in mentions if lo <= m.start and m.end <= hi]
        if not inside:
            continue
        # a correction inside the first sentence: "O, actually K", "O. Actually K"
        cut = next((i for i in range(lo + 1, hi) if _opens_clause(tokens, i, lo)
                    and _cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)
                    and any(m.start > i for m in inside) and any(m.start < i for m in inside)), None)
        said = _said(tokens, mentions, lo, hi if cut is None else cut, label and k == 0)
        first = k
        raw = {m.key for m in inside}
        key = _one(said.affirmed)
        if not said.affirmed and not said.negated:
            continue  # only reasons
        if not said.affirmed and cut is None:
            # only negated: the next sentence naming an answer may give it ("Not in the box.
            # In the basket."), else there is none
            if negated_only is None:
                negated_only = k
                continue
            return Judgement(None, NEGATION)
        if not said.affirmed:
            pass
        elif key is None:
            # several answers: the belief or the reality when the question asks for one
            by_kind: dict[str | None, set[str]] = {}
            for m in said.affirmed:
                by_kind.setdefault(_kind_of_clause(tokens, m, lo), set()).add(m.key)
            if asks and len(by_kind.get(asks, ())) == 1 and None not in by_kind and len(by_kind) == 2:
                key, resolved = next(iter(by_kind[asks])), True
            else:
                return Judgement(None, HEDGE)
        elif len(raw) > 1:
            resolved = True
        if cut is not None:
            new = _one(_said(tokens, mentions, cut, hi).affirmed)
            if new is None:
                return Judgement(None, CORRECTION)
            if new != key:
                key, flag = new, CORRECTION
        break
    if key is None:
        return NOTHING if negated_only is None else Judgement(None, NEGATION)
    if negated_only is not None:
        resolved = True
    for lo, hi in sentences[first + 1:]:
        said = _said(tokens, mentions, lo, hi)
        others = [m for m in said.affirmed if m.key != key]
        if not others:
            continue
        correction = any(_cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)
                         and _opens_clause(tokens, i, lo) for i in range(lo, min(hi, lo + 4)))
        hedge = any(t.low in _HEDGE_OPENERS for t in tokens[lo:min(hi, lo + 3)])
        if correction:
            new = _one(said.affirmed)
            if new is None:
                return Judgement(None, CORRECTION)
            key, flag = new, CORRECTION
        elif hedge:
            return Judgement(None, HEDGE)
    explicit = any(m.key == key and tokens[m.start].low in _NUMBER_WORDS for m in mentions)
    return Judgement(key, flag, resolved or explicit or flag == CORRECTION)
