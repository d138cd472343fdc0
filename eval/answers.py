"""The one answer parser: evaluation scores and RL rewards both come from here.

A completion is expected to be exactly one `<think>...</think>` block followed by exactly one
`<answer>...</answer>` block (DESIGN.md; ToM-Synth eq. 3-5). Reasoning is never scored: only the
answer is compared with the gold under the row's `answer_type`.

Extraction (`extract_answer`):
1. Everything up to the last `</think>` is reasoning and ignored.
2. `<answer>...</answer>` blocks after it are the answer. Several blocks with different contents
   are returned joined by newlines, so the comparison sees several answers and marks them wrong.
3. Fallback, only when no answer block exists and `fallback=True` (evaluation of models that do
   not use the tags; never used for RL outcome credit because that requires the format): within
   the last `FALLBACK_WINDOW` characters after the last `</think>`, the text of the last
   "answer: X" / "the answer is X" line, else the last `\\boxed{X}`, else an unclosed trailing
   `<answer>X`, else the whole remaining reply when it is at most `SHORT_REPLY_CHARS` long.
   A reply whose `<think>` is never closed has no answer.

Comparison (`is_correct`), by answer type:
- `choice`: the gold is a letter among `choices`. `B`, `(B)`, `B.`, `B) text`, `Option B`,
  `the answer is B` or the exact option text name B. An answer naming two or more different
  letters or options is wrong.
- `yes_no`: yes or no (`Yes.`, `No, she does not`); an answer saying both is wrong.
- `short`: a name (room, container, person). Correct when the normalised answer is the gold, or
  when it contains the gold in a short phrase ("in the basket") that is not a list and names no
  other candidate from `choices` (or, without choices, adds only function words).
- `knowledge`: `knows about it` / `does not know about it`; the negation must match.
- `number`: mathematical equivalence (`42`, `42.0`, `\\boxed{42}`, `$42$`, `1/2` = `0.5`,
  `\\frac{1}{2}`, `2\\sqrt{2}` = `\\sqrt{8}`); an answer with several different numbers is wrong.

Every public function is total on strings (it never raises on model output, however large) and
deterministic.
"""
from __future__ import annotations

import ast
import math
import operator
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

__all__ = [
    "Verdict",
    "check_format",
    "extract_answer",
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
MAX_SYMPY_CHARS = 80  # expressions longer than this are not handed to sympy

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


def extract_answer(completion: str, *, fallback: bool = True) -> str | None:
    """The answer text of a completion (see the module docstring for the rules), or None."""
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
            key = normalize(b[:MAX_ANSWER_CHARS + 1])
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
    return None


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


# -- numbers -----------------------------------------------------------------------------------

_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?(?![\w])")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?$")
_SIMPLE_FRACTION = re.compile(r"^([+-]?\d+(?:\.\d+)?)\s*/\s*([+-]?\d+(?:\.\d+)?)$")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_LATEX_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SAFE_EXPR = re.compile(r"^[0-9+\-*/().\s]*(?:(?:sqrt|pi)[0-9+\-*/().\s]*)*$")


def _number_of(text: str) -> Fraction | float | None:
    """The single number an answer states, or None (no number, or several different ones)."""
    boxed = _last_boxed(text)
    s = _clean(boxed if boxed is not None else text)
    s = s.replace("−", "-").replace("\\!", "").replace("\\,", "").replace("\\%", "%")
    s = s.replace("\\left", "").replace("\\right", "").replace("^\\circ", "").replace("°", "")
    if "=" in s:
        s = s.rsplit("=", 1)[1]
    s = s.strip().rstrip(".").rstrip("%").strip()
    value = _parse_number(s)
    if value is not None:
        return value
    found = {_parse_number(tok) for tok in _NUMBER_TOKEN.findall(s[-MAX_ANSWER_CHARS:])}
    found.discard(None)
    values = list(found)
    if len(values) == 1:
        return values[0]
    return None


def _parse_number(s: str) -> Fraction | float | None:
    s = s.strip()
    if not s or len(s) > MAX_SYMPY_CHARS * 4:
        return None
    if _PLAIN_NUMBER.match(s) and any(c.isdigit() for c in s):
        return Fraction(s.replace(",", ""))
    m = _SIMPLE_FRACTION.match(s)
    if m:
        den = Fraction(m.group(2))
        return Fraction(m.group(1)) / den if den else None
    return _parse_expression(s)


def _parse_expression(s: str) -> Fraction | float | None:
    """Small LaTeX or plain arithmetic (`\\frac{1}{2}`, `2\\sqrt{2}`, `3^2`, `\\pi/2`) through
    sympy, only when it is short and made of numbers, operators, sqrt and pi."""
    expr = s
    for _ in range(4):
        expr2 = _LATEX_FRAC.sub(r"((\1)/(\2))", expr)
        expr2 = _LATEX_SQRT.sub(r"sqrt(\1)", expr2)
        if expr2 == expr:
            break
        expr = expr2
    expr = (
        expr.replace("\\cdot", "*").replace("\\times", "*").replace("\\pi", "pi")
        .replace("^", "**").replace("{", "(").replace("}", ")")
    )
    if len(expr) > MAX_SYMPY_CHARS or not any(c.isdigit() for c in expr) or "\\" in expr:
        return None
    if not _SAFE_EXPR.match(expr):
        return None
    # no huge powers: 9**9**9 would never finish
    for m in re.finditer(r"\*\*\s*\(?\s*([^()\s*]+)", expr):
        try:
            if abs(float(m.group(1))) > 64:
                return None
        except ValueError:
            return None
    if expr.count("**") > 2:
        return None
    if "sqrt" not in expr and "pi" not in expr and "**" not in expr:
        return _rational(expr)  # plain arithmetic: exact, and far cheaper than sympy
    # imported here: sympy takes a while to import and most answers never need it
    from sympy.parsing.sympy_parser import (
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    try:
        value = parse_expr(
            expr,
            local_dict={},
            transformations=standard_transformations + (implicit_multiplication_application,),
            evaluate=True,
        )
    except Exception:  # sympy raises many types on malformed input
        return None
    if not getattr(value, "is_number", False):
        return None
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    try:
        f = float(value.evalf(30))
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
               ast.Div: operator.truediv}


def _rational(expr: str) -> Fraction | None:
    """Exact value of + - * / arithmetic on decimal numbers, or None."""
    try:
        tree = ast.parse(expr.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None

    def value(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return Fraction(str(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            v = value(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
            return _ARITHMETIC[type(node.op)](value(node.left), value(node.right))
        raise ValueError("not plain arithmetic")

    try:
        return value(tree)
    except (ValueError, ZeroDivisionError, RecursionError):
        return None


def _same_number(a: Fraction | float, b: Fraction | float) -> bool:
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _is_number(extracted: str, gold: str, choices: list[str]) -> bool:
    g = _number_of(gold)
    if g is None:
        return _is_short(extracted, gold, choices)
    v = _number_of(extracted)
    return v is not None and _same_number(v, g)


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
    extracted = extract_answer(completion, fallback=True)
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
