"""Math, step 2: tokens read by a recursive-descent parser (no eval) into a value: an exact
Fraction while the arithmetic is rational, a sympy expression once roots, pi, i, e or variables
appear. Every operation checks the size caps before sympy can do unbounded work."""
from __future__ import annotations

from fractions import Fraction

from eval.answers.latex import CONSTANT_NAMES, FUNCTION_NAMES, NotMath
from eval.answers.limits import (
    MAX_EXPONENT,
    MAX_FUNCTION_ARGUMENT,
    MAX_INT_BITS,
    MAX_INTEGER_EXPONENT,
    MAX_NESTING,
    MAX_ROOT_BITS,
    MAX_SYMBOLS,
)


# short words that are not products of variables ("x=1 or x=2" is not x=1*o*r*x=2)
_WORDS = frozenset(
    "an and any are as at be but by can do for has if in is it its no nor not of on or so the "
    "to was we yes".split()
)


_sympy_module = None


def lazy_sympy():
    # imported on first use: sympy takes a while to import and most answers never need it
    global _sympy_module
    if _sympy_module is None:
        import sympy

        _sympy_module = sympy
    return _sympy_module


def to_sympy(v):
    return lazy_sympy().Rational(v.numerator, v.denominator) if type(v) is Fraction else v


def _bounded(f: Fraction) -> Fraction:
    if f.numerator.bit_length() > MAX_INT_BITS or f.denominator.bit_length() > MAX_INT_BITS:
        raise NotMath
    return f


def _add(a, b):
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a + b)
    return to_sympy(a) + to_sympy(b)


def _mul(a, b):
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a * b)
    return _sized(to_sympy(a) * to_sympy(b))


def _div(a, b):
    if type(b) is Fraction and b == 0:
        raise NotMath
    if type(a) is Fraction and type(b) is Fraction:
        return _bounded(a / b)
    denominator = to_sympy(b)
    if denominator.is_zero:
        raise NotMath
    return to_sympy(a) / denominator


def _pow(base, exponent):
    if type(base) is Fraction and type(exponent) is Fraction and exponent.denominator == 1:
        n = exponent.numerator
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if (base == 0 and n < 0) or (bits > 1 and (bits - 1) * abs(n) > MAX_INT_BITS):
            raise NotMath  # 9^{9^9} is never formed
        return _bounded(base**n)
    if type(exponent) is Fraction:
        limit = MAX_INTEGER_EXPONENT if exponent.denominator == 1 else MAX_EXPONENT
        if abs(exponent) > limit or exponent.denominator > MAX_EXPONENT:
            raise NotMath
    elif exponent.free_symbols:
        if _explosive(exponent) or (not isinstance(base, Fraction) and _explosive(base)):
            raise NotMath  # x^{x^x}, e^{e^x}: numbers too large to evaluate at sample points
    elif not _magnitude(exponent) <= MAX_EXPONENT:
        raise NotMath
    if type(base) is Fraction and max(base.numerator.bit_length(),
                                      base.denominator.bit_length()) > MAX_ROOT_BITS:
        raise NotMath
    return _sized(to_sympy(base) ** to_sympy(exponent))


def _magnitude(value) -> float:
    return abs(float(value)) if type(value) is Fraction else abs(complex(value.evalf(15)))


def _explosive(value) -> bool:
    """Whether a sympy value grows exponentially in its variables (`e^x`, `2^x`, `\\cosh x`)."""
    sp = lazy_sympy()
    return any(f.args[0].free_symbols for f in value.atoms(sp.exp, sp.sinh, sp.cosh)) or any(
        p.exp.free_symbols for p in value.atoms(sp.Pow)
    )


def _sized(value):
    """A sympy result, unless sympy formed an integer beyond MAX_INT_BITS ((10^{1000} x)^{64})."""
    sp = lazy_sympy()
    for r in value.atoms(sp.Rational):
        if max(abs(r.p).bit_length(), r.q.bit_length()) > MAX_INT_BITS:
            raise NotMath
    return value


_GROWING_FUNCTIONS = frozenset({"exp", "sinh", "cosh"})


def _function(name: str, arg):
    if name == "sqrt":
        return _pow(arg, Fraction(1, 2))
    # a function of a huge number, or of something exponential in a variable, could take
    # mpmath unbounded time to evaluate (sin(e^{x^{64}}) needs pi to 10^24 bits)
    if type(arg) is Fraction or not arg.free_symbols:
        if not _magnitude(arg) <= (MAX_EXPONENT if name in _GROWING_FUNCTIONS else MAX_FUNCTION_ARGUMENT):
            raise NotMath
    elif _explosive(arg):
        raise NotMath
    sp = lazy_sympy()
    fn = {
        "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "cot": sp.cot, "sec": sp.sec, "csc": sp.csc,
        "arcsin": sp.asin, "arccos": sp.acos, "arctan": sp.atan, "sinh": sp.sinh,
        "cosh": sp.cosh, "tanh": sp.tanh, "ln": sp.log, "log": sp.log, "exp": sp.exp,
    }[name]
    return _sized(fn(to_sympy(arg)))


def _letters(name: str):
    """`x` -> x, `xy` -> x*y; `i` is the imaginary unit and `e` Euler's number. Longer runs and
    short English words are text, not products of variables."""
    if len(name) > 3 or name.lower() in _WORDS:
        raise NotMath
    sp = lazy_sympy()
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
            raise NotMath
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
                raise NotMath
            value = self.sum()
            if self.peek() != ("op", ")" if text == "(" else "]"):
                raise NotMath
            self.i += 1
            self.depth -= 1
            return value
        if kind == "op" and text == "√":
            return _function("sqrt", self.atom())
        if kind == "name":
            if text in FUNCTION_NAMES:
                nk, nt = self.peek()
                return _function(text, self.atom() if nk == "op" and nt in ("(", "[") else self.power())
            if text in CONSTANT_NAMES:
                return lazy_sympy().pi if text == "pi" else lazy_sympy().oo
            return _letters(text)
        raise NotMath


def parse_expression(tokens: list[tuple[str, str]]):
    """Fraction or sympy value of an expression; NotMath if it is not one we read."""
    if not tokens:
        raise NotMath
    value = _ExpressionParser(tokens).parse()
    if type(value) is not Fraction:
        sp = lazy_sympy()
        if value.has(sp.zoo, sp.nan) or len(value.free_symbols) > MAX_SYMBOLS:
            raise NotMath
    return value
