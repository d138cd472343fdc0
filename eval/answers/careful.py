"""The careful reading of an answer text: which one answer it gives, or why it gives none.

A grader does not credit a reply only because the gold answer occurs in it. The careful reading
finds every answer an answer text names (option letters and texts, option numbers, a story's
places, yes and no: `eval.answers.mentions`), where each stands (`eval.answers.clauses`) and what
the question asks for (`eval.answers.asked`), and this module decides, as a careful grader would:

- **negation**: an answer under a negation in its own clause is not given ("Not in the
  blue_pantry.", "Definitely not D.", "Sydney is not sympathetic.", "Not (A).", "a) is not it.",
  "Not 42."); an answer text whose only answers are negated gives none;
- **hedge**: two or more different answers given ("Either the blue_pantry or the fridge.",
  "A or C", "A, C", "(a) and (b)", "No or yes.", a later "Or maybe C."), or one answer offered
  with an alternative ("blue_pantry or nowhere"), give none;
- **self-correction**: a later "Actually K." / "Wait, ..." / "I mean ..." naming one other answer
  replaces the first ("O. green_bathtub. Actually K." answers K; "16, wait, 17" answers 17);
  naming several, none;
- **reasons**: answers named in a clause that explains the first one ("X, because she did not see
  Olivia move it to the Y", "X, which is in the Y") are not answers; "X, not Y" answers X;
- **belief beside reality**: "She thinks it is in X but it is really in Y" answers what the
  question asks, when its wording asks for one of them (`asked.asked_about`: "Where will she look
  for ...?" and "Where does she think ...?" ask for the belief, "Where is it really?" for the
  reality); else it gives none.

A reply that is one JSON object is read by its `answer`. `judge` returns a `Judgement`: the one answer's key (an option letter, a candidate as written, yes
or no), or a flag saying why there is none; `key` None and `flag` None mean that the text names no
answer this module knows, and the type's own rule decides. Every function is total on strings
and bounded by `MAX_ANSWER_CHARS`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Sequence

from eval.answers.clauses import (
    _cue_at, _joined, _kind_of_clause, _negated, _one, _opening_label, _opens_clause, _said, _sentences)
from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.mentions import _NUMBER_WORDS, _Mention, _mentions, _Tok, _tokens
from eval.answers.text import clean

NEGATION, HEDGE, CORRECTION = "negation", "hedge", "correction"
# the reader of the answer type and this module read two different answers (eval.answers.reading)
UNCLEAR = "unclear"
# flags under which the text gives no answer (a correction to one answer gives that answer)
NO_ANSWER = (NEGATION, HEDGE, UNCLEAR)


@dataclass(frozen=True)
class Judgement:
    key: str | None  # the one answer given (letter, candidate, "yes"/"no"), None: none found
    flag: str | None = None  # NEGATION, HEDGE, CORRECTION (key None: the correction was unclear)
    resolved: bool = False  # several answers were named and the reading chose one of them

    @property
    def unreadable(self) -> bool:
        return self.key is None and self.flag is not None


NOTHING = Judgement(None)

_CORRECTION_WORDS = frozenset("actually wait sorry correction oops instead rather".split())
_CORRECTION_PHRASES = (("i", "mean"), ("on", "second", "thought"), ("scratch", "that"),
                       ("let", "me", "correct"), ("no", "wait"), ("i", "meant"))
_HEDGE_OPENERS = frozenset("or maybe perhaps possibly alternatively".split())


_NUMBER = re.compile(r"-?\d+(?:[.,/]\d+)*")


def _number(tokens: list[_Tok], text: str) -> Judgement:
    """A number answer checked for a negation of its last number ("Not 42.", "It is not
    \\boxed{42}.")."""
    numbers = [i for i, t in enumerate(tokens) if t.low[:1].isdigit()]
    if not numbers:
        return NOTHING
    cues = [i for i in range(1, len(tokens)) if _opens_clause(tokens, i, 0) and numbers[0] < i
            and _cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)]
    if cues:  # "\\boxed{16}. Actually, 17.": the number after the correction, when it is one
        at = tokens[cues[-1]].start
        after = {m.group(0) for m in _NUMBER.finditer(text[at:])}
        before = {m.group(0) for m in _NUMBER.finditer(text[:at])}
        if len(after) > 1:
            return Judgement(None, CORRECTION)
        if after and after != before:
            return Judgement(next(iter(after)), CORRECTION, True)
    if _negated(tokens, _Mention(numbers[-1], numbers[-1] + 1, tokens[numbers[-1]].low)):
        return Judgement(None, NEGATION)
    return NOTHING


