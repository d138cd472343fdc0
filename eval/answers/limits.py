"""Size caps of the parser, in one place. Work is bounded by these caps, never by timeouts, so
a verdict cannot depend on the load of the machine."""
from __future__ import annotations

# Answers: a reward function sees millions of completions, some of them degenerate.
FALLBACK_WINDOW = 4000  # characters at the end of a tagless reply searched for an answer
SHORT_REPLY_CHARS = 200  # a tagless reply at most this long is taken whole as the answer
MAX_ANSWER_CHARS = 2000  # longer extracted answers are never correct (no real answer is this long)
MAX_ANSWER_BLOCKS = 32  # answer blocks looked at; more than one distinct is already wrong


# Math answers (the `number` rule) are read by a recursive-descent parser into exact Fractions, or
# sympy expressions once roots, pi, i, e or variables appear; these caps bound the length, tokens,
# nesting, exponents, function arguments and integer sizes it will handle.
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
