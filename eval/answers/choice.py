"""The `choice` rule: the gold is an option letter; the answer names it by letter or by the
option's text, and names no other option. `chosen_option` reads the option an answer names."""
from __future__ import annotations

import re
from typing import Sequence

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.short import is_short
from eval.answers.text import LETTERS, clean, mentioned_options, normalize, squash


_CHOICE_PREFIX = re.compile(
    r"^(?:(?:so|thus|therefore|hence)[,\s]+)?(?:the\s+|my\s+)?(?:final\s+|correct\s+|best\s+)?"
    r"(?:answer|option|choice)(?:\s+is)?\s*[:：\-]?\s*",
    re.I,
)
# an option letter written as a letter: standalone, optionally bracketed
_LETTER_TOKEN = re.compile(r"(?<![A-Za-z0-9'’])[\(\[]?([A-Z])[\)\]]?(?![A-Za-z0-9'’])")
# groups: opening bracket, letter, closing bracket, "." or ":", the rest
_LEADING_LETTER = re.compile(
    r"^([\(\[])?([A-Za-z])(?:([\)\]])\s*[.:]?|([.:])(?=\s|$)|(?=\s|$))\s*(.*)$", re.S
)


def is_choice(extracted: str, gold: str, choices: list[str]) -> bool:
    letters = LETTERS[: len(choices)] if choices else LETTERS
    gold_letter = gold.strip().strip("().").upper()
    if gold_letter not in letters or len(gold_letter) != 1:
        # a gold given as option text instead of a letter
        norm_gold = normalize(gold)
        hits = [letters[i] for i, c in enumerate(choices) if normalize(c) == norm_gold]
        if len(hits) != 1:
            return is_short(extracted, gold, choices)
        gold_letter = hits[0]
    return _named_options(extracted, letters, choices) == {gold_letter}


def chosen_option(answer: str | None, choices: Sequence[str]) -> str | None:
    """The letter of the one option an extracted answer names (by letter or by text, as the
    `choice` rule reads it), or None when it names none or several."""
    if not isinstance(answer, str) or not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
        return None
    choices = [c for c in choices if isinstance(c, str)]
    try:
        named = _named_options(answer, LETTERS[: len(choices)], choices)
    except (ValueError, RecursionError):
        return None
    return next(iter(named)) if len(named) == 1 else None


def _named_options(answer: str, letters: str, choices: list[str]) -> set[str]:
    """The set of option letters an answer names, by letter or by option text."""
    s = clean(answer)
    # an option's exact text, before any lead-in is stripped: "answer the phone" is an option
    # of SocialIQA, not "the phone" after the word "answer"
    whole = squash(s)
    exact = {letters[i] for i, c in enumerate(choices) if whole and squash(c) == whole}
    if len(exact) == 1:
        return exact
    for _ in range(3):
        s2 = _CHOICE_PREFIX.sub("", s, count=1).strip()
        if s2 == s:
            break
        s = s2
    # a lone letter in any case ("b", "(a).", "C!"), checked before normalize drops "a"
    lone = re.fullmatch(r"[\W_]*([A-Za-z])[\W_]*", s)
    if lone and lone.group(1).upper() in letters:
        return {lone.group(1).upper()}
    # the exact option text: compared as written first (signs and brackets matter in "e^(-3J)"),
    # then normalised
    squashed = squash(s)
    exact = {letters[i] for i, c in enumerate(choices) if squashed and squash(c) == squashed}
    if len(exact) == 1:
        return exact
    norm_options = [normalize(clean(c)) for c in choices]
    # a leading letter ("B) text", "(C) ...") before the normalised comparison, which would drop
    # the letter A as an article
    m = _LEADING_LETTER.match(s)
    if m:
        letter, rest = m.group(2), m.group(5)
        marked = bool(m.group(3) or m.group(4))  # "(B)", "B)", "B.", "B:"
        article = not marked and letter in "AI" and _reads_as_word(rest)
        if letter.upper() in letters and (letter.isupper() or marked) and not article:
            letter = letter.upper()
            own = letters.index(letter)
            norm_rest = normalize(rest)
            # "B) <the text of option B>": the option text may itself hold capitals ("A = x")
            if own < len(choices) and rest and (
                squash(rest) == squash(choices[own]) or norm_rest == norm_options[own]
            ):
                return {letter}
            named = {letter} | _letter_tokens(rest, letters)
            named |= {letters[i] for i, o in enumerate(norm_options) if o and o == norm_rest}
            return named
    ns = normalize(s)
    if not ns:
        return set()
    exact = {letters[i] for i, o in enumerate(norm_options) if o and o == ns}
    if exact:
        return exact
    return _letter_tokens(s, letters) | mentioned_options(ns, norm_options, letters)


