"""What callers use: `is_correct` (the rule of the row's answer type), the evaluation `score`,
and the two RL rewards (ToM-Synth eq. 4-5)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from eval.answers.choice import is_choice
from eval.answers.extract import check_format, extract_answer
from eval.answers.knowledge import is_knowledge
from eval.answers.limits import MAX_ANSWER_CHARS
from eval.answers.number import is_number
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


def score(completion: str, gold: str, answer_type: str, choices: Sequence[str] = ()) -> Verdict:
    """The evaluation verdict of a completion: format, extracted answer (with fallback) and
    correctness."""
    extracted = extract_answer(completion, fallback=True,
                               choices=choices if answer_type == "choice" else None)
    return Verdict(
        format_ok=check_format(completion),
        extracted=extracted,
        correct=is_correct(extracted, gold, answer_type, choices),
    )


def format_reward(completion: str) -> float:
    """ToM-Synth eq. 4: 0 for a well-formed completion, -1 otherwise."""
    return 0.0 if check_format(completion) else -1.0


def outcome_reward(
    completion: str, gold: str, answer_type: str, choices: Sequence[str] = ()
) -> float:
    """ToM-Synth eq. 5: 1 when the answer is correct, else 0. Only a well-formed completion can
    earn it (the tagless fallback is for evaluation, never for reward)."""
    if not check_format(completion):
        return 0.0
    extracted = extract_answer(completion, fallback=False)
    return 1.0 if is_correct(extracted, gold, answer_type, choices) else 0.0
