"""Math, step 1: an answer's LaTeX rewritten into a small plain syntax and cut into tokens.
`NotMath` is raised for anything this reader does not take as mathematics."""
from __future__ import annotations

import re

from eval.answers.limits import MAX_MATH_CHARS, MAX_MATH_TOKENS, MAX_NESTING
from eval.answers.text import clean


_UNICODE_MATH = str.maketrans({
    "−": "-", "–": "-", "—": "-", "×": "*", "·": "*", "⋅": "*", "÷": "/", "π": " pi ", "∞": " oo ",
    "⩽": "≤", "⩾": "≥", "，": ",", "；": ";", "（": "(", "）": ")", "²": "^2", "³": "^3",
})
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°")


class NotMath(Exception):
    """Internal: text this parser does not read as mathematics."""


def prepare(text: str) -> str:
    """Presentation removed, unicode operators mapped, thin spaces, degrees, `\\left` and a
    trailing full stop or percent sign dropped."""
    s = clean(text).translate(_UNICODE_MATH)
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
FUNCTION_NAMES = frozenset(
    "sqrt sin cos tan cot sec csc arcsin arccos arctan sinh cosh tanh ln log exp".split()
)
CONSTANT_NAMES = frozenset({"pi", "oo", "infty", "infinity", "inf"})


def _tex(s: str, depth: int = 0) -> str:
    if depth > MAX_NESTING:
        raise NotMath
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            m = _TEX_COMMAND.match(s, i)
            if not m:
                raise NotMath
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
                        raise NotMath
                    index, i = s[j + 1 : k], k + 1
                body, i = _tex_arg(s, i)
                body = _tex(body, depth + 1)
                out.append(f" sqrt({body})" if index is None
                           else f"(({body})^(1/({_tex(index, depth + 1)})))")
            elif name in _TEX_WRAPPERS:
                body, i = _tex_arg(s, i)
                out.append(f" {_tex(body, depth + 1)} ")
            elif name in FUNCTION_NAMES:
                out.append(f" {name} ")
            elif name in _TEX_SYMBOLS:
                out.append(_TEX_SYMBOLS[name])
            else:
                raise NotMath
        elif c == "{":
            j = closing_brace(s, i)
            out.append(f"({_tex(s[i + 1 : j], depth + 1)})")
            i = j + 1
        elif c == "}":
            raise NotMath
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_spaces(s: str, i: int) -> int:
    while i < len(s) and s[i].isspace():
        i += 1
    return i


def closing_brace(s: str, i: int) -> int:
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
    raise NotMath


def _tex_arg(s: str, i: int) -> tuple[str, int]:
    """One argument of a LaTeX command: a `{group}`, a command such as `\\pi`, or one character
    (`\\frac12`, `\\sqrt3`)."""
    i = _skip_spaces(s, i)
    if i >= len(s):
        raise NotMath
    if s[i] == "{":
        j = closing_brace(s, i)
        return s[i + 1 : j], j + 1
    if s[i] == "\\":
        m = _TEX_COMMAND.match(s, i)
        return m.group(0), m.end()
    if s[i] in "}^_":
        raise NotMath
    return s[i], i + 1


_MATH_TOKEN = re.compile(
    r"\s*(?:(\d+(?:\.\d+)?|\.\d+)|([A-Za-z]+)|(\*\*|<=|>=|!=|[-+*/^()\[\],=<>≤≥≠∈∪±∓⦃⦄√]))"
)
_OP_ALIASES = {"**": "^", "<=": "≤", ">=": "≥", "!=": "≠"}


def tokenize(plain: str) -> list[tuple[str, str]]:
    """("num", "12.5") / ("name", "x") / ("op", "+") tokens; anything else is not math."""
    out: list[tuple[str, str]] = []
    pos, n = 0, len(plain.rstrip())
    while pos < n:
        m = _MATH_TOKEN.match(plain, pos)
        if not m or len(out) >= MAX_MATH_TOKENS:
            raise NotMath
        pos = m.end()
        if m.group(1):
            out.append(("num", m.group(1)))
        elif m.group(2):
            out.append(("name", m.group(2)))
        else:
            out.append(("op", _OP_ALIASES.get(m.group(3), m.group(3))))
    return out


def latex_to_plain(text: str) -> str:
    """The LaTeX of a prepared answer in plain syntax; NotMath if it is not math we read."""
    if len(text) > MAX_MATH_CHARS or "\n" in text.strip():  # several lines: several answers
        raise NotMath
    return _tex(text)
