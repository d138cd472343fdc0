"""The row contract shared by every dataset of the project (DESIGN.md, "Rows").

Every training or evaluation item is a dict with exactly these columns. Data modules build rows
with `make_row`; loaders and trainers call `validate_row` on input they did not produce.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

ANSWER_TYPES = ("choice", "yes_no", "short", "knowledge", "number")
COLUMNS = ("id", "source", "prompt", "answer", "answer_type", "choices", "meta")

SYSTEM_PROMPT = (
    "You are answering questions about people and what they know, believe, feel and intend. "
    "First reason step by step inside <think> and </think>. Then give only the final answer "
    "inside <answer> and </answer>: one option letter, yes or no, a single name, a short "
    "phrase or a number, as the question asks. Never list several answers."
)


# `system_prompt` settings of suites and the CLI that name a prompt instead of spelling one out
DEFAULT_PROMPT, TAGS_PROMPT, NO_PROMPT = "default", "tags", "none"


def resolve_system_prompt(setting: str | None, default: str | None) -> str | None:
    """The system message a benchmark's rows are asked with: `default` (the benchmark's own
    convention) when the setting is None or "default", the think/answer prompt for "tags", no
    system message for "none", else the setting's own text."""
    if setting is None or setting == DEFAULT_PROMPT:
        return default
    if setting == TAGS_PROMPT:
        return SYSTEM_PROMPT
    if setting == NO_PROMPT or not setting.strip():
        return None
    return setting


def with_system_prompt(prompt: list[dict[str, str]], system: str | None) -> list[dict[str, str]]:
    """A conversation with its system message replaced by `system` (removed for None)."""
    turns = [m for m in prompt if m.get("role") != "system"]
    return ([{"role": "system", "content": system}] if system else []) + turns


class RowError(ValueError):
    """A row that breaks the contract; the message names the row and the field."""


def make_row(
    *,
    id: str,
    source: str,
    user: str,
    answer: str,
    answer_type: str,
    choices: Iterable[str] = (),
    meta: dict[str, Any] | None = None,
    system: str | None = SYSTEM_PROMPT,
) -> dict[str, Any]:
    """Build a contract row whose prompt is an optional system message plus one user turn."""
    prompt = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": user}
    ]
    row = {
        "id": str(id),
        "source": source,
        "prompt": prompt,
        "answer": str(answer),
        "answer_type": answer_type,
        "choices": [str(c) for c in choices],
        "meta": json.dumps(meta or {}, ensure_ascii=False, sort_keys=True),
    }
    validate_row(row)
    return row


def validate_row(row: dict[str, Any], where: str = "") -> None:
    """Raise RowError with one line naming the offending field when `row` breaks the contract."""
    rid = row.get("id", "?") if isinstance(row, dict) else "?"
    at = f"{where}row {rid!r}" if where else f"row {rid!r}"
    if not isinstance(row, dict):
        raise RowError(f"{at}: expected an object, got {type(row).__name__}")
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise RowError(f"{at}: missing column(s) {', '.join(missing)}")
    if row["answer_type"] not in ANSWER_TYPES:
        raise RowError(f"{at}: answer_type {row['answer_type']!r} is not one of {', '.join(ANSWER_TYPES)}")
    prompt = row["prompt"]
    if not isinstance(prompt, list) or not prompt or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in prompt
    ):
        raise RowError(f"{at}: prompt must be a non-empty list of {{role, content}} messages")
    if not isinstance(row["answer"], str) or not row["answer"].strip():
        raise RowError(f"{at}: answer must be a non-empty string")
    if not isinstance(row["choices"], list):
        raise RowError(f"{at}: choices must be a list")
    if row["answer_type"] == "choice":
        letters = [chr(ord("A") + i) for i in range(len(row["choices"]))]
        if row["answer"] not in letters:
            raise RowError(f"{at}: choice answer {row['answer']!r} is not a letter among {letters}")
    if not isinstance(row["meta"], str):
        raise RowError(f"{at}: meta must be a JSON string")
    try:
        json.loads(row["meta"])
    except json.JSONDecodeError as e:
        raise RowError(f"{at}: meta is not valid JSON ({e.msg})") from None


def features():
    """The row contract as Hugging Face `datasets.Features` (datasets imported lazily)."""
    from datasets import Features, List, Value

    return Features({
        "id": Value("string"),
        "source": Value("string"),
        "prompt": List({"role": Value("string"), "content": Value("string")}),
        "answer": Value("string"),
        "answer_type": Value("string"),
        "choices": List(Value("string")),
        "meta": Value("string"),
    })


def meta(row: dict[str, Any]) -> dict[str, Any]:
    """The decoded `meta` column of a row (a sample record carries it decoded already)."""
    m = row.get("meta")
    if isinstance(m, dict):
        return m
    return json.loads(m) if m else {}


def lenient_meta(value: Any) -> dict[str, Any]:
    """A `meta` value (JSON string or dict) as a dict; {} for anything else, malformed JSON
    included: for readers that meet rows of every source and must not fail on one (rewards,
    reply checks)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


def user_text(row: dict[str, Any]) -> str:
    """The content of the last user turn of a row's prompt."""
    return next(m["content"] for m in reversed(row["prompt"]) if m["role"] == "user")
