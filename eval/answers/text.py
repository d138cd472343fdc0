"""Normalisation shared by extraction and every rule: `normalize`, the removal of presentation
(LaTeX wrappers, math delimiters, Markdown), and option mentions in an answer."""
from __future__ import annotations

import re
import unicodedata


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


def clean(text: str) -> str:
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


# option letters in order: choices[0] is A
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def squash(text: str) -> str:
    return " ".join(clean(text).casefold().split()).rstrip(".")


def contains_phrase(haystack: str, phrase: str) -> bool:
    """Whole-word containment of a normalised phrase in a normalised text."""
    return bool(phrase) and f" {phrase} " in f" {haystack} "


def mentioned_options(norm_answer: str, norm_options: list[str], letters: str) -> set[str]:
    """Options whose full text appears in the answer, ignoring an option whose text only appears
    inside a longer mentioned option ("Sally" inside "Sally's mother")."""
    hits = [i for i, o in enumerate(norm_options) if contains_phrase(norm_answer, o)]
    kept = [
        i for i in hits
        if not any(j != i and len(norm_options[j]) > len(norm_options[i])
                   and contains_phrase(norm_options[j], norm_options[i]) for j in hits)
    ]
    return {letters[i] for i in kept}
