"""What the model answers (strict pydantic schemas), how a context reply becomes a record and a
proposed update a state update in the lexicon's form, and what the update judge rejects."""
from __future__ import annotations

import re
from typing import Any

from exploretom.contexts.validation import ARTICLES
from exploretom.llm.json import StrictReply, one_line


class PersonReply(StrictReply):
    name: str
    role: str


class ContextReply(StrictReply):
    people: list[PersonReply]
    situation: str
    start_room: str
    other_room: str
    object: str
    containers: list[str]
    topics: list[str]


class UpdateReply(StrictReply):
    text: str
    state_value: str
    visible: bool


class UpdateVerdict(StrictReply):
    plausible: bool
    visibility_correct: bool
    object_stays: bool
    state_matches: bool
    reason: str = ""


def _phrase(text: str) -> str:
    """'The Back Kitchen.' -> 'back kitchen': the form the templates put after 'the'."""
    text = one_line(text).strip(" .,;:").lower()
    for article in ARTICLES:
        if text.startswith(article):
            return text[len(article):]
    return text


def _role(text: str) -> str:
    text = one_line(text).strip(" .,;:")
    for article in ARTICLES:
        if text.lower().startswith(article):
            return text[len(article):]
    return text


def _state_value(text: str, obj: str) -> str:
    value = one_line(text).strip(" .?!")
    for prefix in (f"the {obj} ", f"{obj} "):
        if value.lower().startswith(prefix):
            value = value[len(prefix):]
    return value[:1].lower() + value[1:]


def state_type_of(value: str) -> str:
    """'has a lanyard clipped on' -> '<has_lanyard_clipped_on>' (articles dropped)."""
    words = [w for w in re.findall(r"[a-z0-9]+", value.lower()) if w not in ("a", "an", "the")]
    return "<" + "_".join(words[:6] or ["state"]) + ">"


def normalise_update(reply: UpdateReply, obj: str) -> dict[str, Any]:
    text = one_line(reply.text)
    if text and not text.endswith((".", "!", "?")):
        text += "."
    value = _state_value(reply.state_value, obj)
    return {"state_type": state_type_of(value), "state_value": value, "text": text,
            "visible": reply.visible}


def build_record(reply: ContextReply, cid: str, description: str, containers: int,
                 topics: int, source: dict[str, str]) -> dict[str, Any]:
    people = [{"name": one_line(p.name), "role": _role(p.role)} for p in reply.people]
    # Models often give one container or topic too many; extra ones are dropped, too few fail.
    return {
        "id": cid,
        "description": description,
        "roles": [p["role"] for p in people],
        "rooms": [_phrase(reply.start_room), _phrase(reply.other_room)],
        "topics": [_phrase(t) for t in reply.topics][:topics],
        "objects": [{"name": _phrase(reply.object),
                     "containers": [_phrase(c) for c in reply.containers][:containers],
                     "state_updates": []}],
        "people": people,
        "situation": one_line(reply.situation),
        "source": source,
    }


def judge_rejection(verdict: UpdateVerdict) -> str | None:
    """The first failed test of a verdict as a reason slug; None when the update passes."""
    for ok, reason in ((verdict.plausible, "implausible"),
                       (verdict.visibility_correct, "wrong_visibility"),
                       (verdict.object_stays, "moves_or_destroys"),
                       (verdict.state_matches, "state_mismatch")):
        if not ok:
            return reason
    return None