def _letter_tokens(text: str, letters: str) -> set[str]:
    found = set()
    for m in _LETTER_TOKEN.finditer(text):
        letter = m.group(1)
        if letter not in letters:
            continue
        after = text[m.end() : m.end() + 12]
        bracketed = m.group(0) != letter
        if not bracketed and letter in "AI" and _reads_as_word(after):
            continue
        found.add(letter)
    return found


# Words that may follow an option letter: "A or B", "A is correct", "C because ..."
_AFTER_LETTER = frozenset(
    "or and nor vs versus is was seems looks appears would should could might must also too not "
    "because since as then maybe perhaps probably".split()
)


def _reads_as_word(following: str) -> bool:
    """Whether an uppercase A or I followed by `following` is the article or the pronoun
    ("A basket", "I think") rather than an option letter."""
    m = re.match(r"\s*([a-z]+)", following)
    return bool(m) and m.group(1) not in _AFTER_LETTER


# a reply that opens with an option label: "B.", "(B)", "B)", "[B]", "B:", "**B**", "Option B:",
# "Answer: (B)"; the label is followed by the end, a space or a line break
_OPENING_LABEL = re.compile(
    r"^[\s*_#>]*(?:(?:the\s+)?(?:final\s+|correct\s+|best\s+)?(?:answer|option|choice)\s*(?:is\s*)?"
    r"[:：\-]?\s*)?[*_]*(?:[\(\[]([A-Z])[\)\]]|([A-Z])(?:[.):：]|\*\*)|([A-Z])(?=\s*$))"
    r"[*_]*(?=\s|$)", re.I,
)
# another option written as a label inside the reply: "(C)", "C)", "C:", "option C", "answer C",
# or a line that opens with "C." (a reply listing the options answers none of them)
_OTHER_LABEL = re.compile(
    r"(?<![A-Za-z0-9'’])(?:[\(\[]([A-Z])[\)\]]|([A-Z])[):：](?=\s|$)|"
    r"(?:option|answer|choice)\s+\(?([A-Z])\)?(?![A-Za-z0-9'’]))"
    r"|(?m:^)[ \t*_#>-]*([A-Z])[.)：:](?=\s)", re.I,
)
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")


def read_choice(reply: str, choices: Sequence[str], candidates: Sequence[str] = ()) -> str | None:
    """The option letter an untagged reply gives, or None. A careful reader's rule: a reply that
    opens with an option label answers that option, whatever its explanation says, unless it
    also writes another option as a label (a hedge: "B. ... Or maybe C: ..."); otherwise its
    first paragraph must name exactly one option, by letter or by the option's text."""
    if not choices or not reply.strip():
        return None
    letters = LETTERS[: len(choices)]
    text = reply.strip()[: 4 * MAX_ANSWER_CHARS]
    m = _OPENING_LABEL.match(text)
    if m:
        # a label is bracketed, punctuated or alone, so "A basket ..." or "I think ..." (an
        # article, a pronoun) never opens as one
        letter = next(g for g in m.groups() if g).upper()
        if letter not in letters:
            return None  # "E." on a four-option item: no option a reader could name
        own = choices[letters.index(letter)]
        rest = text[m.end():]
        # the label, then another option's text ("A. red_crate" where red_crate is F): two
        # options named, no answer (as inside the tags)
        line = squash(rest.strip().split("\n", 1)[0])
        if line and line != squash(own) and any(squash(c) == line for c in choices):
            return None
        # the option's own text may hold labels ("A = benzoquinone, B = ..."): skip it
        if squash(own) and squash(rest[: len(own) + 8]).startswith(squash(own)):
            rest = rest.lstrip()[len(own):]
        others = {next(g for g in o.groups() if g).upper() for o in _OTHER_LABEL.finditer(rest)}
        return letter if not ((others & set(letters)) - {letter}) else None
    first = _PARAGRAPHS.split(text, maxsplit=1)[0]
    return chosen_option(first, choices)
