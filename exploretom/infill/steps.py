"""What each infilling step must convey and keep true: the action's canonical sentence, the facts
the tracker holds after it (world state, beliefs and knowledge up to the judge's order, in plain
sentences), and the length and style desiderata drawn from a seeded RNG."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from exploretom.semantics.questions import (CONTAINER, KNOWLEDGE, KNOWS, ROOM, STATE,
                                            generate_questions)
from exploretom.semantics.render import action_sentences, the
from exploretom.semantics.story import Story
from exploretom.semantics.tracker import Tracker

LENGTHS = ("in a single sentence", "in one or two sentences")
STYLES = {
    "declarative": "Write it as plain narration, without any dialogue.",
    "conversational": "Write it as conversation: let the characters' own words, in direct "
                      "quotes, carry what happens.",
}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _nest(people: list[str], claim: str, positive: bool) -> str:
    """(['Anne', 'Beth'], 'the apple is salted', False) ->
    'Anne does not believe that Beth believes that the apple is salted.'"""
    inner = "".join(f"{p} believes that " for p in people[1:]) + claim
    verb = "believes" if positive else "does not believe"
    return f"{people[0]} {verb} that {inner}."


def fact_sentence(q: dict[str, Any]) -> str | None:
    """A question and its tracked answer as a plain statement (None for memory questions)."""
    thing, answer, people = q["thing"], q["answer"], q["people"]
    if q["kind"] == "ground_truth":
        return f"{_cap(the(thing))} is now in {the(answer)}."
    if q["kind"] != "belief":
        return None
    if q["property"] in (ROOM, CONTAINER):
        return _nest(people, f"{the(thing)} is in {the(answer)}", True)
    if q["property"] == STATE:
        return _nest(people, f"{the(thing)} {q['state_value']}", answer == "yes")
    if q["property"] == KNOWLEDGE:
        if len(people) == 1:
            verb = "knows" if answer == "yes" else "does not know"
            return f"{people[0]} {verb} about {the(thing)}."
        if answer == KNOWS:
            return _nest(people[:-1], f"{people[-1]} knows about {the(thing)}", True)
        # The tracker holds no belief that they know, which is weaker than believing they don't.
        outer = people[:-1]
        inner = "".join(f"{p} believes that " for p in outer[1:])
        return f"As far as {outer[0]} is aware, {inner}{people[-1]} does not know about {the(thing)}."
    return None


def tracked_facts(t: Tracker, max_order: int = 2) -> list[str]:
    """Everything the tracker holds after its last action, orders 0..max_order, as sentences."""
    facts: dict[str, None] = {}
    for obj, state_type, value in t.state_values:
        if t.belief((), ("state", obj, state_type)) == value:
            facts[f"{_cap(the(obj))} {value}."] = None
    for q in generate_questions(t):
        if q["order"] <= max_order:
            sentence = fact_sentence(q)
            if sentence:
                facts[sentence] = None
    return list(facts)


@dataclass
class Step:
    """What one infilling step must convey and preserve."""

    action_index: list[int]
    sentence: str  # the canonical rendering of the action(s), modifiers included
    facts: list[str]
    length: str
    style: str


def plan_steps(story: Story, rng: random.Random, max_order: int = 2) -> list[Step]:
    """One step per action, each with the tracker's facts after it and seeded desiderata."""
    t = Tracker(max_order)
    steps = []
    for i, action in enumerate(story.actions):
        t.apply(action)
        sentence = action_sentences(action, t.left_containers[i], t.action_rooms[i], t.people)
        steps.append(Step([i], sentence,
                          tracked_facts(t, max_order), rng.choice(LENGTHS), rng.choice(list(STYLES))))
    return steps
