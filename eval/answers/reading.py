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

from eval.answers.asked import asked_about
from eval.answers.careful import CORRECTION, NO_ANSWER, UNCLEAR, judge
from eval.answers.choice import gives_own_text, is_choice, opening_label, read_choice
from eval.answers.extract import (THINKING, UNCLOSED, answer_statements, marked_answer, tagged_answer,
                                  untagged_reply)
from eval.answers.knowledge import read_knowledge
from eval.answers.limits import MAX_ANSWER_CHARS, SHORT_REPLY_CHARS
from eval.answers.number import is_number
from eval.answers.short import is_short, read_short
from eval.answers.text import normalize
from eval.answers.yes_no import is_yes_no, read_yes_no

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
    # why the careful reading gives no answer, or that it followed a correction
    # (eval.answers.careful: "negation", "hedge", "correction"); None otherwise
    flag: str | None = None

    @property
    def given(self) -> bool:
        """Whether the reply gives an answer that can be credited: read, and neither a negation
        nor a hedge (a tagged answer keeps its text for the record but gives none)."""
        return self.answer is not None and self.how != NONE and self.flag not in NO_ANSWER


UNREAD = Reading(None, NONE)


_SAME = {"choice": is_choice, "short": is_short, "yes_no": is_yes_no}


def checked(reading: Reading, span: str | None, answer_type: str | None, choices: Sequence[str],
            candidates: Sequence[str], gold: str, asks: str | None) -> Reading:
    """A reading checked by the careful reader (`careful.judge`) on the text it was read from:
    a negation, a hedge or an unclear correction gives no answer; a correction gives its final
    answer; several answers of which the reading rules pick one (a reason clause, "X, not Y",
    the belief asked for beside the reality) give that one, even where the type's reader found
    none. An open `short` answer (no candidates) is only checked, never replaced."""
    tagged = reading.how == TAG
    if tagged and len(span) > MAX_ANSWER_CHARS:
        return reading  # no real answer is this long: the rule of its type marks it wrong
    j = judge(span, answer_type, choices, candidates, gold, asks)
    if j.unreadable:
        return Reading(reading.answer, TAG, j.flag) if tagged else Reading(None, NONE, j.flag)
    if j.key is None or (answer_type == "short" and not candidates):
        return reading
    if not (j.resolved or j.flag):
        if reading.answer is None:
            return reading  # not one of the shapes the careful reading rescues
        if not _agree(reading.answer, j.key, answer_type, choices, candidates):
            # the type's reader and the careful reader read two answers: none is given
            return Reading(reading.answer, TAG, UNCLEAR) if tagged else Reading(None, NONE, UNCLEAR)
        return reading
    return Reading(j.key, reading.how if tagged else FALLBACK, j.flag)


def _agree(answer: str, key: str, answer_type: str | None, choices: Sequence[str],
           candidates: Sequence[str]) -> bool:
    same = _SAME.get(answer_type or "")
    if same is None:
        return True
    try:
        return same(answer, key, list(candidates if answer_type == "short" else choices))
    except (ValueError, RecursionError):
        return False


def read_answer(completion: str, answer_type: str | None, choices: Sequence[str] = (),
                candidates: Sequence[str] = (), *, fallback: bool = True, gold: str = "",
                question: str | None = None) -> Reading:
    """The answer of a completion and the layer that found it (see the module docstring),
    checked by the careful reader (`checked`). `choices`: the options of a `choice` question;
    `candidates`: the possible answers of a `short` question when they are known; `gold`: the
    gold answer (an open `short` answer is checked for a negation of it); `question`: the text
    asked, whose wording says whether a belief or the reality is asked for. An `answer_type` of
    None reads an answer of no known type (a marked answer or a short reply). With
    `fallback=False` only tags count."""
    choices = [c for c in choices or () if isinstance(c, str)]
    candidates = [c for c in candidates or () if isinstance(c, str)]
    gold = gold if isinstance(gold, str) else ""
    reading, span = _layered(completion, answer_type, choices, candidates, fallback,
                             valued=bool(_HAS_VALUE.search(gold)) or not gold.strip())
    if span is None or reading.how == NONE and span == "":
        return reading
    return checked(reading, span, answer_type, choices, candidates, gold, asked_about(question))


