"""Label stories: track them, render their text and generate their questions.

`label_story` is the library entry point; `label_line` handles one JSONL line the way the
`label` command does: an invalid story comes back as `{"id": ..., "error": "<one line>"}`.
"""
from __future__ import annotations

import json
from typing import Any

from exploretom.semantics.questions import generate_questions
from exploretom.semantics.render import render_story
from exploretom.semantics.story import Story, StoryFormatError, parse_story
from exploretom.semantics.tracker import StoryError, Tracker


def track(story: Story, max_order: int = 2) -> Tracker:
    """Run the tracker over the whole story (StoryError on a failed precondition)."""
    return Tracker(max_order).apply_all(story.actions)


def validate(raw: Any, max_order: int = 2) -> Tracker:
    """The check `label` makes of every story: well formed (StoryFormatError) and every action
    meeting its preconditions (StoryError). `stats` uses it too, so both accept the same files."""
    return track(parse_story(raw), max_order)


def story_text(t: Tracker) -> str:
    return render_story(t.actions, t.left_containers, t.action_rooms)


def label_story(story: Story, max_order: int = 2) -> dict[str, Any]:
    """The story's JSON with "text" (canonical rendering) and "questions" added."""
    t = track(story, max_order)
    out = story.to_json()
    out["text"] = story_text(t)
    out["questions"] = generate_questions(t)
    return out


def label_line(line: str, max_order: int = 2, line_no: int | None = None) -> dict[str, Any]:
    """Label one JSONL line; malformed or invalid stories give {"id", "error"}."""
    where = f"line {line_no}: " if line_no is not None else ""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as e:
        return {"id": None, "error": f"{where}not valid JSON ({e.msg}, column {e.colno})"}
    story_id = raw.get("id") if isinstance(raw, dict) else None
    try:
        return label_story(parse_story(raw), max_order)
    except (StoryFormatError, StoryError) as e:
        return {"id": story_id, "error": f"{where}{e}"}