def _json_answer(text: str) -> str | None:
    """The `answer` of a reply that is one JSON object ({"answer": "B"})."""
    s = text.strip()
    if s.startswith("```"):
        s = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", s)
    if not (s.startswith("{") and s.endswith("}")) or len(s) > MAX_ANSWER_CHARS:
        return None
    try:
        obj = json.loads(s)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    values = [v for k, v in obj.items() if isinstance(k, str) and k.lower() in ("answer", "final_answer")]
    return str(values[0]) if len(values) == 1 and isinstance(values[0], (str, int)) else None


def judge(text: str | None, answer_type: str | None, choices: Sequence[str] = (),
          candidates: Sequence[str] = (), gold: str = "", asks: str | None = None) -> Judgement:
    """The careful reading of an answer text (see the module docstring). The first sentence that
    names an answer gives it; later sentences count only when they correct it ("Actually K.")
    or hedge ("Or maybe C.")."""
    if not isinstance(text, str) or not text.strip() or answer_type not in (
            "choice", "short", "yes_no", "number"):
        return NOTHING
    text = text[: 4 * MAX_ANSWER_CHARS]
    inner = _json_answer(text)
    if inner is not None:
        text = inner
    choices = [c for c in choices if isinstance(c, str)]
    text = clean(text)  # LaTeX wrappers and emphasis away, as from the options
    tokens = _tokens(text)
    if answer_type == "number":
        return _number(tokens, text)
    mentions = _mentions(tokens, answer_type, choices, candidates, gold)
    if not mentions:
        return NOTHING
    if _joined(tokens, mentions):
        return Judgement(None, HEDGE)
    sentences = _sentences(tokens, mentions)
    key, flag, resolved = None, None, False
    first = negated_only = None
    label = answer_type == "choice" and _opening_label(tokens, mentions)
    for k, (lo, hi) in enumerate(sentences):
        inside = [m for m in mentions if lo <= m.start and m.end <= hi]
        if not inside:
            continue
        # a correction inside the first sentence: "O, actually K", "O. Actually K"
        cut = next((i for i in range(lo + 1, hi) if _opens_clause(tokens, i, lo)
                    and _cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)
                    and any(m.start > i for m in inside) and any(m.start < i for m in inside)), None)
        said = _said(tokens, mentions, lo, hi if cut is None else cut, label and k == 0)
        first = k
        raw = {m.key for m in inside}
        key = _one(said.affirmed)
        if not said.affirmed and not said.negated:
            continue  # only reasons
        if not said.affirmed and cut is None:
            # only negated: the next sentence naming an answer may give it ("Not in the box.
            # In the basket."), else there is none
            if negated_only is None:
                negated_only = k
                continue
            return Judgement(None, NEGATION)
        if not said.affirmed:
            pass
        elif key is None:
            # several answers: the belief or the reality when the question asks for one
            by_kind: dict[str | None, set[str]] = {}
            for m in said.affirmed:
                by_kind.setdefault(_kind_of_clause(tokens, m, lo), set()).add(m.key)
            if asks and len(by_kind.get(asks, ())) == 1 and None not in by_kind and len(by_kind) == 2:
                key, resolved = next(iter(by_kind[asks])), True
            else:
                return Judgement(None, HEDGE)
        elif len(raw) > 1:
            resolved = True
        if cut is not None:
            new = _one(_said(tokens, mentions, cut, hi).affirmed)
            if new is None:
                return Judgement(None, CORRECTION)
            if new != key:
                key, flag = new, CORRECTION
        break
    if key is None:
        return NOTHING if negated_only is None else Judgement(None, NEGATION)
    if negated_only is not None:
        resolved = True
    for lo, hi in sentences[first + 1:]:
        said = _said(tokens, mentions, lo, hi)
        others = [m for m in said.affirmed if m.key != key]
        if not others:
            continue
        correction = any(_cue_at(tokens, i, _CORRECTION_WORDS, _CORRECTION_PHRASES)
                         and _opens_clause(tokens, i, lo) for i in range(lo, min(hi, lo + 4)))
        hedge = any(t.low in _HEDGE_OPENERS for t in tokens[lo:min(hi, lo + 3)])
        if correction:
            new = _one(said.affirmed)
            if new is None:
                return Judgement(None, CORRECTION)
            key, flag = new, CORRECTION
        elif hedge:
            return Judgement(None, HEDGE)
    explicit = any(m.key == key and tokens[m.start].low in _NUMBER_WORDS for m in mentions)
    return Judgement(key, flag, resolved or explicit or flag == CORRECTION)
