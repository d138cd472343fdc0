"""The answers an answer text names, and where: its tokens, and the mentions of each option (its
text, its letter, "option 2"), each candidate place or name, and yes or no, found as the careful
reading (eval.answers.careful) reads them."""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

from eval.answers.text import LETTERS, clean, normalize

# tokens: words (underscores split them, as `normalize` does; apostrophes dropped: isn't -> isnt)
# and single punctuation marks
_TOKEN = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[^\w\s]")
_ARTICLES = frozenset({"a", "an", "the"})
_PUNCT_BOUNDARY = frozenset(",.;:!?()[]{}\n—–")
_YES = frozenset("yes yeah yep yup".split())
_NO = frozenset("no nope nah".split())
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

