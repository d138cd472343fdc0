"""The one answer parser: evaluation scores and RL rewards both come from here.

A completion is expected to be exactly one `<think>...</think>` block followed by exactly one
`<answer>...</answer>` block (DESIGN.md; ToM-Synth eq. 3-5). Reasoning is never scored: only the
answer is compared with the gold under the row's `answer_type`.

Extraction (`extract_answer`):
1. Everything up to the last `</think>` is reasoning and ignored.
2. `<answer>...</answer>` blocks after it are the answer. Several blocks with different contents
   (normalised, signs kept: `-42` and `42` differ) are returned joined by newlines, so the
   comparison sees several answers and marks them wrong.
3. Fallback, only when no answer block exists and `fallback=True` (evaluation of models that do
   not use the tags; never used for RL outcome credit because that requires the format): within
   the last `FALLBACK_WINDOW` characters after the last `</think>`, the text of the last
   "answer: X" / "the answer is X" line, else the last `\\boxed{X}`, else an unclosed trailing
   `<answer>X`, else the whole remaining reply when it is at most `SHORT_REPLY_CHARS` long,
   else, for a multiple-choice question (`choices` given; `score` gives them for `choice` rows),
   the first paragraph of a reply that opens with an option label (`B. <long option text>`) or
   a reply that is exactly one option's text. A reply whose `<think>` is never closed has no
   answer.

Comparison (`is_correct`), by answer type:
- `choice`: the gold is a letter among `choices`. `B`, `(B)`, `B.`, `B) text`, `Option B`,
  `the answer is B` or the exact option text name B. An answer naming two or more different
  letters or options is wrong.
- `yes_no`: yes or no (`Yes.`, `No, she does not`); an answer saying both is wrong.
- `short`: a name (room, container, person). Correct when the normalised answer is the gold, or
  when it contains the gold in a short phrase ("in the basket") that is not a list and names no
  other candidate from `choices` (or, without choices, adds only function words).
- `knowledge`: `knows about it` / `does not know about it`; the negation must match.
- `number`: mathematical equivalence, for counts, AIME integers and cloze math answers. Blanks
  separated by `;` are compared one by one, in order. A gold that is one real number (`42`,
  `0.015`, `\\sqrt{3}`, `x = 5`, `10 cm`) is compared by value: `42.0`, `\\boxed{42}`, `$42$`,
  `1/2` = `0.5` = `\\frac{1}{2}`, `2\\sqrt{2}` = `\\sqrt{8}`, or a short sentence whose only number
  it is; an answer with several different numbers, or with other mathematics around its number
  (`1-5i`, `\\pm 2`), is wrong. Any other gold is compared structurally after LaTeX normalisation:
  expressions by value (sympy; variables sampled at fixed points), complex numbers (`1-5i`),
  relations side by side (`y=\\pm\\sqrt{3}x` is the pair y = ±√3·x), tuples and intervals element
  by element with their brackets, solution lists, sets and unions in any order. A word gold
  (`\\text{parabola}`) follows the `short` rule; other text must match after normalisation.

Every public function is total on strings (it never raises on model output, however large) and
deterministic. Work is bounded by size caps, never by timeouts, so a verdict cannot depend on the
load of the machine.
"""
from __future__ import annotations

import cmath
import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

__all__ = [
    "Verdict",
    "check_format",
    "extract_answer",
    "chosen_option",
    "normalize",
    "is_correct",
    "score",
    "format_reward",
    "outcome_reward",
]

# Work limits: a reward function sees millions of completions, some of them degenerate.
FALLBACK_WINDOW = 4000  # characters at the end of a tagless reply searched for an answer
SHORT_REPLY_CHARS = 200  # a tagless reply at most this long is taken whole as the answer
MAX_ANSWER_CHARS = 2000  # longer extracted answers are never correct (no real answer is this long)
MAX_ANSWER_BLOCKS = 32  # answer blocks looked at; more than one distinct is already wrong

_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_ANSWER_OPEN, _ANSWER_CLOSE = "<answer>", "</answer>"
_TAGS = (_THINK_OPEN, _THINK_CLOSE, _ANSWER_OPEN, _ANSWER_CLOSE)

# Lower-cases ASCII only, so indices in the lowered text are indices in the original text
# (str.lower can change the length of some non-ASCII strings).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True)
class Verdict:
    format_ok: bool  # exactly one think block followed by exactly one answer block
    extracted: str | None  # the answer text after extraction (None if nothing was found)
    correct: bool  # extracted matches gold under answer_type (with the evaluation fallback)


# --------------------------------------------------------------------------------------------
# Format and extraction


def check_format(completion: str) -> bool:
    """True iff the completion is `<think>...</think>` then `<answer>...</answer>` with only
    whitespace around and between them, each tag exactly once, and a non-empty answer."""
    if not isinstance(completion, str):
        return False
    if any(completion.count(tag) != 1 for tag in _TAGS):
        return False
    t0, t1 = completion.find(_THINK_OPEN), completion.find(_THINK_CLOSE)
    a0, a1 = completion.find(_ANSWER_OPEN), completion.find(_ANSWER_CLOSE)
    if not (t0 < t1 < a0 < a1):
        return False
    outside = (
        completion[:t0],
        completion[t1 + len(_THINK_CLOSE) : a0],
        completion[a1 + len(_ANSWER_CLOSE) :],
    )
    if any(part.strip() for part in outside):
        return False
    return bool(completion[a0 + len(_ANSWER_OPEN) : a1].strip())


