"""What callers use: `is_correct` (the rule of the row's answer type), the evaluation `score`,
and the two RL rewards (ToM-Synth eq. 4-5)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from eval.answers.choice import is_choice
from eval.answers.extract import check_format
from eval.answers.knowledge import is_knowledge
from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.number import is_number
from eval.answers.reading import NONE, read_answer
from eval.answers.short import is_short
from eval.answers.yes_no import is_yes_no


_RULES = {
    "choice": is_choice,
    "yes_no": is_yes_no,
    "short": is_short,
    "knowledge": is_knowledge,
    "number": is_number,
}


@dataclass(frozen=True)
class Verdict:
    format_ok: bool  # exactly one think block followed by exactly one answer block
    extracted: str | None  # the answer text after extraction (None if nothing was found)
    correct: bool  # extracted matches gold under answer_type (with the evaluation fallback)
    read: str = NONE  # how the answer was found: "tag", "fallback" or "none" (eval.answers.reading)
    # the careful reading's flag (eval.answers.careful): "negation" or "hedge" (no answer given),
    # "correction" (the final answer of a self-correction was read); None otherwise
    flag: str | None = None


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


def score(completion: str, gold: str, answer_type: str, choices: Sequence[str] = (),
          candidates: Sequence[str] = (), *, fallback: bool = True,
          question: str | None = None) -> Verdict:
    """The evaluation verdict of a completion: format, the answer read (tags, else the
    fallback for untagged replies; `read_answer`, which the careful reader checks) and its
    correctness. `candidates`: the possible answers of a `short` question when known (a story's
    places and containers); `question`: the text asked (its wording says whether a reply naming
    a belief beside the reality answers with the one or the other)."""
    if answer_type not in _RULES:
        raise ValueError(f"unknown answer_type {answer_type!r}; expected one of {', '.join(_RULES)}")
    reading = read_answer(completion, answer_type, choices, candidates, fallback=fallback,
                          gold=gold if isinstance(gold, str) else "", question=question)
    # a short answer is compared against the candidates too: it must name no other one
    against = candidates if answer_type == "short" and candidates else choices
    return Verdict(
        format_ok=check_format(completion),
        extracted=reading.answer,
        correct=reading.given and is_correct(reading.answer, gold, answer_type, against),
        read=reading.how,
        flag=reading.flag,
    )


def format_reward(completion: str) -> float:
    """ToM-Synth eq. 4: 0 for a well-formed completion, -1 otherwise."""
    return 0.0 if check_format(completion) else -1.0


def outcome_reward(
    completion: str, gold: str, answer_type: str, choices: Sequence[str] = (),
    candidates: Sequence[str] = (), *, untagged: bool = False, question: str | None = None,
) -> float:
    """ToM-Synth eq. 5: 1 when the answer is correct, else 0. By default only a well-formed
    completion can earn it (the paper's reward, total in {-1, 0, 1}); with `untagged=True` the
    answer is read as evaluation reads it (`score`), so a policy that does not write the tags
    yet is still rewarded for the answer it gave (the format reward still asks for them)."""
    if not untagged:
        if not check_format(completion):
            return 0.0
        return 1.0 if score(completion, gold, answer_type, choices, candidates,
                            fallback=False, question=question).correct else 0.0
    return 1.0 if score(completion, gold, answer_type, choices, candidates,
                        question=question).correct else 0.0
