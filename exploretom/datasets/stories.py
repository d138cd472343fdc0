"""Labelled stories read for a dataset (`read_stories`): every story and question checked, the
text its prompts show (the canonical rendering or the infilled narration), the part of each
row's meta that comes from the story, and its stratum for the split."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from eval.jsonl import InputError, iter_records
from exploretom.datasets.wording import state_placements

ANSWER_TYPES = ("short", "yes_no", "knowledge")
# Fields every question needs to become a row (questions.py writes them all).
QUESTION_FIELDS = {"order": int, "kind": str, "property": str, "question": str, "answer": str,
                   "answer_type": str, "interesting": bool, "false_belief": bool}
# Candidate state updates the sampler did not use: large and not part of the story.
CONTEXT_DROP = ("state_updates",)

Group = tuple[str, str, int]  # (kind, property, order)


@dataclass
class StoryIn:
    id: str
    text: str  # shown in the prompt
    info: dict[str, Any]  # the story's part of every row's meta (story_meta)
    stratum: str  # its setting, for stratified splits
    questions: list[tuple[int, dict[str, Any]]]  # (index in the story's question list, question)
    max_order: int = 2  # highest order of all its questions: the order it was labelled at


@dataclass
class Item:
    story: StoryIn
    index: int
    q: dict[str, Any]
    reasoning: str = ""  # the trace, filled by add_reasoning once the items are selected
    # the story's containers (rooms) for a container (room) question, filled with the trace: the
    # answers a reader could give, which untagged replies are read against and options are made of
    candidates: list[str] = field(default_factory=list)

    @property
    def group(self) -> Group:
        return (self.q["kind"], self.q["property"], self.q["order"])


@dataclass
class ReadCounts:
    lines: int = 0
    stories: int = 0
    errors: int = 0  # {"id", "error"} lines written by label/sample for invalid stories
    infilled_failed: int = 0  # "infilled"."ok" false
    not_infilled: int = 0  # no "infilled" field in --text infilled mode
    per_file: dict[str, int] = field(default_factory=dict)


def _check_question(q: Any, at: str) -> None:
    if not isinstance(q, dict):
        raise InputError(f"{at}: expected an object")
    for name, typ in QUESTION_FIELDS.items():
        if name not in q:
            raise InputError(f"{at}: missing field '{name}'")
        value = q[name]
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise InputError(f"{at}: field '{name}' must be {typ.__name__}, got {value!r:.40}")
    if q["answer_type"] not in ANSWER_TYPES:
        raise InputError(f"{at}: field 'answer_type' is {q['answer_type']!r}, expected one of "
                         f"{', '.join(ANSWER_TYPES)}")
    if not q["answer"].strip() or not q["question"].strip():
        raise InputError(f"{at}: empty question or answer")


def _story_text(rec: dict[str, Any], mode: str, at: str, counts: ReadCounts) -> str | None:
    """The text shown in the prompt, or None when the story is skipped (counted)."""
    if mode == "structure":
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{at}: missing field 'text' (label the stories first: "
                             f"python -m exploretom label)")
        return text
    inf = rec.get("infilled")
    if inf is None:
        counts.not_infilled += 1
        return None
    if not isinstance(inf, dict):
        raise InputError(f"{at}: field 'infilled' must be an object")
    if not isinstance(inf.get("ok"), bool):
        raise InputError(f"{at}: field 'infilled.ok' must be true or false")
    if not inf["ok"]:
        counts.infilled_failed += 1
        return None
    text = inf.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{at}: field 'infilled.text' must be a non-empty string")
    return text


def read_stories(paths: Sequence[str | Path], text_mode: str = "structure",
                 orders: set[int] | None = None, properties: set[str] | None = None,
                 stated_share: float = 0.0, seed: int = 0) -> tuple[list[StoryIn], ReadCounts]:
    """Every usable labelled story of `paths`, with its questions of the chosen orders and
    properties (None: all); in the canonical rendering, a seeded `stated_share` of the first
    placements told as facts (exploretom.datasets.wording)."""
    counts = ReadCounts()
    stories: list[StoryIn] = []
    seen: dict[str, str] = {}
    for path, at, rec in story_records(paths, counts):
        sid = str(rec["id"])
        if sid in seen:
            raise InputError(f"{at}: story id {sid!r} already read at {seen[sid]}")
        seen[sid] = at
        if not isinstance(rec.get("actions"), list):
            raise InputError(f"{at}: story {sid!r}: missing field 'actions'")
        questions = rec.get("questions")
        if not isinstance(questions, list):
            raise InputError(f"{at}: story {sid!r}: missing field 'questions' (label the "
                             f"stories first: python -m exploretom label)")
        for i, q in enumerate(questions):
            _check_question(q, f"{at}: story {sid!r}: questions[{i}]")
        max_order = max([q["order"] for q in questions] + [1])
        if stated_share and text_mode == "structure":
            try:
                rec = state_placements(rec, stated_share, seed, max_order)
            except InputError as e:
                raise InputError(f"{at}: {e}") from None
        text = _story_text(rec, text_mode, f"{at}: story {sid!r}", counts)
        if text is None:
            continue
        chosen = [(i, q) for i, q in enumerate(questions)
                  if (orders is None or q["order"] in orders)
                  and (properties is None or q["property"] in properties)]
        # keep only what rows need: the whole record of thousands of stories is large
        stories.append(StoryIn(sid, text, story_meta(rec, text_mode), stratum(rec), chosen,
                               max_order))
        counts.per_file[path] += 1
    counts.stories = len(stories)
    return stories, counts


def story_records(paths: Sequence[str | Path], counts: "ReadCounts") -> Iterator[tuple[str, str, dict]]:
    """(file, position, record) of every story record of `paths`, in order. The `{"id", "error"}`
    lines that label, sample and search write for invalid stories are counted and passed over;
    a record without an id is an error. `counts.per_file` starts at 0 for every file: the reader
    adds the stories it keeps."""
    for path in paths:
        counts.per_file[str(path)] = 0
        for at, rec in iter_records(path):
            counts.lines += 1
            if "error" in rec:
                counts.errors += 1
                continue
            if rec.get("id") is None or isinstance(rec["id"], (dict, list)):
                raise InputError(f"{at}: missing field 'id'")
            yield str(path), at, rec


def stratum(rec: dict[str, Any]) -> str:
    """Stories of one setting (action set, asymmetry, people, moves, rooms, length) share a
    stratum, so every split gets its share of each setting."""
    action_set, asym = action_set_of(rec)
    cond = rec.get("setting") if isinstance(rec.get("setting"), dict) else rec.get("conditions")
    cond = {k: v for k, v in cond.items() if k not in ("action_set", "asymmetric")} \
        if isinstance(cond, dict) else {}
    return json.dumps([action_set, bool(asym), cond], sort_keys=True, default=str)


def _compact_context(context: Any) -> Any:
    if not isinstance(context, dict):
        return context
    return {k: v for k, v in context.items() if k not in CONTEXT_DROP}


def action_set_of(rec: dict[str, Any]) -> tuple[Any, Any]:
    """(action set, asymmetric) of a story: from a search run's "setting" or the sampler's keys."""
    setting = rec.get("setting") if isinstance(rec.get("setting"), dict) else {}
    return (setting.get("action_set", rec.get("action_set")),
            setting.get("asymmetric", rec.get("asymmetric")))


def story_meta(rec: dict[str, Any], text_mode: str) -> dict[str, Any]:
    """The part of a row's meta that comes from its story (shared by the story's rows)."""
    action_set, asymmetric = action_set_of(rec)
    info = {"action_set": action_set, "asymmetric": asymmetric, "text_source": text_mode,
            "story": {"actions": rec["actions"], "context": _compact_context(rec.get("context"))}}
    if isinstance(rec.get("conditions"), dict):
        info["conditions"] = rec["conditions"]
    for key in ("method", "target"):  # stories that come out of the adversarial search
        if key in rec:
            info[key] = rec[key]
    inf = rec.get("infilled")
    if text_mode == "structure" and isinstance(inf, dict) and inf.get("ok") and \
            isinstance(inf.get("text"), str):
        info["infilled_text"] = inf["text"]  # in infilled mode the prompt already holds it
    return info
