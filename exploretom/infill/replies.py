"""What the generator and the judge answer (strict pydantic schemas), which verdicts reject a
candidate, and the mechanical defects that reject one before any judge sees it."""
from __future__ import annotations

import re
from typing import Any

from pydantic import field_validator

from exploretom.llm.json import StrictReply

MAX_CANDIDATE_CHARS = 900
MAX_NARRATION_CHARS = 700


class Continuations(StrictReply):
    continuations: list[str]


class Goals(StrictReply):
    goals: dict[str, str]


class Opening(StrictReply):
    opening: str


class StepVerdict(StrictReply):
    conveys_event: bool
    contradicted_facts: list[int]
    adds_events: bool
    reason: str = ""

    @field_validator("contradicted_facts", mode="before")
    @classmethod
    def _numbers(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, list):  # "3" for 3 is a harmless slip; anything else stays invalid
            return [int(x) if isinstance(x, str) and x.strip().isdigit() else x for x in v]
        return v


def step_rejection(verdict: StepVerdict, n_facts: int) -> str | None:
    if not verdict.conveys_event:
        return "event_not_conveyed"
    if any(1 <= k <= n_facts for k in verdict.contradicted_facts):
        return "mental_state_violated"
    if verdict.adds_events:
        return "invented_events"
    return None


def sentence_count(text: str) -> int:
    return len([s for s in re.split(r"(?<=[.!?])[\"')\]]*\s+", text.strip()) if s])


_TEMPLATE_LEFTOVER = re.compile(r"[{}]|^\s*(story\s+)?continuation\s*\d*\s*:|new event\s*:", re.I)


def candidate_problem(text: str) -> str | None:
    """A mechanical defect that makes judging pointless (reason slug), or None."""
    if not text.strip():
        return "candidate_empty"
    if len(text) > MAX_CANDIDATE_CHARS:
        return "candidate_too_long"
    if _TEMPLATE_LEFTOVER.search(text):
        return "candidate_template_text"
    return None
