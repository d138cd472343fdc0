"""One story's progress through infilling (`StoryJob`): its planned steps, the prelude (goals and
opening), the current step's attempts, candidates, verdicts and feedback, and the steps done."""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from exploretom.infill.steps import Step, plan_steps
from exploretom.semantics.label import story_text
from exploretom.semantics.story import Story, parse_story
from exploretom.semantics.tracker import Tracker


@dataclass
class StoryJob:
    raw: dict[str, Any]
    story: Story
    steps: list[Step]
    people: list[dict[str, str]]
    objects: list[str]
    setting: str
    script: str
    need_goals: bool
    need_narration: bool
    goals: dict[str, str] = field(default_factory=dict)
    narration: str = ""
    prelude_tries: Counter = field(default_factory=Counter)
    prelude_notes: dict[str, str] = field(default_factory=dict)  # why the last try failed
    errors: list[str] = field(default_factory=list)
    done_steps: list[dict[str, Any]] = field(default_factory=list)
    step_i: int = 0
    attempts: int = 0  # generator calls for the current step
    candidates: list[str] = field(default_factory=list)
    cand_i: int = 0
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    failed: str = ""  # reason the story failed, "" while running or when ok
    request_error: str = ""  # a request failed for good: the story is left for a re-run
    finished: bool = False

    @property
    def in_prelude(self) -> bool:
        return self.need_goals or self.need_narration

    def so_far(self) -> str:
        return "\n".join(([self.narration] if self.narration else [])
                         + [s["text"] for s in self.done_steps if s["text"]])


def _people_of(story: Story, t: Tracker) -> list[dict[str, str]]:
    roles = {}
    for p in (story.context or {}).get("people", []) or []:
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            roles[p["name"]] = str(p.get("role") or "")
    return [{"name": n, "role": roles.get(n, "")} for n in t.people]


def prepare(raw: dict[str, Any], seed: int, max_order: int, goals: bool, narration: bool) -> StoryJob:
    """A job for one labelled story; StoryFormatError/StoryError if the structure is invalid."""
    story = parse_story(raw)
    rng = random.Random(f"{seed}:{story.id}")
    steps = plan_steps(story, rng, max_order)
    t = Tracker(max_order).apply_all(story.actions)
    ctx = story.context or {}
    setting = ctx.get("description") if isinstance(ctx.get("description"), str) else ""
    return StoryJob(raw=raw, story=story, steps=steps, people=_people_of(story, t),
                    objects=list(t.objects), setting=setting, script=story_text(t),
                    need_goals=goals, need_narration=narration)
