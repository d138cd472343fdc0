"""Questions of the paper's table 4, answered from a tracker that has run a whole story.

Every question is a dict with: order, kind (`ground_truth`, `memory_beginning`,
`memory_before`, `belief`), property (`room_location`, `container_location`, `knowledge`,
`state`), people (outermost first), thing, state_value, before_action, question, answer,
answer_type (`short`, `yes_no`, `knowledge`: the row contract's), false_belief, interesting.

Questions are only asked where the answer is known. Order-n templates nest the order-2 ones.
"""
from __future__ import annotations

import functools
from collections import Counter, defaultdict
from itertools import product
from typing import Any, Iterator

from exploretom.semantics.render import short_clause, the
from exploretom.semantics.tracker import Tracker

ROOM, CONTAINER, KNOWLEDGE, STATE = "room_location", "container_location", "knowledge", "state"
KNOWS, NOT_KNOWS = "knows about it", "does not know about it"


def chains(people: list[str], order: int) -> Iterator[tuple[str, ...]]:
    """Chains of `order` people, no one directly nested in themselves, in a stable order."""
    return iter(_chains(tuple(people), order))


@functools.lru_cache(maxsize=1024)
def _chains(people: tuple[str, ...], order: int) -> tuple[tuple[str, ...], ...]:
    return tuple(c for c in product(people, repeat=order)
                 if all(c[k] != c[k + 1] for k in range(order - 1)))


def _search_question(kind: str, c: tuple[str, ...], obj: str) -> str:
    if len(c) == 1:
        return f"In which {kind} will {c[0]} search for {the(obj)}?"
    middle = "".join(f"{p} thinks that " for p in c[1:-1])
    return f"In which {kind} does {c[0]} think that {middle}{c[-1]} will search for {the(obj)}?"


def _state_question(c: tuple[str, ...], obj: str, value: str) -> str:
    nested = "".join(f"{p} believes that " for p in c[1:])
    return f"Does {c[0]} believe that {nested}{the(obj)} {value}? Answer yes or no."


def _knowledge_question(c: tuple[str, ...], topic: str) -> str:
    if len(c) == 1:
        return f"Does {c[0]} know about {the(topic)}?"
    middle = "".join(f" that {p} thinks" for p in c[1:-1])
    return (f"What does {c[0]} think{middle} about {c[-1]}'s belief on {the(topic)}? "
            f"({KNOWS} / {NOT_KNOWS})")


def _q(order, kind, prop, people, thing, question, answer, answer_type, false_belief=False,
       state_value=None, before_action=None) -> dict[str, Any]:
    return {"order": order, "kind": kind, "property": prop, "people": list(people),
            "thing": thing, "state_value": state_value, "before_action": before_action,
            "question": question, "answer": answer, "answer_type": answer_type,
            "false_belief": false_belief, "interesting": False}


def _location_questions(t: Tracker, obj: str) -> list[dict[str, Any]]:
    out = []
    history = t.loc_history[obj]
    room, container = history[-1][1]
    out.append(_q(0, "ground_truth", ROOM, (), obj, f"In which room is {the(obj)} now?", room,
                  "short"))
    if container:
        out.append(_q(0, "ground_truth", CONTAINER, (), obj,
                      f"In which container is {the(obj)} now?", container, "short"))
    first_room, first_container = history[0][1]
    out.append(_q(0, "memory_beginning", ROOM, (), obj,
                  f"In which room was {the(obj)} at the beginning?", first_room, "short"))
    if first_container:
        out.append(_q(0, "memory_beginning", CONTAINER, (), obj,
                      f"In which container was {the(obj)} at the beginning?", first_container,
                      "short"))
    # One count per action (a first handling that carries the object records two locations).
    clauses = Counter(short_clause(t.actions[i]) for i in {i for i, _ in history})
    for (_, before), (i, after) in zip(history, history[1:]):
        clause = short_clause(t.actions[i])
        if clauses[clause] > 1:
            continue  # "before Anne moved the apple to the box" would not say which time
        if after[0] != before[0]:
            out.append(_q(0, "memory_before", ROOM, (), obj,
                          f"In which room was {the(obj)} before {clause}?", before[0], "short",
                          before_action=i))
        if after[1] != before[1] and before[1]:
            out.append(_q(0, "memory_before", CONTAINER, (), obj,
                          f"In which container was {the(obj)} before {clause}?", before[1],
                          "short", before_action=i))
    for order in range(1, t.max_order + 1):
        for c in chains(t.people, order):
            b_room, b_container = t.location(c, obj)
            if b_room:
                out.append(_q(order, "belief", ROOM, c, obj, _search_question("room", c, obj),
                              b_room, "short", b_room != room))
            if b_container:  # OPEN ("" = in no container) is falsy: no container question
                out.append(_q(order, "belief", CONTAINER, c, obj,
                              _search_question("container", c, obj), b_container, "short",
                              b_container != container))
    return out