def extract_answer(completion: str, *, fallback: bool = True,
                   choices: Sequence[str] | None = None) -> str | None:
    """The answer text of a completion (see the module docstring for the rules), or None.
    `choices` (the options of a multiple-choice question) enables the last fallback: a long
    untagged reply that starts with an option label."""
    if not isinstance(completion, str) or not completion:
        return None
    low = completion.translate(_ASCII_LOWER)
    close = low.rfind(_THINK_CLOSE)
    if close >= 0:
        start = close + len(_THINK_CLOSE)
    elif low.find(_THINK_OPEN) >= 0 and low.find(_ANSWER_OPEN) < 0:
        return None  # still thinking when it stopped: no answer was given
    else:
        start = 0

    blocks, unclosed = _answer_blocks(completion, low, start)
    if blocks:
        distinct: list[str] = []
        seen: set[str] = set()
        for b in blocks:
            key = _block_key(b[:MAX_ANSWER_CHARS + 1])
            if key not in seen:
                seen.add(key)
                distinct.append(b)
        return _unbox(distinct[0]) if len(distinct) == 1 else "\n".join(distinct)
    if not fallback:
        return None

    tail = completion[max(start, len(completion) - FALLBACK_WINDOW) :]
    tail = re.sub(r"(?i)</?think>", " ", tail)
    marked = _last_answer_line(tail)
    if marked:
        return _unbox(marked)
    boxed = _last_boxed(tail)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    if unclosed is not None and unclosed.strip():
        return unclosed.strip()[:MAX_ANSWER_CHARS + 1]
    rest = tail.strip()
    if rest and len(rest) <= SHORT_REPLY_CHARS and len(completion) - start <= FALLBACK_WINDOW:
        return rest
    if choices and unclosed is None:
        return _labelled_reply(completion[start:], choices)
    return None