_CORRECTION_CUE = re.compile(
    r"(?i)(?:^|(?<=[.!?\n,;:])\s*)(?:wait|actually|sorry|oops|correction|on\s+second\s+thought|"
    r"i\s+mean|no,?\s+wait|let\s+me\s+correct(?:\s+that)?)\b")


def _corrected_tail(reply: str) -> str | None:
    """The reply from its last correction ("Wait, ...", "Actually, ...") on, when an answer
    statement stands before the correction and another after it; else None."""
    cues = list(_CORRECTION_CUE.finditer(reply))
    if not cues:
        return None
    tail, head = reply[cues[-1].start():], reply[:cues[-1].start()]
    return tail if answer_statements(head) and answer_statements(tail) else None


def _box_sentence(reply: str) -> str | None:
    """The sentence of a reply's last box up to the end of its line ("It is not \\boxed{42}."),
    where the careful reader looks for a negation of a boxed number; None without a box."""
    i = max(reply.rfind("\\boxed{"), reply.rfind("\\fbox{"))
    if i < 0:
        return None
    start = max(reply.rfind(c, 0, i) for c in ".!?\n") + 1
    end = reply.find("\n", i)
    return reply[start:end if end >= 0 else len(reply)]


def _layered(completion: str, answer_type: str | None, choices: list[str], candidates: list[str],
             fallback: bool, valued: bool = True) -> tuple[Reading, str | None]:
    """The layered reading, and the text it was read from (None where the careful reader has
    nothing to check: no answer block and no readable reply). `valued`: a `number` answer must
    hold a value (false where the gold is a word, `\\text{parabola}`)."""
    answer, state = tagged_answer(completion)
    if answer is not None:
        return Reading(answer, TAG), answer
    if not fallback or state == THINKING:
        return UNREAD, None
    # without known candidates a short answer is any short reply, as a number is
    reader = None if answer_type == "short" and not candidates else _READERS.get(answer_type)
    reply = untagged_reply(completion)
    if not consistent(reply, answer_type, choices, candidates, reader):
        # "The answer is A. Wait, the answer is B.": a correction after which the reply says one
        # thing answers with it; any other disagreement answers nothing
        tail = _corrected_tail(reply)
        if tail is None or not consistent(tail, answer_type, choices, candidates, reader):
            return UNREAD, None
        reading, span = _layered(tail, answer_type, choices, candidates, fallback, valued)
        return (Reading(reading.answer, reading.how, CORRECTION) if reading.answer is not None
                else reading), span
    marked = marked_answer(reply)
    if marked is not None:
        read = reader(marked, choices, candidates) if reader else None
        if read is None and answer_type == "choice":
            # "The answer is <no option>": nothing a reader could choose
            return UNREAD, marked
        if answer_type == "number" and valued and not _HAS_VALUE.search(marked):
            return UNREAD, None  # "The answer is $A, B, C$", an elided series: no value given
        boxed = answer_type == "number" and not answer_statements(reply)
        return Reading(read or marked, FALLBACK), (_box_sentence(reply) if boxed else None) or marked
    if state == UNCLOSED:
        return UNREAD, None
    read = reader(reply, choices, candidates) if reader else None
    if read is not None:
        return Reading(read, FALLBACK), reply
    whole = reply.strip()
    if reader is None and whole and len(whole) <= SHORT_REPLY_CHARS and not (
            answer_type == "number" and valued and not _HAS_VALUE.search(whole)):
        return Reading(whole, FALLBACK), whole
    return UNREAD, reply
