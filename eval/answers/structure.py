"""Math, step 3: the structure of an answer (expression, relation, tuple or interval, unordered
list, union) and the equivalence of two structures (expressions by value at fixed points)."""
from __future__ import annotations

import cmath
import functools
from fractions import Fraction

from eval.answers.algebra import lazy_sympy, parse_expression, to_sympy
from eval.answers.latex import NotMath, latex_to_plain, prepare, tokenize
from eval.answers.limits import MAX_ITEMS, MAX_NESTING, MAX_PLUS_MINUS


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
                    raise NotMath
            elif depth == 0 and text in separators:
                parts.append([])
                found.append(text)
                continue
        parts[-1].append(tok)
    if depth:
        raise NotMath
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
        raise NotMath
    return flat[0] if len(flat) == 1 else ("list", tuple(flat))


def _structure(tokens, depth: int = 0) -> tuple:
    if not tokens or depth > MAX_NESTING:
        raise NotMath
    parts, _ = _split_top(tokens, {","})
    if len(parts) > 1:  # "1, -2": a list of solutions
        return _unordered([_structure(p, depth + 1) for p in parts])
    parts, _ = _split_top(tokens, {"∪"})
    if len(parts) > 1:
        if len(parts) > MAX_ITEMS:
            raise NotMath
        return ("union", tuple(_structure(p, depth + 1) for p in parts))
    signs = [k for k, tok in enumerate(tokens) if tok in (("op", "±"), ("op", "∓"))]
    if signs:  # y = ±√3 x is the two equations y = √3 x and y = -√3 x (all ± signs agree)
        if len(signs) > MAX_PLUS_MINUS:
            raise NotMath
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
                raise NotMath
            return ("seq", brackets, tuple(_structure(p, depth + 1) for p in items))
    return ("expr", parse_expression(tokens))


def math_of(text: str) -> tuple | None:
    """The structure of an answer or gold, or None when it is not math this parser reads."""
    try:
        s = prepare(text)
        return _structure(tokenize(latex_to_plain(s))) if s else None
    except NotMath:
        return None
    except Exception:  # sympy raises many types on values it cannot handle: not math we read
        return None


@functools.lru_cache(maxsize=4096)
def gold_math(gold: str) -> tuple | None:
    return math_of(gold)


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
    sp = lazy_sympy()
    x, y = to_sympy(a), to_sympy(b)
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


def same_math(a: tuple, g: tuple) -> bool:
    if a[0] == g[0] == "expr":
        return _same_value(a[1], g[1])
    if a[0] == g[0] == "seq":
        return a[1] == g[1] and len(a[2]) == len(g[2]) and all(map(same_math, a[2], g[2]))
    if a[0] == g[0] and a[0] in ("list", "union"):
        return _matched(a[1], g[1])
    if a[0] == g[0] == "rel":
        if a[1] == g[1] and all(map(same_math, a[2], g[2])):
            return True
        flipped = tuple(_FLIPPED.get(op, "") for op in reversed(g[1]))
        return a[1] == flipped and all(map(same_math, a[2], reversed(g[2])))
    # "x = 5" against "5", "x ∈ [0, 1]" against "[0, 1]"
    if a[0] == "rel" and g[0] != "rel":
        value = _bound_value(a)
        return value is not None and same_math(value, g)
    if g[0] == "rel" and a[0] != "rel":
        value = _bound_value(g)
        return value is not None and same_math(a, value)
    return False


def _matched(answers: tuple, golds: tuple) -> bool:
    """Whether the items pair off one to one (order free)."""
    if len(answers) != len(golds):
        return False
    unused = list(answers)
    for g in golds:
        k = next((k for k, a in enumerate(unused) if same_math(a, g)), None)
        if k is None:
            return False
        unused.pop(k)
    return True
