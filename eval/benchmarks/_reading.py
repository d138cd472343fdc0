"""Pieces the benchmark scorers share to read a reply the way the benchmark's own scorer does.

The shared parser (`eval.answers`) reads the `<answer>` block, and for a reply without tags its
careful reader. A reply without tags is what a benchmark's original scorer was written for, so
each benchmark module applies its original's reading rule to such replies (in its `score`), in
our words and on our prompt format; these are the pieces several of them need:

- `untagged_reply`: the text an original scorer reads (the reply after its reasoning), or None
  when the reply has an answer block (our tags decide) or stopped inside its `<think>`;
- `letter_marks`: the option letters a text writes as letters, not the capitals that begin a
  word (the `A` of "After", the `D` of "Daniel") nor the article or pronoun ("A basket");
  `letter_runs` also takes runs of them ("AC");
- `is_refusal`: a reply that declines to answer ("I'm sorry, but I can't ...");
- `exact_option`: the option whose whole text an answer is.
"""
from __future__ import annotations

import re
from typing import Sequence

from eval import answers

# replies are at most a few thousand characters; a runaway one is read up to this length
MAX_REPLY_CHARS = 100_000

_THINK_CLOSE = re.compile(r"(?i)</think\s*>")
_THINK_OPEN = re.compile(r"(?i)<think\s*>")
_TAG = re.compile(r"(?i)</?(?:think|answer)\s*>")


def untagged_reply(response: str) -> str | None:
    """The reply after its reasoning (the text after the last `</think>`, stray tags blanked),
    when it gives no `<answer>` block; None when it gives one, or when its `<think>` never
    closes (it stopped before answering), or when nothing is left."""
    if not isinstance(response, str):
        return None
    if answers.read_answer(response, None, fallback=False).how == "tag":
        return None
    closes = list(_THINK_CLOSE.finditer(response))
    if closes:
        text = response[closes[-1].end():]
    elif _THINK_OPEN.search(response) and "<answer" not in response.lower():
        return None
    else:
        text = response
    text = _TAG.sub(" ", text[:MAX_REPLY_CHARS]).strip()
    return text or None


# a capital letter standing alone: no letter, digit, apostrophe or underscore touches it
_STANDALONE = re.compile(r"(?<![A-Za-z0-9'’_])([A-Z])(?![A-Za-z0-9'’_])")
# words after an A or I that keep it a letter: "A or C", "A is correct", "C because ..."
_AFTER_LETTER = frozenset(
    "or and nor vs versus is was seems looks appears would should could might must also too not "
    "because since as then maybe perhaps probably".split()
)


def letter_marks(text: str, letters: str) -> list[tuple[int, str]]:
    """(position, letter) of each capital in `letters` that `text` writes as a letter: alone,
    not the first letter of a word ("After", "Daniel"), and for A and I not the article or the
    pronoun (an A or I followed by a lower-case word, unless that word is one that follows an
    option letter: "A or C", "A because ...")."""
    marks = []
    for m in _STANDALONE.finditer(text):
        letter = m.group(1)
        if letter not in letters:
            continue
        if letter in "AI":
            word = re.match(r"[ \t]+([a-z]+)", text[m.end():m.end() + 24])
            if word and word.group(1) not in _AFTER_LETTER:
                continue
        marks.append((m.start(), letter))
    return marks


# a run of capitals standing alone: "AC", "B", "(B)(D)" gives "B" and "D"
_RUN = re.compile(r"(?<![A-Za-z0-9'’_])([A-Z]+)(?![A-Za-z0-9'’_])")


def letter_runs(text: str, letters: str) -> list[tuple[int, str]]:
    """(position, run) of each run of capitals that are all in `letters` and stand alone ("AC",
    "B"), with `letter_marks`' exclusions for a single A or I (the article, the pronoun): the
    letters a text gives as a set ("The answer is AC", "B and D")."""
    out = []
    for m in _RUN.finditer(text):
        run = m.group(1)
        if any(c not in letters for c in run):
            continue
        if len(run) == 1 and not letter_marks(text[m.start():m.end() + 24], letters):
            continue
        out.append((m.start(), run))
    return out


_REFUSAL = re.compile(
    r"(?i)^\W*(?:i\s*(?:'|’)?\s*m\s+sorry|i\s+am\s+sorry|sorry\s*[,.!:;]|i\s+apologi[sz]e|"
    r"i\s+(?:can\s*(?:'|’)?\s*t|cannot|can\s+not|am\s+unable|(?:'|’)m\s+unable|am\s+not\s+able|"
    r"(?:do\s+not|don\s*(?:'|’)?\s*t)\s+know)\b|as\s+an\s+ai\b|unfortunately,?\s+i\b)"
)


def is_refusal(text: str | None) -> bool:
    """Whether a reply opens by declining or apologising ("I'm sorry, but I can't ...",
    "As an AI ...", "I don't know"): no answer, whatever option words it contains."""
    return isinstance(text, str) and bool(_REFUSAL.match(text))


def _squash(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" \t\n.!\"'“”‘’`*")


def exact_option(text: str | None, choices: Sequence[str]) -> int | None:
    """The index of the one option whose whole text `text` is (case, spacing, quotes and a final
    full stop aside), else None."""
    if not isinstance(text, str) or not text.strip():
        return None
    said = _squash(text)
    hits = [i for i, c in enumerate(choices) if isinstance(c, str) and _squash(c) == said]
    return hits[0] if len(hits) == 1 else None
