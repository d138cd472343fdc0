"""The assistant replies that supervised fine-tuning teaches: `<think>...</think><answer>GOLD</answer>`.

The think text comes from the row's `meta` when a data module stored a reasoning trace there
(the first of `THINK_FIELDS` that holds a non-empty string); otherwise it is a short template that
names the kind of answer expected. The template is deliberately generic: it teaches the format and
gives the model a place to reason, without inventing reasoning the data does not contain.
"""
from __future__ import annotations

from typing import Any, Sequence

from eval.answers import tagged
from eval.rows import meta

# meta keys that may hold a reasoning trace, in order of preference
THINK_FIELDS = ("reasoning", "rationale", "think", "explanation")

_TEMPLATES = {
    "choice": "I follow what each person saw, heard and was told, then pick the one option that fits.",
    "yes_no": "I follow what each person saw, heard and was told, then answer yes or no.",
    "short": "I follow what each person saw, heard and was told, then name the one answer.",
    "knowledge": "I follow what each person saw, heard and was told, then say what they know about it.",
    "number": "I follow what each person saw, heard and was told, then count to get the number.",
}


def think_text(row: dict[str, Any], fields: Sequence[str] = THINK_FIELDS,
               default: str | None = None) -> str:
    """The reasoning placed inside `<think>`: a trace from `meta` when present, else `default`
    when given, else the template of the row's answer type."""
    for field in fields:
        value = meta(row).get(field)
        if isinstance(value, str) and value.strip():
            return value.strip()
    if default is not None:
        return default
    return _TEMPLATES.get(row.get("answer_type", ""), _TEMPLATES["short"])


def option_text(row: dict[str, Any]) -> str | None:
    """The text of a choice row's gold option (`answer` "B" of choices [x, y] -> y) when the
    options are names rather than sentences; None for other rows, sentence options (a small
    model copies a sentence badly: "noone will ..." for "Noor will ...") or a gold that is not
    one of the options' letters."""
    choices = row.get("choices") or []
    gold = str(row.get("answer", "")).strip().upper()
    if row.get("answer_type") != "choice" or len(gold) != 1 or not choices:
        return None
    if any(len(c.split()) > MAX_NAME_WORDS or c.rstrip().endswith((".", "?", "!")) for c in choices):
        return None
    index = ord(gold) - ord("A")
    return choices[index] if 0 <= index < len(choices) else None


MAX_NAME_WORDS = 6  # "postal crate with a lid" is a name; a sentence ends in a full stop


def target_text(row: dict[str, Any], fields: Sequence[str] = THINK_FIELDS,
                default: str | None = None, choice_answer: str = "letter") -> str:
    """The full assistant reply for a contract row. `choice_answer` says how a choice row
    answers: `letter` (`<answer>B</answer>`), `text` (the gold option's text in the answer, as
    a short-answer row would give it, when the options are names; every choice scorer reads an
    option by its text too), or `text_then_letter` (that text as the think, then the letter).
    Sentence options are answered by letter either way (`option_text`)."""
    if choice_answer not in ("letter", "text", "text_then_letter"):
        raise ValueError(f"choice_answer must be letter, text or text_then_letter, got {choice_answer!r}")
    think = think_text(row, fields, default)
    text = option_text(row) if choice_answer != "letter" else None
    if text is None:
        return tagged(row["answer"], think)
    if choice_answer == "text":
        return tagged(text, think)
    return tagged(row["answer"], f"{think} {text}".strip())


def template_phrases() -> list[str]:
    """Every fixed text the SFT targets can contain (used to train the tiny model's tokenizer)."""
    return list(_TEMPLATES.values())
