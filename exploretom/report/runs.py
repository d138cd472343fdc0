"""Reading search-run files for the report: each story's method, target, setting and the
(order, interesting, correct) of its questions (`read_runs`)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from eval.jsonl import InputError
from exploretom.datasets.stories import ReadCounts, story_records

ASTAR, BASELINE = "astar", "baseline"
METHOD_NAMES = {ASTAR: "A*", BASELINE: "baseline (overgenerate and filter)"}
SETTING_KEYS = ("people", "moves", "rooms", "max_actions")


@dataclass
class RunStory:
    method: str
    target: str
    action_set: str
    asymmetric: bool
    setting: tuple  # (action set, asymmetric, people, moves, rooms, max actions)
    actions: int
    evaluations: int
    found: bool
    accuracy: float  # the search's own figure on its scored questions
    questions: list[tuple[int, bool, bool]]  # (order, interesting, correct)




def _field(rec: dict, name: str, types, at: str):
    if name not in rec:
        raise InputError(f"{at}: missing field '{name}'")
    value = rec[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise InputError(f"{at}: field '{name}' has the wrong type ({type(value).__name__})")
    return value


def _tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def parse_record(rec: dict[str, Any], at: str) -> RunStory:
    method = _field(rec, "method", str, at)
    target = _field(rec, "target", str, at)
    setting = _field(rec, "setting", dict, at)
    action_set = setting.get("action_set", rec.get("action_set"))
    if not isinstance(action_set, str):
        raise InputError(f"{at}: missing field 'setting.action_set'")
    asym = setting.get("asymmetric", rec.get("asymmetric", False))
    if not isinstance(asym, bool):
        raise InputError(f"{at}: field 'setting.asymmetric' must be true or false")
    questions = []
    for i, q in enumerate(_field(rec, "questions", list, at)):
        qat = f"{at}: questions[{i}]"
        if not isinstance(q, dict):
            raise InputError(f"{qat}: expected an object")
        order = _field(q, "order", int, qat)
        questions.append((order, bool(_field(q, "interesting", bool, qat)),
                          _field(q, "correct", bool, qat)))
    return RunStory(
        method=method, target=target, action_set=action_set, asymmetric=asym,
        setting=(action_set, asym, *(setting.get(k) for k in SETTING_KEYS)),
        actions=len(_field(rec, "actions", list, at)),
        evaluations=_field(rec, "evaluations", int, at),
        found=_field(rec, "found", bool, at),
        accuracy=float(_field(rec, "accuracy", (int, float), at)),
        questions=questions,
    )


def read_runs(paths: Sequence[str | Path]) -> tuple[list[RunStory], ReadCounts]:
    counts = ReadCounts()
    stories: list[RunStory] = []
    seen: dict[tuple, str] = {}
    for path, at, rec in story_records(paths, counts):
        story = parse_record(rec, at)
        key = (story.method, story.target, str(rec["id"]))
        if key in seen:
            raise InputError(f"{at}: story {rec['id']!r} ({story.method}, {story.target}) "
                             f"already read at {seen[key]}")
        seen[key] = at
        stories.append(story)
        counts.per_file[path] += 1
    if not stories:
        raise InputError(f"no search results in {', '.join(map(str, paths))} "
                         f"({counts.errors} error lines)")
    return stories, counts