# an option label opening a reply: "B. ", "B) ", "(B) ", "[B] ", "B: "
_OPTION_LABEL = re.compile(r"\s*(?:[\(\[]([A-Z])[\)\]]|([A-Z])[.)：:])[ \t]*(?=\S)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _labelled_reply(reply: str, choices: Sequence[str]) -> str | None:
    """A multiple-choice reply without tags, too long for the short-reply fallback: when it
    opens with an option label ("B. <long option text>") its first paragraph is the answer (the
    comparison then checks that the paragraph names no other option); when the whole reply is
    one option's text, that text is."""
    m = _OPTION_LABEL.match(reply)
    if m and _LETTERS.index(m.group(1) or m.group(2)) < len(choices):
        return _PARAGRAPH_BREAK.split(reply.strip(), maxsplit=1)[0][:MAX_ANSWER_CHARS + 1]
    whole = _squash(reply[:MAX_ANSWER_CHARS + 1])
    if any(isinstance(c, str) and _squash(c) == whole for c in choices):
        return reply.strip()
    return None


_SIGNS = frozenset("+-−*/^=<>±√")


def _block_key(block: str) -> str:
    """Answer blocks with the same key are one answer: `B` and `B.`, `basket` and `the basket`;
    signs and operators are kept, so `-42` and `42` are two answers."""
    return normalize(block) + "|" + "".join(c for c in block if c in _SIGNS)


def _answer_blocks(text: str, low: str, start: int) -> tuple[list[str], str | None]:
    """Contents of `<answer>...</answer>` blocks at or after `start` (tags in any case), and the
    text after a final unclosed `<answer>` if there is one."""
    blocks: list[str] = []
    pos = start
    while len(blocks) < MAX_ANSWER_BLOCKS:
        a0 = low.find(_ANSWER_OPEN, pos)
        if a0 < 0:
            return blocks, None
        a1 = low.find(_ANSWER_CLOSE, a0)
        if a1 < 0:
            return blocks, text[a0 + len(_ANSWER_OPEN) :]
        content = text[a0 + len(_ANSWER_OPEN) : a1]
        # a nested opening tag means the first one was never closed: keep the innermost
        inner = low.rfind(_ANSWER_OPEN, a0 + 1, a1)
        if inner >= 0:
            content = text[inner + len(_ANSWER_OPEN) : a1]
        blocks.append(content.strip())
        pos = a1 + len(_ANSWER_CLOSE)
    return blocks, None


_ANSWER_LINE = re.compile(
    r"(?im)\b(?:final\s+answer|correct\s+answer|answer)\s*(?:is|:|：|-)\s*(?:[:：]\s*)?(\S[^\n]*)$"
)


def _last_answer_line(text: str) -> str | None:
    found = None
    for m in _ANSWER_LINE.finditer(text):
        found = m.group(1)
    if found is None:
        return None
    found = found.strip().rstrip(".").strip()
    return found or None


def _unbox(text: str) -> str:
    """`\\boxed{X}` -> `X` when the box holds the whole answer."""
    t = text.strip()
    if t.startswith(("\\boxed{", "\\fbox{")) and t.endswith("}"):
        inner = _last_boxed(t)
        if inner is not None and t.endswith(inner + "}") and t.index("{") + 1 + len(inner) + 1 == len(t):
            return inner.strip()
    return text


def _last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` with balanced braces, if any."""
    i = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if i < 0:
        return None
    j = text.index("{", i) + 1
    depth = 1
    for k in range(j, len(text)):
        c = text[k]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[j:k]
    return None


# --------------------------------------------------------------------------------------------
# Normalisation


_ARTICLES = frozenset({"a", "an", "the"})
_APOSTROPHES = str.maketrans("", "", "'’‘`")


def normalize(text: str) -> str:
    """Lower-case, drop apostrophes, turn other punctuation and symbols into spaces, drop the
    articles a/an/the and collapse whitespace: `"The Green_Basket."` -> `"green basket"`."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFKC", text).lower().translate(_APOSTROPHES)
    text = "".join(" " if unicodedata.category(ch)[0] in "PSZC" else ch for ch in text)
    return " ".join(t for t in text.split() if t not in _ARTICLES)


_LATEX_WRAPPERS = re.compile(r"\\(?:boxed|fbox|text|textbf|textit|mathrm|mathbf|emph)\s*\{([^{}]*)\}")


def _clean(text: str) -> str:
    """Remove presentation around an answer: LaTeX wrappers and math delimiters, Markdown
    emphasis, surrounding quotes."""
    s = text.strip()
    for _ in range(4):  # wrappers may nest: \boxed{\text{B}}
        s2 = _LATEX_WRAPPERS.sub(r"\1", s)
        if s2 == s:
            break
        s = s2
    s = s.replace("\\(", " ").replace("\\)", " ").replace("\\[", " ").replace("\\]", " ")
    s = s.replace("$", " ").replace("**", " ").replace("__", " ").replace("`", " ")
    return s.strip().strip("\"'“”‘’").strip()


# --------------------------------------------------------------------------------------------
# Comparison


def is_correct(
    extracted: str | None, gold: str, answer_type: str, choices: Sequence[str] = ()
) -> bool:
    """Whether an extracted answer matches the gold under the rule of `answer_type`.

    Raises ValueError only for an unknown `answer_type` (a caller bug, never model output)."""
    if answer_type not in _RULES:
        raise ValueError(f"unknown answer_type {answer_type!r}; expected one of {', '.join(_RULES)}")
    if not isinstance(extracted, str) or not isinstance(gold, str):
        return False
    if not extracted.strip() or not gold.strip() or len(extracted) > MAX_ANSWER_CHARS:
        return False
    choices = [c for c in (choices or ()) if isinstance(c, str)]
    try:
        return _RULES[answer_type](extracted, gold, choices)
    except (ValueError, ArithmeticError, TypeError, RecursionError, MemoryError, OverflowError):
        return False  # a pathological answer that defeats a parser is simply not correct


# -- choice ------------------------------------------------------------------------------------

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
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


def _is_choice(extracted: str, gold: str, choices: list[str]) -> bool:
    letters = _LETTERS[: len(choices)] if choices else _LETTERS
    gold_letter = gold.strip().strip("().").upper()
    if gold_letter not in letters or len(gold_letter) != 1:
        # a gold given as option text instead of a letter
        norm_gold = normalize(gold)
        hits = [letters[i] for i, c in enumerate(choices) if normalize(c) == norm_gold]
        if len(hits) != 1:
            return _is_short(extracted, gold, choices)
        gold_letter = hits[0]
    return _named_options(extracted, letters, choices) == {gold_letter}


def chosen_option(answer: str | None, choices: Sequence[str]) -> str | None:
    """The letter of the one option an extracted answer names (by letter or by text, as the
    `choice` rule reads it), or None when it names none or several."""
    if not isinstance(answer, str) or not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
        return None
    choices = [c for c in choices if isinstance(c, str)]
    try:
        named = _named_options(answer, _LETTERS[: len(choices)], choices)
    except (ValueError, RecursionError):
        return None
    return next(iter(named)) if len(named) == 1 else None


def _named_options(answer: str, letters: str, choices: list[str]) -> set[str]:
    """The set of option letters an answer names, by letter or by option text."""
    s = _clean(answer)
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
    squashed = _squash(s)
    exact = {letters[i] for i, c in enumerate(choices) if squashed and _squash(c) == squashed}
    if len(exact) == 1:
        return exact
    norm_options = [normalize(_clean(c)) for c in choices]
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
                _squash(rest) == _squash(choices[own]) or norm_rest == norm_options[own]
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
    return _letter_tokens(s, letters) | _mentioned_options(ns, norm_options, letters)


def _squash(text: str) -> str:
    return " ".join(_clean(text).casefold().split()).rstrip(".")


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


def _contains_phrase(haystack: str, phrase: str) -> bool:
    """Whole-word containment of a normalised phrase in a normalised text."""
    return bool(phrase) and f" {phrase} " in f" {haystack} "


def _mentioned_options(norm_answer: str, norm_options: list[str], letters: str) -> set[str]:
    """Options whose full text appears in the answer, ignoring an option whose text only appears
    inside a longer mentioned option ("Sally" inside "Sally's mother")."""
    hits = [i for i, o in enumerate(norm_options) if _contains_phrase(norm_answer, o)]
    kept = [
        i for i in hits
        if not any(j != i and len(norm_options[j]) > len(norm_options[i])
                   and _contains_phrase(norm_options[j], norm_options[i]) for j in hits)
    ]
    return {letters[i] for i in kept}


# -- yes / no ----------------------------------------------------------------------------------


def _yes_no_of(text: str) -> set[str]:
    tokens = set(normalize(_clean(text)).split())
    return {w for w in ("yes", "no") if w in tokens}


def _is_yes_no(extracted: str, gold: str, choices: list[str]) -> bool:
    g = _yes_no_of(gold)
    if len(g) != 1:
        return _is_short(extracted, gold, choices)
    return _yes_no_of(extracted) == g


# -- knowledge ---------------------------------------------------------------------------------

_KNOW_WORDS = frozenset({"know", "knows", "knew", "known", "knowing", "aware", "unaware", "informed"})
_NEGATIONS = frozenset({
    "not", "no", "never", "doesnt", "didnt", "dont", "isnt", "wasnt", "hasnt", "havent", "cannot",
    "cant", "unaware", "uninformed", "neither", "nor", "nt",
})
_CLAUSE_SPLIT = re.compile(r"[,;/|\n]|\bor\b|\band\b|\bbut\b|\bwhile\b", re.I)


def _knowledge_polarities(text: str) -> set[bool]:
    """True for each clause saying someone knows, False for each saying they do not."""
    out = set()
    for clause in _CLAUSE_SPLIT.split(_clean(text)):
        tokens = normalize(clause).split()
        if any(t in _KNOW_WORDS for t in tokens):
            out.add(not any(t in _NEGATIONS for t in tokens))
    return out


def _is_knowledge(extracted: str, gold: str, choices: list[str]) -> bool:
    if normalize(extracted) == normalize(gold):
        return True
    g = _knowledge_polarities(gold)
    if len(g) != 1:
        return False
    return _knowledge_polarities(extracted) == g


# -- short names -------------------------------------------------------------------------------

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


def _is_short(extracted: str, gold: str, choices: list[str]) -> bool:
    gold = _clean(gold)  # the same presentation is removed from both: `\text{parabola}`
    n, g = normalize(_clean(extracted)), normalize(gold)
    if not n or not g:
        return False
    if n == g:
        return True
    segments = [normalize(seg) for seg in _LIST_SPLIT.split(_clean(extracted))]
    # "box or basket", "box, basket": a list, unless the gold itself is written with the separator
    content = [s for s in segments if s and not set(s.split()) <= _FILLER]
    if len(content) > 1 and not _LIST_SPLIT.search(gold):
        return False
    if not _contains_phrase(n, g):
        return False
    if choices:
        letters = _LETTERS[: len(choices)]
        norm_options = [normalize(_clean(c)) for c in choices]
        mentioned = _mentioned_options(n, norm_options, letters)
        gold_letters = {letters[i] for i, o in enumerate(norm_options) if o == g}
        if mentioned - gold_letters:
            return False
        if gold_letters:
            return True
    rest = f" {n} ".replace(f" {g} ", " ", 1).split()
    return all(t in _FILLER for t in rest)


# -- numbers and math --------------------------------------------------------------------------
#
# The rules are in the module docstring. LaTeX is rewritten into a small plain syntax and read by
# a recursive-descent parser (no eval) into exact Fractions, or sympy expressions once roots, pi,
# i, e or variables appear. Work is bounded by caps on length, tokens, nesting, exponents,
# function arguments and integer size rather than by timeouts: a timeout would make the verdict
# depend on how loaded the machine is.

MAX_MATH_CHARS = 400  # longer answers are never parsed as math
MAX_MATH_TOKENS = 160
MAX_NESTING = 24  # brackets and LaTeX groups
MAX_EXPONENT = 64  # |n| of a fractional or irrational power x^n (and |x| in e^x)
MAX_INTEGER_EXPONENT = 1000  # |n| of x^n for an irrational or symbolic x
MAX_FUNCTION_ARGUMENT = 1e6  # |x| in sin x, ln x, ...
MAX_INT_BITS = 4096  # exact numbers beyond 2^4096 (1,234 digits) are never formed
MAX_ROOT_BITS = 256  # roots of larger integers are not taken (sympy factors the radicand)
MAX_SYMBOLS = 6
MAX_ITEMS = 16  # elements of a tuple, of a union, or of a list of solutions
MAX_PLUS_MINUS = 8

_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?(?![\w])")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$")
_SIMPLE_FRACTION = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*/\s*([+-]?\d+(?:\.\d+)?)$")
_UNICODE_MATH = str.maketrans({
    "−": "-", "–": "-", "—": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "π": " pi ", "∞": " oo ",
    "⩽": "≤", "⩾": "≥", "，": ",", "；": ";", "（": "(", "）": ")", "²": "^2", "³": "^3",
})
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z]\s*=(?![=<>])")  # "x = 5": the gold is the value 5
# "42 apples", "10 \text{ inches}", "18 cm^2": a number followed by unit words
_WITH_UNITS = re.compile(r"(.*?[\d)])\s*((?:[A-Za-z]{2,}(?:\^\{?\d\}?)?\.?\s*)+)")
_MATH_MARK = re.compile(r"[-+*/^=<>±∓√\\{}_|≤≥≠∈∪]")  # math around a number: not a lone value
_LIST_MARK = re.compile(r"[,;\n]|\b(?:or|and)\b", re.I)
_DOLLAR_MATH = re.compile(r"\$+([^$]+)\$+")
_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")  # "Sally-Anne", "forty-two": prose


class _NotMath(Exception):
    """Internal: text this parser does not read as mathematics."""


def _prep(text: str) -> str:
    """Presentation removed, unicode operators mapped, thin spaces, degrees, `\\left` and a
    trailing full stop or percent sign dropped."""
    s = _clean(text).translate(_UNICODE_MATH)
    s = s.replace("\\!", "").replace("\\,", "").replace("{,}", "").replace("\\%", "%")
    s = _DEGREES.sub("", s)
    return s.strip().rstrip(".").rstrip("%").strip()


# LaTeX -> plain syntax: digits, letters, + - * / ^ ( ) [ ] , relations = < > ≤ ≥ ≠ ∈, union ∪,
# ± ∓, set braces ⦃ ⦄ and √.
_TEX_COMMAND = re.compile(r"\\([A-Za-z]+|.)", re.S)
_TEX_IGNORED = frozenset(
    "left right big Big bigl bigr Bigl Bigr bigg Bigg biggl biggr Biggl Biggr middle "
    "displaystyle textstyle scriptstyle limits nolimits".split()
)
_TEX_WRAPPERS = frozenset(
    "text textrm textbf textit textnormal textup mathrm mathbf mathit mathsf mathnormal "
    "boldsymbol mbox operatorname emph boxed fbox".split()
)
_TEX_SYMBOLS = {
    "pi": " pi ", "infty": " oo ", "cdot": "*", "times": "*", "ast": "*", "div": "/",
    "pm": "±", "mp": "∓", "le": "≤", "leq": "≤", "leqslant": "≤", "ge": "≥", "geq": "≥",
    "geqslant": "≥", "ne": "≠", "neq": "≠", "lt": "<", "gt": ">", "in": "∈", "cup": "∪",
    "{": "⦃", "}": "⦄", "lbrace": "⦃", "rbrace": "⦄", "circ": "", "%": "%", "$": "",
    ",": "", "!": "", ";": " ", ":": " ", " ": " ", "quad": " ", "qquad": " ",
    "(": " ", ")": " ", "[": " ", "]": " ",
}
_FUNCTION_NAMES = frozenset(
    "sqrt sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh ln log exp".split()
)
_CONSTANT_NAMES = frozenset({"pi", "oo", "infty", "infinity", "inf"})
# short words that are not products of variables ("x=1 or x=2" is not x=1*o*r*x=2)
_WORDS = frozenset(
    "an and any are as at be but by can do for has if in is it its no nor not of on or so the "
    "to was we yes".split()
)


def _tex(s: str, depth: int = 0) -> str:
    if depth > MAX_NESTING:
        raise _NotMath
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            m = _TEX_COMMAND.match(s, i)
            if not m:
                raise _NotMath
            name, i = m.group(1), m.end()
            if name in _TEX_IGNORED:
                j = _skip_spaces(s, i)
                if name in ("left", "right") and s[j : j + 1] == ".":  # invisible delimiter
                    i = j + 1
            elif name in ("frac", "dfrac", "tfrac", "cfrac"):
                num, i = _tex_arg(s, i)
                den, i = _tex_arg(s, i)
                out.append(f"(({_tex(num, depth + 1)})/({_tex(den, depth + 1)}))")
            elif name == "sqrt":
                j = _skip_spaces(s, i)
                index = None
                if s[j : j + 1] == "[":
                    k = s.find("]", j)
                    if k < 0:
                        raise _NotMath
                    index, i = s[j + 1 : k], k + 1
                body, i = _tex_arg(s, i)
                body = _tex(body, depth + 1)
                out.append(f" sqrt({body})" if index is None
                           else f"(({body})^(1/({_tex(index, depth + 1)})))")
            elif name in _TEX_WRAPPERS:
                body, i = _tex_arg(s, i)
                out.append(f" {_tex(body, depth + 1)} ")
            elif name in _FUNCTION_NAMES:
                out.append(f" {name} ")
            elif name in _TEX_SYMBOLS:
                out.append(_TEX_SYMBOLS[name])
            else:
                raise _NotMath
        elif c == "{":
            j = _closing_brace(s, i)
            out.append(f"({_tex(s[i + 1 : j], depth + 1)})")
            i = j + 1
        elif c == "}":
            raise _NotMath
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_spaces(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def _closing_brace(s: str, i: int) -> int:
    """Index of the `}` closing the `{` at `i` (escaped braces are not grouping)."""
    depth, k = 0, i
    while k < len(s):
        c = s[k]
        if c == "\\":
            k += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return k
        k += 1
    raise _NotMath


def _tex_arg(s: str, i: int) -> tuple[str, int]:
    """One argument of a LaTeX command: a `{group}`, a command such as `\\pi`, or one character
    (`\\frac12`, `\\sqrt3`)."""
    i = _skip_spaces(s, i)
    if i >= len(s):
        raise _NotMath
    if s[i] == "{":
        j = _closing_brace(s, i)
        return s[i + 1 : j], j + 1
    if s[i] == "\\":
        m = _TEX_COMMAND.match(s, i)
        return m.group(0), m.end()
    if s[i] in "}^_":
        raise _NotMath
    return s[i], i + 1


_MATH_TOKEN = re.compile(
    r"\s*(?:(\d+(?:\.\d+)?|\.\d+)|([A-Za-z]+)|(\*\*|<=|>=|!=|[-+*/^()\[\],=<>≤≥≠∈∪±∓⦃⦄√]))"
)
_OP_ALIASES = {"**": "^", "<=": "≤", ">=": "≥", "!=": "≠"}


def _tokens(plain: str) -> list[tuple[str, str]]:
    """("num", "12.5") / ("name", "x") / ("op", "+") tokens; anything else is not math."""
    out: list[tuple[str, str]] = []
    pos, n = 0, len(plain.rstrip())
    while pos < n:
        m = _MATH_TOKEN.match(plain, pos)
        if not m or len(out) >= MAX_MATH_TOKENS:
            raise _NotMath
        pos = m.end()
        if m.group(1):
            out.append(("num", m.group(1)))
        elif m.group(2):
            out.append(("name", m.group(2)))
        else:
            out.append(("op", _OP_ALIASES.get(m.group(3), m.group(3))))
    return out


def _plain(text: str) -> str:
    """The LaTeX of a prepared answer in plain syntax; _NotMath if it is not math we read."""
    if len(text) > MAX_MATH_CHARS or "\n" in text.strip():  # several lines: several answers
        raise _NotMath
    return _tex(text)


# -- values: exact Fractions while the arithmetic is rational, sympy beyond


_sympy_module = None


def _sp():
    # imported on first use: sympy takes a while to import and most answers never need it
    global _sympy_module
    if _sympy_module is None:
        import sympy

        _sympy_module = sympy
    return _sympy_module


def _sym(v):
    return _sp().Rational(v.numerator, v.denominator) if type(v) is Fraction else v


def _bounded(f: Fraction) -> Fraction:
    if f.numerator.bit_length() > MAX_INT_BITS or f.denominator.bit_length() > MAX_INT_BITS:
        raise _NotMath
    return f


def _add(a, b):
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a + b)
    return _sym(a) + _sym(b)


def _mul(a, b):
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a * b)
    return _sized(_sym(a) * _sym(b))


def _div(a, b):
    if type(b) is Fraction and b == 0:
        raise _NotMath
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a / b)
    denominator = _sym(b)
    if denominator.is_zero:
        raise _NotMath
    return _sym(a) / denominator


def _pow(base, exponent):
    if type(base) is Fraction and type(exponent) is Fraction and exponent.denominator == 1:
        n = exponent.numerator
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if (base == 0 and n < 0) or (bits > 1 and (bits - 1) * abs(n) > MAX_INT_BITS):
            raise _NotMath  # 9^{9^9} is never formed
        return _bounded(base**n)
    if type(exponent) is Fraction:
        limit = MAX_INTEGER_EXPONENT if exponent.denominator == 1 else MAX_EXPONENT
        if abs(exponent) > limit or exponent.denominator > MAX_EXPONENT:
            raise _NotMath
    elif exponent.free_symbols:
        if _explosive(exponent) or (not isinstance(base, Fraction) and _explosive(base)):
            raise _NotMath  # x^{x^x}, e^{e^x}: numbers too large to evaluate at sample points
    elif not _magnitude(exponent) <= MAX_EXPONENT:
        raise _NotMath
    if type(base) is Fraction and max(base.numerator.bit_length(),
                                      base.denominator.bit_length()) > MAX_ROOT_BITS:
        raise _NotMath
    return _sized(_sym(base) ** _sym(exponent))


def _magnitude(value) -> float:
    return abs(float(value)) if type(value) is Fraction else abs(complex(value.evalf(15)))


def _explosive(value) -> bool:
    """Whether a sympy value grows exponentially in its variables (`e^x`, `2^x`, `\\cosh x`)."""
    sp = _sp()
    return any(f.args[0].free_symbols for f in value.atoms(sp.exp, sp.sinh, sp.cosh)) or any(
        p.exp.free_symbols for p in value.atoms(sp.Pow)
    )


def _sized(value):
    """A sympy result, unless sympy formed an integer beyond MAX_INT_BITS ((10^{1000} x)^{64})."""
    sp = _sp()
    for r in value.atoms(sp.Rational):
        if max(abs(r.p).bit_length(), r.q.bit_length()) > MAX_INT_BITS:
            raise _NotMath
    return value


_GROWING_FUNCTIONS = frozenset({"exp", "sinh", "cosh"})


def _function(name: str, arg):
    if name == "sqrt":
        return _pow(arg, Fraction(1, 2))
    # a function of a huge number, or of something exponential in a variable, could take
    # mpmath unbounded time to evaluate (sin(e^{x^{64}}) needs pi to 10^24 bits)
    if type(arg) is Fraction or not arg.free_symbols:
        if not _magnitude(arg) <= (MAX_EXPONENT if name in _GROWING_FUNCTIONS else MAX_FUNCTION_ARGUMENT):
            raise _NotMath
    elif _explosive(arg):
        raise _NotMath
    sp = _sp()
    fn = {
        "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "cot": sp.cot, "sec": sp.sec, "csc": sp.csc,
        "arcsin": sp.asin, "arccos": sp.acos, "arctan": sp.atan, "sinh": sp.sinh,
        "cosh": sp.cosh, "tanh": sp.tanh, "ln": sp.log, "log": sp.log, "exp": sp.exp,
    }[name]
    return _sized(fn(_sym(arg)))


def _letters(name: str):
    """`x` -> x, `xy` -> x*y; `i` is the imaginary unit and `e` Euler's number. Longer runs and
    short English words are text, not products of variables."""
    if len(name) > 3 or name.lower() in _WORDS:
        raise _NotMath
    sp = _sp()
    value = Fraction(1)
    for ch in name:
        value = _mul(value, sp.I if ch == "i" else sp.E if ch == "e" else sp.Symbol(ch))
    return value


class _ExpressionParser:
    """sum := product (+|- product)*;  product := signed ((*|/) signed | implicit power)*;
    signed := (+|-) signed | power;  power := atom (^ signed)?;  atom := number | name |
    function atom | ( sum ) | [ sum ] | √ atom. `2x`, `2(x+1)` and `x\\sqrt{2}` multiply;
    a number after another term (`2 3`, `x2`) is not math."""

    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens, self.i, self.depth = tokens, 0, 0

    def peek(self) -> tuple[str | None, str | None]:
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def parse(self):
        value = self.sum()
        if self.i != len(self.tokens):
            raise _NotMath
        return value

    def sum(self):
        value = self.product()
        while True:
            kind, op = self.peek()
            if kind != "op" or op not in ("+", "-"):
                return value
            self.i += 1
            term = self.product()
            value = _add(value, term if op == "+" else _mul(Fraction(-1), term))

    def product(self):
        value = self.signed()
        while True:
            kind, op = self.peek()
            if kind == "op" and op in ("*", "/"):
                self.i += 1
                factor = self.signed()
                value = _mul(value, factor) if op == "*" else _div(value, factor)
            elif kind == "name" or (kind == "op" and op in ("(", "[", "√")):
                value = _mul(value, self.power())
            else:
                return value

    def signed(self):
        kind, op = self.peek()
        if kind == "op" and op in ("+", "-"):
            self.i += 1
            value = self.signed()
            return value if op == "+" else _mul(Fraction(-1), value)
        return self.power()

    def power(self):
        base = self.atom()
        if self.peek() == ("op", "^"):
            self.i += 1
            return _pow(base, self.signed())
        return base

    def atom(self):
        kind, text = self.peek()
        self.i += 1
        if kind == "num":
            return Fraction(text)
        if kind == "op" and text in ("(", "["):
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise _NotMath
            value = self.sum()
            if self.peek() != ("op", ")" if text == "(" else "]"):
                raise _NotMath
            self.i += 1
            self.depth -= 1
            return value
        if kind == "op" and text == "√":
            return _function("sqrt", self.atom())
        if kind == "name":
            if text in _FUNCTION_NAMES:
                nk, nt = self.peek()
                return _function(text, self.atom() if nk == "op" and nt in ("(", "[") else self.power())
            if text in _CONSTANT_NAMES:
                return _sp().pi if text == "pi" else _sp().oo
            return _letters(text)
        raise _NotMath


def _expression(tokens: list[tuple[str, str]]):
    """Fraction or sympy value of an expression; _NotMath if it is not one we read."""
    if not tokens:
        raise _NotMath
    value = _ExpressionParser(tokens).parse()
    if type(value) is not Fraction:
        sp = _sp()
        if value.has(sp.zoo, sp.nan) or len(value.free_symbols) > MAX_SYMBOLS:
            raise _NotMath
    return value


# -- structures: ("expr", value) | ("rel", ops, operands) | ("seq", brackets, items)
#    | ("list", items) (unordered: solutions, sets, ±) | ("union", items) (unordered)

_RELATIONS = frozenset("=≤≥<>≠∈")
_FLIPPED = {"=": "=", "≠": "≠", "<": ">", ">": "<", "≤": "≥", "≥": "≤"}
_OPENERS, _CLOSERS = frozenset("([⦃"), frozenset(")]⦄")


def _split_top(tokens, separators) -> tuple[list[list], list[str]]:
    """Tokens split at separators outside brackets, and the separators met."""
    parts: list[list] = [[]]
    found: list[str] = []
    depth = 0
    for tok in tokens:
        kind, text = tok
        if kind == "op":
            if text in _OPENERS:
                depth += 1
            elif text in _CLOSERS:
                depth -= 1
                if depth < 0:
                    raise _NotMath
            elif depth == 0 and text in separators:
                parts.append([])
                found.append(text)
                continue
        parts[-1].append(tok)
    if depth:
        raise _NotMath
    return parts, found


def _bracketed(tokens) -> tuple[str, list] | None:
    """(`"[)"`, inner tokens) when one bracket pair encloses all the tokens."""
    if len(tokens) < 2 or tokens[0][0] != "op" or tokens[-1][0] != "op":
        return None
    opener, closer = tokens[0][1], tokens[-1][1]
    if opener not in _OPENERS or closer not in _CLOSERS or (opener == "⦃") != (closer == "⦄"):
        return None
    depth = 0
    for k, (kind, text) in enumerate(tokens):
        if kind == "op" and text in _OPENERS:
            depth += 1
        elif kind == "op" and text in _CLOSERS:
            depth -= 1
            if depth == 0 and k != len(tokens) - 1:
                return None
    return opener + closer, tokens[1:-1]


def _unordered(items: list) -> tuple:
    flat: list = []
    for item in items:
        flat.extend(item[1] if item[0] == "list" else [item])
    if len(flat) > MAX_ITEMS:
        raise _NotMath
    return flat[0] if len(flat) == 1 else ("list", tuple(flat))


def _structure(tokens, depth: int = 0) -> tuple:
    if not tokens or depth > MAX_NESTING:
        raise _NotMath
    parts, _ = _split_top(tokens, {","})
    if len(parts) > 1:  # "1, -2": a list of solutions
        return _unordered([_structure(p, depth + 1) for p in parts])
    parts, _ = _split_top(tokens, {"∪"})
    if len(parts) > 1:
        if len(parts) > MAX_ITEMS:
            raise _NotMath
        return ("union", tuple(_structure(p, depth + 1) for p in parts))
    signs = [k for k, tok in enumerate(tokens) if tok in (("op", "±"), ("op", "∓"))]
    if signs:  # y = ±√3 x is the two equations y = √3 x and y = -√3 x (all ± signs agree)
        if len(signs) > MAX_PLUS_MINUS:
            raise _NotMath
        variants = []
        for sign, other in (("+", "-"), ("-", "+")):
            toks = list(tokens)
            for k in signs:
                toks[k] = ("op", sign if tokens[k][1] == "±" else other)
            variants.append(_structure(toks, depth + 1))
        return _unordered(variants)
    parts, ops = _split_top(tokens, _RELATIONS)
    if len(parts) > 1:
        return ("rel", tuple(ops), tuple(_structure(p, depth + 1) for p in parts))
    group = _bracketed(tokens)
    if group is not None:
        brackets, inner = group
        if brackets == "⦃⦄":
            if not inner:
                return ("list", ())
            items, _ = _split_top(inner, {","})
            return _unordered([_structure(p, depth + 1) for p in items])
        items, _ = _split_top(inner, {","})
        if len(items) > 1:  # a tuple or an interval: ordered, brackets matter
            if len(items) > MAX_ITEMS:
                raise _NotMath
            return ("seq", brackets, tuple(_structure(p, depth + 1) for p in items))
    return ("expr", _expression(tokens))


def _math_of(text: str) -> tuple | None:
    """The structure of an answer or gold, or None when it is not math this parser reads."""
    try:
        s = _prep(text)
        return _structure(_tokens(_plain(s))) if s else None
    except _NotMath:
        return None
    except Exception:  # sympy raises many types on values it cannot handle: not math we read
        return None


@functools.lru_cache(maxsize=4096)
def _gold_math(gold: str) -> tuple | None:
    return _math_of(gold)


# -- equivalence

# Points at which expressions in variables are compared: distinct irrational-looking values per
# variable, so two different expressions agreeing at all three points would take a contrivance.
_SAMPLE_POINTS = (
    ("0.5772156649", "1.3247179572", "0.4142135624", "1.7320508076", "0.6931471806", "2.2360679775"),
    ("1.6180339887", "0.3183098862", "2.7182818285", "0.8862269255", "1.2599210499", "0.5403023059"),
    ("2.4142135624", "0.7071067812", "1.4426950409", "0.3678794412", "1.9021130326", "0.9189385332"),
)
_RELATIVE_TOLERANCE = 1e-10


def _same_value(a, b) -> bool:
    if type(a) is Fraction and type(b) is Fraction:
        return a == b
    sp = _sp()
    x, y = _sym(a), _sym(b)
    if x == y:
        return True
    if x.free_symbols != y.free_symbols or x.has(sp.oo, -sp.oo) or y.has(sp.oo, -sp.oo):
        return False  # infinities are equal only when they are the same infinity
    difference = x - y
    if difference == 0:
        return True
    symbols = sorted(x.free_symbols, key=str)
    for row in _SAMPLE_POINTS:
        point = {s: sp.Float(v, 30) for s, v in zip(symbols, row)}
        d = complex(difference.evalf(30, subs=point))
        scale = complex(x.evalf(30, subs=point))
        if not (cmath.isfinite(d) and cmath.isfinite(scale)):
            return False
        if abs(d) > _RELATIVE_TOLERANCE * max(1.0, abs(scale)):
            return False
    return True


def _bound_value(rel: tuple) -> tuple | None:
    """`R` from `x = R` or `x ∈ R` with a lone variable on the left."""
    _, ops, operands = rel
    if len(ops) != 1 or ops[0] not in ("=", "∈"):
        return None
    lhs, rhs = operands
    if lhs[0] == "expr" and type(lhs[1]) is not Fraction and lhs[1].is_Symbol:
        return rhs
    return None


def _same_math(a: tuple, g: tuple) -> bool:
    if a[0] == g[0] == "expr":
        return _same_value(a[1], g[1])
    if a[0] == g[0] == "seq":
        return a[1] == g[1] and len(a[2]) == len(g[2]) and all(map(_same_math, a[2], g[2]))
    if a[0] == g[0] and a[0] in ("list", "union"):
        return _matched(a[1], g[1])
    if a[0] == g[0] == "rel":
        if a[1] == g[1] and all(map(_same_math, a[2], g[2])):
            return True
        flipped = tuple(_FLIPPED.get(op, "") for op in reversed(g[1]))
        return a[1] == flipped and all(map(_same_math, a[2], reversed(g[2])))
    # "x = 5" against "5", "x ∈ [0, 1]" against "[0, 1]"
    if a[0] == "rel" and g[0] != "rel":
        value = _bound_value(a)
        return value is not None and _same_math(value, g)
    if g[0] == "rel" and a[0] != "rel":
        value = _bound_value(g)
        return value is not None and _same_math(a, value)
    return False


def _matched(answers: tuple, golds: tuple) -> bool:
    """Whether the items pair off one to one (order free)."""
    if len(answers) != len(golds):
        return False
    unused = list(answers)
    for g in golds:
        k = next((k for k, a in enumerate(unused) if _same_math(a, g)), None)
        if k is None:
            return False
        unused.pop(k)
    return True


# -- single numbers


def _real_number(value) -> Fraction | float | None:
    if type(value) is Fraction:
        return value
    sp = _sp()
    if value.free_symbols or value.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
        return None
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    c = complex(value.evalf(30))
    if not cmath.isfinite(c) or abs(c.imag) > 1e-12 * max(1.0, abs(c)):
        return None  # 1-5i is not a real number
    return c.real


def _parse_number(s: str) -> Fraction | float | None:
    """The real number a prepared text is, as a whole (`1,000`, `3/4`, `\\frac{\\pi}{2}`)."""
    s = s.strip()
    if not s:
        return None
    if _PLAIN_NUMBER.match(s) and any(c.isdigit() for c in s):
        return Fraction(s.replace(",", ""))
    m = _SIMPLE_FRACTION.match(s)
    if m:
        den = Fraction(m.group(2))
        return Fraction(m.group(1)) / den if den else None
    try:
        return _real_number(_expression(_tokens(_plain(s))))
    except _NotMath:
        return None
    except Exception:  # sympy raises many types on values it cannot handle
        return None


def _with_units(s: str) -> Fraction | float | None:
    m = _WITH_UNITS.fullmatch(s)
    if not m or set(re.findall(r"[A-Za-z]+", m.group(2))) & (_FUNCTION_NAMES | _CONSTANT_NAMES):
        return None
    return _parse_number(m.group(1))


@functools.lru_cache(maxsize=4096)
def _gold_number(gold: str) -> Fraction | float | None:
    """The value of a gold that is exactly one real number (`x = 5` and `10 cm` included)."""
    s = gold.strip()
    if _PLAIN_NUMBER.match(s) and any(c.isdigit() for c in s):
        return Fraction(s.replace(",", ""))
    s = _ASSIGNMENT.sub("", _prep(gold), count=1)
    value = _parse_number(s)
    return value if value is not None else _with_units(s)


def _number_of(text: str) -> Fraction | float | None:
    """The single real number an answer states, or None (none, several, or not a real number).
    The answer may be the number (`\\frac{1}{2}`, `x = 42`, `42 apples`) or a short sentence
    whose only number it is and that has no other mathematics in it (`It is 42.`)."""
    s = text.strip()
    if _PLAIN_NUMBER.match(s) and any(c.isdigit() for c in s):
        return Fraction(s.replace(",", ""))
    boxes = _boxed_contents(s)
    if len({b.strip() for b in boxes}) > 1:
        return None  # \boxed{1} ... \boxed{2}: two answers
    if boxes:
        s = boxes[0]
    elif "$" in s and len(s) <= MAX_MATH_CHARS:
        segments = _DOLLAR_MATH.findall(s)
        outside = _DOLLAR_MATH.sub(" ", s)
        if segments and not re.search(r"\d", outside):  # "It is $\frac{1}{2}$ of the cake."
            values = {_number_of(seg) for seg in segments[:8]}
            return values.pop() if len(values) == 1 else None
    s = _prep(s)
    value = _parse_number(s)
    if value is not None:
        return value
    if "=" in s:  # "x = 42", "2 + 2 = 4": the value after the last "=", if it is one value
        head, s = s.rsplit("=", 1)
        if _LIST_MARK.search(head):
            return None  # "x = 2, y = 3"
        s = s.strip()
        value = _parse_number(s)
        if value is not None:
            return value
    value = _with_units(s)
    if value is not None:
        return value
    s = s[-MAX_ANSWER_CHARS:]
    found = {_parse_number(tok) for tok in _NUMBER_TOKEN.findall(s)}
    found.discard(None)
    prose = _HYPHEN.sub(" ", _NUMBER_TOKEN.sub(" ", s))
    if len(found) != 1 or _MATH_MARK.search(prose):
        return None  # "42 or 43", "1-5i", "±2": not one lone number
    return found.pop()


def _boxed_contents(text: str) -> list[str]:
    """Contents of every `\\boxed{...}` / `\\fbox{...}` (balanced braces), at most 9."""
    out: list[str] = []
    pos = 0
    while len(out) < 9:
        starts = [k for k in (text.find("\\boxed{", pos), text.find("\\fbox{", pos)) if k >= 0]
        if not starts:
            break
        i = min(starts)
        j = text.index("{", i)
        try:
            k = _closing_brace(text, j)
        except _NotMath:
            break
        out.append(text[j + 1 : k])
        pos = k + 1
    return out


def _same_number(a: Fraction | float, b: Fraction | float) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


# -- the rule


def _blanks(text: str) -> list[str]:
    """`a; b` -> [`a`, `b`]: blanks split at `;` outside brackets and braces."""
    parts, depth, start = [], 0, 0
    s = text.replace("；", ";")
    for k, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ";" and depth == 0:
            parts.append(s[start:k])
            start = k + 1
    parts.append(s[start:])
    parts = [p.strip() for p in parts]
    if len(parts) > 1 and not parts[-1]:
        parts.pop()  # "a; b;"
    return parts


_TEXT_GOLD = re.compile(r"[^\W\d_]{2}")


def _same_answer(answer: str, gold: str, choices: list[str]) -> bool:
    g = _gold_number(gold)
    if g is not None:
        v = _number_of(answer)
        return v is not None and _same_number(v, g)
    structure = _gold_math(gold)
    if structure is not None:
        a = _math_of(answer)
        try:
            return a is not None and _same_math(a, structure)
        except Exception:  # sympy raises many types on values it cannot compare: not equal
            return False
    cleaned = _HYPHEN.sub(" ", _clean(gold))
    if _TEXT_GOLD.search(cleaned) and not _MATH_MARK.search(cleaned):
        return _is_short(answer, gold, choices)  # a word answer: "parabola"
    return _squashed_math(answer) == _squashed_math(gold)


def _squashed_math(text: str) -> str:
    s = _prep(text)
    try:
        s = _plain(s)
    except _NotMath:
        pass
    return "".join(s.split())


def _is_number(extracted: str, gold: str, choices: list[str]) -> bool:
    golds = _blanks(gold)
    if len(golds) == 1:
        return _same_answer(extracted, gold, choices)
    answers = _blanks(extracted)  # several blanks: the same number of answers, in order
    return len(answers) == len(golds) and all(
        _same_answer(a, g, choices) for a, g in zip(answers, golds)
    )


_RULES = {
    "choice": _is_choice,
    "yes_no": _is_yes_no,
    "short": _is_short,
    "knowledge": _is_knowledge,
    "number": _is_number,
}


# --------------------------------------------------------------------------------------------
# Verdicts and rewards


def score(completion: str, gold: str, answer_type: str, choices: Sequence[str] = ()) -> Verdict:
    """The evaluation verdict of a completion: format, extracted answer (with fallback) and
    correctness."""
    extracted = extract_answer(completion, fallback=True,
                               choices=choices if answer_type == "choice" else None)
    return Verdict(
        format_ok=check_format(completion),
        extracted=extracted,
        correct=is_correct(extracted, gold, answer_type, choices),
    )


def format_reward(completion: str) -> float:
    """ToM-Synth eq. 4: 0 for a well-formed completion, -1 otherwise."""
    return 0.0 if check_format(completion) else -1.0


def outcome_reward(
    completion: str, gold: str, answer_type: str, choices: Sequence[str] = ()
) -> float:
    """ToM-Synth eq. 5: 1 when the answer is correct, else 0. Only a well-formed completion can
    earn it (the tagless fallback is for evaluation, never for reward)."""
    if not check_format(completion):
        return 0.0
    extracted = extract_answer(completion, fallback=False)
    return 1.0 if is_correct(extracted, gold, answer_type, choices) else 0.0
