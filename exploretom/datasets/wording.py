"""Story wordings a dataset can vary without changing any label.

Stated placements: ToMi and Hi-ToM tell where an object starts as a fact ("The apple is in the
box."); our language places an object only by someone's move. A model trained on our stories alone
meets that sentence first in the benchmark, and reads it badly: rewritten as moves, ToMi's stated
placements lifted a trained model's false beliefs from 27% to 42% (docs/experiments.md,
2026-11-28, night session). `state_placements` tells a seeded share of the first placements as
facts. The tracker's beliefs are the same either way (everyone in the room sees it, as they see a
move), so every question keeps its answer; the rewritten story is labelled again to prove it.
The dataset keeps the questions the story was labelled with.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any

from eval.jsonl import InputError
from exploretom.datasets.draws import in_share, stable_hash
from exploretom.semantics.label import story_text, track
from exploretom.semantics.questions import generate_questions
from exploretom.semantics.story import MOVE_CONTAINER, Story, StoryFormatError, parse_story
from exploretom.semantics.tracker import StoryError, Tracker


def stateable(story: Story) -> list[int]:
    """Indices of the actions that may be told as facts: an object's first handling that puts it
    in a container, with nobody peeking or distracted (whom a fact's sentence could not name),
    while everyone who is in a room is in that one (else the reader could not tell who saw it,
    nor where the container is: ToMi tells its placements so too)."""
    t, out = Tracker(1), []
    for i, a in enumerate(story.actions):
        if (a.type == MOVE_CONTAINER and not a.is_asymmetric and a.object not in t.loc_history
                and len(set(t.person_room.values()) - {None}) == 1):
            out.append(i)
        t.apply(a)
    return out


def state_placements(rec: dict[str, Any], share: float, seed: int, max_order: int = 2
                     ) -> dict[str, Any]:
    """`rec` (a labelled story record) with a seeded `share` of its stateable placements stated
    and its text rendered again; the same record when none is drawn. A question whose answer
    the rewritten story does not give is an error (it would be a bug of this module)."""
    sid = str(rec.get("id"))
    try:
        story = parse_story(rec)
        t = track(story, max_order)
        chosen = {i for i in stateable(story) if in_share(stable_hash(seed, "stated", sid, i), share)}
        if not chosen:
            return rec
        actions = [dataclasses.replace(a, stated=True) if i in chosen else a
                   for i, a in enumerate(story.actions)]
        stated = track(dataclasses.replace(story, actions=tuple(actions)), max_order)
    except (StoryFormatError, StoryError) as e:
        raise InputError(f"story {sid!r}: {e}") from None
    # The stated story may ask more: a memory question skipped because "before Clara moved the
    # stethoscope to the drawer" named two moves names one once the first of them is stated.
    asked = {json.dumps(q, sort_keys=True) for q in generate_questions(stated)}
    if any(json.dumps(q, sort_keys=True) not in asked for q in generate_questions(t)):
        raise InputError(f"story {sid!r}: stating its placements {sorted(chosen)} changed a "
                         f"question or an answer")
    out = dict(rec)
    out["actions"] = [a.to_json() for a in actions]
    out["text"] = story_text(stated)
    return out
