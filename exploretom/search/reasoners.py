"""Scripted reasoners: rule-based answerers over story structures, each with a known bias.

They stand in for a target model offline, so the A* search, the tests and the embedded default
are meaningful without any LLM. Each takes the tracker that ran the story and a question dict
and returns an answer string.

- `perfect`: the tracker's own label (an upper bound; accuracy 1).
- `world`: answers every belief question with the true state of the world, as if everyone saw
  everything (fails exactly the false-belief questions).
- `first_order`: tracks each person's own beliefs correctly but ignores nesting: "where does
  Anne think Beth will search?" is answered with Beth's actual belief.
- `last_mention`: answers from the last mention in the text: the last room or container named
  with the object, yes to a state value iff it was the last one set, and "knows" for any topic
  that was mentioned at all. No world model, no beliefs.
- `lapses`: a hurried reader: tracks beliefs correctly but misses about one action in seven
  (and anything that no longer makes sense without it), answering as if those actions never
  happened. Which actions are missed depends only on the story up to them, so a prefix's lapses
  persist in all its continuations, as an LLM's confusion about a passage does.
"""
from __future__ import annotations

import functools
import hashlib
from typing import Any, Callable

from exploretom.semantics.questions import CONTAINER, KNOWLEDGE, KNOWS, NOT_KNOWS, ROOM, STATE
from exploretom.semantics.story import (BROADCAST, MOVE_CONTAINER, MOVE_ROOM, PRIVATE, UPDATE_STATE,
                                        CONTAINER_LOCATION)
from exploretom.semantics.tracker import StoryError, Tracker

Question = dict[str, Any]
Reasoner = Callable[[Tracker, Question], str]


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _from_chain(t: Tracker, chain: tuple[str, ...], q: Question) -> str:
    """The answer `q` would have if the belief chain asked about were `chain`."""
    prop = q["property"]
    if prop in (ROOM, CONTAINER):
        room, container = t.location(chain, q["thing"])
        if room is None and chain:  # the person has no belief: fall back to the world
            room, container = t.location((), q["thing"])
        return (room if prop == ROOM else container) or ""
    if prop == STATE:
        return _yes(t.belief(chain, _state_key(t, q)) == q["state_value"])
    raise ValueError(prop)


def _state_key(t: Tracker, q: Question) -> tuple:
    obj, value = q["thing"], q["state_value"]
    state_type = next(st for o, st, v in t.state_values if o == obj and v == value)
    return ("state", obj, state_type)


def perfect(t: Tracker, q: Question) -> str:
    return q["answer"]


def world(t: Tracker, q: Question) -> str:
    if q["kind"] != "belief":
        return q["answer"]
    if q["property"] == KNOWLEDGE:
        knows = t.knows((), q["people"][-1], q["thing"])
        return _yes(knows) if q["order"] == 1 else (KNOWS if knows else NOT_KNOWS)
    return _from_chain(t, (), q)


def first_order(t: Tracker, q: Question) -> str:
    if q["kind"] != "belief" or q["order"] == 1:
        return q["answer"]
    if q["property"] == KNOWLEDGE:
        return KNOWS if t.knows((), q["people"][-1], q["thing"]) else NOT_KNOWS
    return _from_chain(t, (q["people"][-1],), q)


def last_mention(t: Tracker, q: Question) -> str:
    prop, thing = q["property"], q["thing"]
    if prop == KNOWLEDGE:
        mentioned = any(a.topic is not None and a.topic.is_abstract and a.topic.topic == thing
                        for a in t.actions)
        return _yes(mentioned) if q["order"] == 1 else (KNOWS if mentioned else NOT_KNOWS)
    if prop == STATE:
        last = None
        for a in t.actions:
            if a.type == UPDATE_STATE and a.object == thing and a.state_value in _values(t, q):
                last = a.state_value
        return _yes(last == q["state_value"])
    room = container = ""
    for a in t.actions:
        if a.type == MOVE_CONTAINER and a.object == thing:
            container, room = a.container, t.container_room.get(a.container, room)
        elif a.type == MOVE_ROOM and a.object == thing:
            room = a.room
        elif a.type in (PRIVATE, BROADCAST) and a.topic and a.topic.entity == thing:
            if a.topic.property == CONTAINER_LOCATION:
                container = a.topic.value
                room = t.container_room.get(container, room)
            else:
                room = a.topic.value
    return room if prop == ROOM else container


LAPSE_RATE = 0.15


def lapsed(actions: tuple) -> list[int]:
    """Indices of the actions the `lapses` reader misses: a hash of the story up to each."""
    h, out = hashlib.sha256(), []
    for i, a in enumerate(actions):
        h.update(repr(a).encode())
        if int(h.copy().hexdigest()[:13], 16) / 16 ** 13 < LAPSE_RATE:
            out.append(i)
    return out


@functools.lru_cache(maxsize=4096)
def _as_read(actions: tuple, max_order: int) -> Tracker:
    missed = set(lapsed(actions))
    t = Tracker(max_order)
    for i, a in enumerate(actions):
        if i not in missed:
            try:
                t.apply(a)
            except StoryError:  # e.g. a move by someone the reader never saw enter
                pass
    return t


def lapses(t: Tracker, q: Question) -> str:
    if q["kind"] != "belief":
        return q["answer"]
    seen = _as_read(tuple(t.actions), t.max_order)
    chain = tuple(q["people"])
    if q["property"] == KNOWLEDGE:
        knows = seen.knows(chain[:-1], chain[-1], q["thing"])
        return _yes(knows) if q["order"] == 1 else (KNOWS if knows else NOT_KNOWS)
    if q["property"] == STATE and not any(o == q["thing"] and v == q["state_value"]
                                          for o, _, v in seen.state_values):
        return "no"  # the reader missed the only mention of this state
    return _from_chain(seen, chain, q)


def _values(t: Tracker, q: Question) -> set[str]:
    """Values of the same state type as the question's."""
    state_type = _state_key(t, q)[2]
    return {v for o, st, v in t.state_values if o == q["thing"] and st == state_type}


REASONERS: dict[str, Reasoner] = {
    "perfect": perfect,
    "world": world,
    "first_order": first_order,
    "last_mention": last_mention,
    "lapses": lapses,
}


def get_reasoner(name: str) -> Reasoner:
    try:
        return REASONERS[name]
    except KeyError:
        raise ValueError(f"unknown reasoner {name!r}; choose one of {', '.join(REASONERS)}") \
            from None
