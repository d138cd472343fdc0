"""Canonical text of a story structure: one sentence per action (plus one per modifier).

Rendering needs to know whether a carried object was in a container (move_object_room says
"leaving the box in its original location"), so `render_story` is given the tracker's record of
the container each object left; `exploretom.semantics.label` does that for you.
"""
from __future__ import annotations

from typing import Collection, Sequence

from exploretom.semantics.story import (BROADCAST, ENTER, LEAVE, MOVE_CONTAINER, MOVE_ROOM, PRIVATE,
                                        UPDATE_STATE, Action, Topic)

_DETERMINERS = ("the ", "a ", "an ", "his ", "her ", "their ", "its ", "our ", "my ", "your ")


def the(noun: str) -> str:
    """'kitchen' -> 'the kitchen'; phrases that already carry a determiner stay as they are."""
    return noun if noun.lower().startswith(_DETERMINERS) else f"the {noun}"


def join_names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def claim(topic: Topic, people: Collection[str] = ()) -> str:
    """The content of a world-state message: 'the apple is in the box', 'George is in the
    bedroom' (a person's name takes no article; `people` are the story's people)."""
    entity = topic.entity if topic.entity in people else the(topic.entity)
    return f"{entity} is in {the(topic.value)}"


def story_people(actions: Sequence[Action]) -> frozenset[str]:
    """Everyone an action of the story names (a message can only be about one of them)."""
    return frozenset(p for a in actions for p in a.people())


def action_clause(action: Action, left_container: str = "", room: str = "",
                  people: Collection[str] = ()) -> str:
    """The action as a clause without final period (also used in 'before <action>' questions).
    `people` (the story's people) tells a message about a person from one about a thing."""
    p = action.person
    t = action.type
    if t == ENTER:
        return f"{p} entered {the(action.room)}"
    if t == LEAVE:
        return f"{p} left {the(action.room)}"
    if t == MOVE_CONTAINER and action.stated:
        return stated_clause(action)
    if t == MOVE_CONTAINER:
        where = f", which is also located in {the(room)}" if room else ""
        return f"{p} moved {the(action.object)} to {the(action.container)}{where}"
    if t == MOVE_ROOM:
        leaving = f", leaving {the(left_container)} in its original location" if left_container else ""
        return f"{p} moved {the(action.object)} to {the(action.room)}{leaving}"
    if t == UPDATE_STATE:
        return action.text.strip().rstrip(".")
    topic = action.topic
    assert topic is not None
    content = f"about {the(topic.topic)}" if topic.is_abstract else f"that {claim(topic, people)}"
    if t == PRIVATE:
        return f"{p} told privately to {action.listener} {content}"
    if t == BROADCAST:
        return f"{p} told out loud {content}"
    raise ValueError(f"unknown action type {t!r}")


def stated_clause(action: Action) -> str:
    """'The apple is in the box': a first placement told as a fact, its actor unnamed."""
    subject = the(action.object)
    return f"{subject[:1].upper()}{subject[1:]} is in {the(action.container)}"


def short_clause(action: Action) -> str:
    """The clause used inside memory questions and traces: no trailing location remarks. (No
    memory question is asked before a first placement, so a stated one never starts mid-sentence.)"""
    if action.stated:
        return stated_clause(action)
    if action.type in (MOVE_CONTAINER, MOVE_ROOM):
        target = action.container if action.type == MOVE_CONTAINER else action.room
        return f"{action.person} moved {the(action.object)} to {the(target)}"
    return action_clause(action)


def action_sentences(action: Action, left_container: str = "", room: str = "",
                     people: Collection[str] = ()) -> str:
    """The action's sentence followed by its modifier sentences."""
    out = [action_clause(action, left_container, room, people) + "."]
    if action.peeking:
        out.append(f"While this action was happening, {join_names(action.peeking)} witnessed "
                   "this action in secret (and only this action).")
    if action.distracted:
        verb = "was" if len(action.distracted) == 1 else "were"
        out.append(f"While this action was happening, {join_names(action.distracted)} {verb} "
                   "distracted and did not realize what happened (only during this action).")
    return " ".join(out)


def render_story(actions: Sequence[Action], left_containers: Sequence[str],
                 action_rooms: Sequence[str]) -> str:
    """The whole story, one action per line. `left_containers[i]` is the container a
    move_object_room took the object out of ("" if none); `action_rooms[i]` the actor's room."""
    people = story_people(actions)
    return "\n".join(action_sentences(a, lc, r, people)
                     for a, lc, r in zip(actions, left_containers, action_rooms))

