"""The `choice` rule: the gold is an option letter; the answer names it by letter or by the
option's text, and names no other option. `chosen_option` reads the option an answer names."""
from __future__ import annotations

import functools
import re
from typing import Sequence

from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.short import is_short
from eval.answers.text import LETTERS, clean, contains_phrase, mentioned_options, normalize, squash


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


@functools.lru_cache(maxsize=1024)
def _option_forms(choices: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The options as written (`squash`) and normalised, read once for all the replies to a
    question (a GRPO group's completions, the samples of a prompt)."""
    return tuple(squash(c) for c in choices), tuple(normalize(clean(c)) for c in choices)


def _named_options(answer: str, letters: str, choices: list[str]) -> set[str]:
    """The set of option letters an answer names, by letter or by option text."""
    squashed_options, norm_options = _option_forms(tuple(choices))
    s = clean(answer)
    # an option's exact text, before any lead-in is stripped: "answer the phone" is an option
    # of SocialIQA, not "the phone" after the word "answer"
    whole = squash(s)
    exact = {letters[i] for i, c in enumerate(squashed_options) if whole and c == whole}
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
    exact = {letters[i] for i, c in enumerate(squashed_options) if squashed and c == squashed}
    if len(exact) == 1:
        return exact
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
                squash(rest) == squashed_options[own] or norm_rest == norm_options[own]
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
    named = _letter_tokens(s, letters) | mentioned_options(ns, norm_options, letters)
    if not named and len(ns.split()) <= 3:
        # a few words that only one option holds ("evil" of "are evil", "exposed")
        holding = {letters[i] for i, o in enumerate(norm_options) if contains_phrase(o, ns)}
        return holding if len(holding) == 1 else set()
    return named


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


_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(normalize(text))


def _share_in(text_words: list[str], option: str) -> float:
    """The share of a text's words that the option's text holds."""
    if not text_words:
        return 0.0
    held = set(_words(option))
    return sum(w in held for w in text_words) / len(text_words)


def label_text_conflict(letter: str, text: str, choices: Sequence[str]) -> bool:
    """Whether the text after an option label is another option's rather than the label's own:
    exactly another option's text ("A. red_crate" where red_crate is F), or, for a longer
    text, one that shares under half its words with the labelled option and clearly more with
    another (a paraphrase or a truncation of C's text after the label A)."""
    line = squash(text)
    if not line:
        return False
    letters = LETTERS[: len(choices)]
    own = choices[letters.index(letter)]
    if line == squash(own) or squash(own).startswith(line):
        return False
    if any(squash(c) == line for c in choices):
        return True
    words = _words(text)
    if len(words) < 3:
        return False
    mine = _share_in(words, own)
    other = max((_share_in(words, c) for c in choices if c != own), default=0.0)
    return other >= 0.75 and other - mine >= 0.25


def opening_label(reply: str, choices: Sequence[str]) -> tuple[str | None, bool]:
    """The option label a reply opens with (None: none, or a letter that is no option) and
    whether the text after it is another option's (`label_text_conflict`)."""
    text = reply.strip()[: 4 * MAX_ANSWER_CHARS]
    m = _OPENING_LABEL.match(text)
    if not m or not choices:
        return None, False
    # a label is bracketed, punctuated or alone, so "A basket ..." or "I think ..." (an article,
    # a pronoun) never opens as one
    letter = next(g for g in m.groups() if g).upper()
    if letter not in LETTERS[: len(choices)]:
        return None, True  # "E." on a four-option item: no option a reader could name
    return letter, label_text_conflict(letter, text[m.end():].strip().split("\n", 1)[0], choices)


def gives_own_text(statement: str, choices: Sequence[str]) -> bool:
    """Whether a statement is an option label followed by that option's own text ("D. red_basket"
    where red_basket is D): explicit enough to outweigh a mislabelled opening."""
    label, conflict = opening_label(statement, choices)
    m = _OPENING_LABEL.match(statement.strip())
    if label is None or conflict or not m:
        return False
    words = _words(statement.strip()[m.end():])
    return bool(words) and _share_in(words, choices[LETTERS.index(label)]) >= 0.75


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
        letter, conflict = opening_label(text, choices)
        if letter is None or conflict:
            return None
        own = choices[letters.index(letter)]
        rest = text[m.end():]
        # the option's own text may hold labels ("A = benzoquinone, B = ..."): skip it
        if squash(own) and squash(rest[: len(own) + 8]).startswith(squash(own)):
            rest = rest.lstrip()[len(own):]
        others = {next(g for g in o.groups() if g).upper() for o in _OTHER_LABEL.finditer(rest)}
        return letter if not ((others & set(letters)) - {letter}) else None
    first = _PARAGRAPHS.split(text, maxsplit=1)[0]
    return chosen_option(first, choices)
