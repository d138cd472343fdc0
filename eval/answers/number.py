"""The `number` rule: blanks split at `;`, a gold that is one real number compared by value
(the answer may be a short sentence whose only number it is), any other gold compared by
structure (eval.answers.structure), a word gold by the `short` rule."""
from __future__ import annotations

import cmath
import functools
import math
import re
from fractions import Fraction

from eval.answers.algebra import lazy_sympy, parse_expression
from eval.answers.latex import (
    CONSTANT_NAMES,
    FUNCTION_NAMES,
    NotMath,
    closing_brace,
    latex_to_plain,
    prepare,
    tokenize,
)
from eval.answers.limits import MAX_ANSWER_CHARS, MAX_MATH_CHARS
from eval.answers.short import is_short
from eval.answers.structure import gold_math, math_of, same_math
from eval.answers.text import clean


_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?(?![\w])")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$")
_SIMPLE_FRACTION = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*/\s*([+-]?\d+(?:\.\d+)?)$")


_ASSIGNMENT = re.compile(r"^\s*[A-Za-z]\s*=(?![=<>])")  # "x = 5": the gold is the value 5
# "42 apples", "10 \text{ inches}", "18 cm^2": a number followed by unit words
_WITH_UNITS = re.compile(r"(.*?[\d)])\s*((?:[A-Za-z]{2,}(?:\^\{?\d\}?)?\.?\s*)+)")
_MATH_MARK = re.compile(r"[-+*/^=<>±∓√\\{}_|≤≥≠∈∪]")  # math around a number: not a lone value
_LIST_MARK = re.compile(r"[,;\n]|\b(?:or|and)\b", re.I)
_DOLLAR_MATH = re.compile(r"\$+([^$]+)\$+")
_HYPHEN = re.compile(r"(?<=[A-Za-z])-(?=[A-Za-z])")  # "Sally-Anne", "forty-two": prose


# -- single numbers


def _real_number(value) -> Fraction | float | None:
    if type(value) is Fraction:
        return value
    sp = lazy_sympy()
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
        return _real_number(parse_expression(tokenize(latex_to_plain(s))))
    except NotMath:
        return None
    except Exception:  # sympy raises many types on values it cannot handle
        return None


def _with_units(s: str) -> Fraction | float | None:
    m = _WITH_UNITS.fullmatch(s)
    if not m or set(re.findall(r"[A-Za-z]+", m.group(2))) & (FUNCTION_NAMES | CONSTANT_NAMES):
        return None
    return _parse_number(m.group(1))


@functools.lru_cache(maxsize=4096)
def _gold_number(gold: str) -> Fraction | float | None:
    """The value of a gold that is exactly one real number (`x = 5` and `10 cm` included)."""
    s = gold.strip()
    if _PLAIN_NUMBER.match(s) and any(c.isdigit() for c in s):
        return Fraction(s.replace(",", ""))
    s = _ASSIGNMENT.sub("", prepare(gold), count=1)
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
    s = prepare(s)
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
            k = closing_brace(text, j)
        except NotMath:
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
    structure = gold_math(gold)
    if structure is not None:
        a = math_of(answer)
        try:
            return a is not None and same_math(a, structure)
        except Exception:  # sympy raises many types on values it cannot compare: not equal
            return False
    cleaned = _HYPHEN.sub(" ", clean(gold))
    if _TEXT_GOLD.search(cleaned) and not _MATH_MARK.search(cleaned):
        return is_short(answer, gold, choices)  # a word answer: "parabola"
    return _squashed_math(answer) == _squashed_math(gold)


def _squashed_math(text: str) -> str:
    s = prepare(text)
    try:
        s = latex_to_plain(s)
    except NotMath:
        pass
    return "".join(s.split())


def is_number(extracted: str, gold: str, choices: list[str]) -> bool:
    golds = _blanks(gold)
    if len(golds) == 1:
        return _same_answer(extracted, gold, choices)
    answers = _blanks(extracted)  # several blanks: the same number of answers, in order
    return len(answers) == len(golds) and all(
        _same_answer(a, g, choices) for a, g in zip(answers, golds)
    )