def _state_questions(t: Tracker, obj: str, state_type: str, value: str) -> list[dict[str, Any]]:
    out = []
    key = ("state", obj, state_type)
    truth = t.belief((), key)
    for order in range(1, t.max_order + 1):
        for c in chains(t.people, order):
            held = t.belief(c, key)
            # A false belief is a value held that differs from the truth; "no" because the
            # innermost mind has no idea is ignorance (SEMANTICS.md).
            out.append(_q(order, "belief", STATE, c, obj, _state_question(c, obj, value),
                          "yes" if held == value else "no", "yes_no",
                          held is not None and held != truth, state_value=value))
    return out


def _knowledge_questions(t: Tracker, topic: str) -> list[dict[str, Any]]:
    out = []
    for p in t.people:
        out.append(_q(1, "belief", KNOWLEDGE, (p,), topic, _knowledge_question((p,), topic),
                      "yes" if t.knows((), p, topic) else "no", "yes_no"))
    for order in range(2, t.max_order + 1):
        for c in chains(t.people, order):
            believed = t.knows(c[:-1], c[-1], topic)
            # Only "knows" is a belief held; "does not know" is the default of not having seen
            # the person hear about it, so it is never a false belief.
            out.append(_q(order, "belief", KNOWLEDGE, c, topic, _knowledge_question(c, topic),
                          KNOWS if believed else NOT_KNOWS, "knowledge",
                          believed and not t.knows((), c[-1], topic)))
    return out


def mark_interesting(questions: list[dict[str, Any]]) -> None:
    """A question is interesting when its answer would change if the *outermost* person were
    replaced by another (the paper, section 2.2.2): questions that differ only in that person
    form a group, interesting when their answers differ. The inner people stay fixed."""
    groups: dict[tuple, set[str]] = defaultdict(set)

    def key(q):
        return (q["kind"], q["order"], q["property"], q["thing"], q["state_value"],
                q["before_action"], tuple(q["people"][1:]))

    keys = [key(q) for q in questions]
    for q, k in zip(questions, keys):
        groups[k].add(q["answer"])
    for q, k in zip(questions, keys):
        q["interesting"] = len(groups[k]) > 1


def generate_questions(t: Tracker) -> list[dict[str, Any]]:
    """All questions about the story `t` has tracked, orders 0..t.max_order."""
    out: list[dict[str, Any]] = []
    for obj in t.objects:
        out.extend(_location_questions(t, obj))
    for obj, state_type, value in t.state_values:
        out.extend(_state_questions(t, obj, state_type, value))
    for topic in t.topics:
        out.extend(_knowledge_questions(t, topic))
    mark_interesting(out)
    return out


__all__ = ["generate_questions", "mark_interesting", "chains", "KNOWS", "NOT_KNOWS", "ROOM",
           "CONTAINER", "KNOWLEDGE", "STATE"]
