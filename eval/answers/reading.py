"""Which text of a reply is its answer, and how it was found: `read_answer`.

Layers, first match wins:
1. **tag**: the `<answer>` block after the last `</think>` (several different blocks are kept,
   joined, so the comparison sees several answers). A `<think>` never closed has no answer.
2. **fallback**, for replies without tags (evaluation of any model; the RL outcome reward reads
   tags only unless asked otherwise):
   - an answer the reply marks: the last "answer: X" / "the answer is X" line, `\\boxed{X}`, an
     unclosed `<answer>X`; read by the answer type's own reader when it can, else taken as it is;
   - else the answer type's reader on the reply (after its reasoning): `choice` a leading option
     label, else the one option its first paragraph names (`choice.read_choice`); `yes_no` the
     first word, else the first sentence (`yes_no.read_yes_no`); `knowledge` the first sentence
     that speaks of knowing (`knowledge.read_knowledge`); `short` with known candidates (the
     places and containers of a story) the one candidate the first sentence naming any names
     (`short.read_short`);
   - else, for `number`, `short` without candidates and answers of no known type, the whole
     reply when it is short.
3. **none**: nothing a careful reader would call the answer. The reply is scored wrong and counted
   apart (`extraction_failed`), so a model that could not be read is not mistaken for one that
   answered wrongly.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from eval.answers.choice import gives_own_text, opening_label, read_choice
from eval.answers.extract import (THINKING, UNCLOSED, answer_statements, marked_answer, tagged_answer,
                                  untagged_reply)
from eval.answers.knowledge import read_knowledge
from eval.answers.limits import SHORT_REPLY_CHARS
from eval.answers.number import is_number
from eval.answers.short import read_short
from eval.answers.text import normalize
from eval.answers.yes_no import read_yes_no

TAG, FALLBACK, NONE = "tag", "fallback", "none"
HOW = (TAG, FALLBACK, NONE)

Reader = Callable[[str, Sequence[str], Sequence[str]], "str | None"]
_READERS: dict[str, Reader] = {
    "choice": read_choice,
    "yes_no": read_yes_no,
    "knowledge": read_knowledge,
    "short": read_short,
}


# a mathematical answer has a digit or a constant, and is no unfinished series ("+\\cdots")
_HAS_VALUE = re.compile(r"^(?!.*(?:\\cdots|\\ldots|\.\.\.)).*(?:\d|\\pi|\\infty|\\sqrt)", re.S)
_LISTED = re.compile(r"(?m)^[ \t*_#>-]*\(?([A-Z])[.):：]")


def consistent(reply: str, answer_type: str | None, choices: Sequence[str],
               candidates: Sequence[str], reader: Reader | None) -> bool:
    """Whether an untagged reply says one thing. Its answer statements ("The answer is B") must
    agree with each other; a consistent statement decides over a reply that opened with a label
    and another option's text, or with a listing of the options; an opening label without a
    statement must not be followed by another option's text ("A. <the text of C>"), and an
    opening label and a statement must agree ("B. ... The answer is A." answers nothing)."""
    statements = answer_statements(reply)
    if reader is None:  # open answers: the same value ("42", "42.0", "x = 42") is one answer
        said = [s for s in statements if normalize(s)]
        same = (lambda a, b: is_number(a, b, [])) if answer_type == "number" else (
            lambda a, b: normalize(a) == normalize(b))
        return all(same(a, said[-1]) for a in said)
    stated = {read for s in statements if (read := reader(s, choices, candidates))}
    if len(stated) > 1:
        return False
    if answer_type != "choice":
        return True
    label, conflict = opening_label(reply, choices)
    listing = len(set(_LISTED.findall(reply))) > 1
    if not stated:
        return not conflict
    if conflict:  # only a statement that gives the option's own text outweighs it
        return any(gives_own_text(s, choices) for s in statements)
    return listing or label is None or label in stated


@dataclass(frozen=True)
class Reading:
    answer: str | None  # the answer text (None: nothing could be read)
    how: str  # TAG, FALLBACK or NONE


UNREAD = Reading(None, NONE)


def read_answer(completion: str, answer_type: str | None, choices: Sequence[str] = (),
                candidates: Sequence[str] = (), *, fallback: bool = True) -> Reading:
    """The answer of a completion and the layer that found it (see the module docstring).
    `choices`: the options of a `choice` question; `candidates`: the possible answers of a
    `short` question when they are known. An `answer_type` of None reads an answer of no known
    type (a marked answer or a short reply). With `fallback=False` only tags count."""
    answer, state = tagged_answer(completion)
    if answer is not None:
        return Reading(answer, TAG)
    if not fallback or state == THINKING:
        return UNREAD
    choices = [c for c in choices or () if isinstance(c, str)]
    candidates = [c for c in candidates or () if isinstance(c, str)]
    # without known candidates a short answer is any short reply, as a number is
    reader = None if answer_type == "short" and not candidates else _READERS.get(answer_type)
    reply = untagged_reply(completion)
    if not consistent(reply, answer_type, choices, candidates, reader):
        return UNREAD
    marked = marked_answer(reply)
    if marked is not None:
        read = reader(marked, choices, candidates) if reader else None
        if read is None and answer_type == "choice":
            return UNREAD  # "The answer is <no option>": nothing a reader could choose
        if answer_type == "number" and not _HAS_VALUE.search(marked):
            return UNREAD  # "The answer is $A, B, C$", an elided series: no value given
        return Reading(read or marked, FALLBACK)
    if state == UNCLOSED:
        return UNREAD
    read = reader(reply, choices, candidates) if reader else None
    if read is not None:
        return Reading(read, FALLBACK)
    whole = reply.strip()
    if reader is None and whole and len(whole) <= SHORT_REPLY_CHARS and not (
            answer_type == "number" and not _HAS_VALUE.search(whole)):
        return Reading(whole, FALLBACK)
    return UNREAD
