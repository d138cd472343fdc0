"""The paper's action sets (table 1, named A1..A9 as in appendix table 5) and the user conditions.

Sampling distinguishes kinds finer than action types: a communication is *chit-chat* when its
topic is abstract and *info* when it states where an object is.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from exploretom.semantics.story import (BROADCAST, ENTER, LEAVE, MOVE_CONTAINER, MOVE_ROOM, PRIVATE,
                                        UPDATE_STATE, Action)

CHIT_PRIVATE, CHIT_PUBLIC = "chitchat_private", "chitchat_public"
INFO_PRIVATE, INFO_PUBLIC = "info_private", "info_public"
KINDS = (ENTER, LEAVE, MOVE_CONTAINER, UPDATE_STATE, MOVE_ROOM, INFO_PRIVATE, INFO_PUBLIC,
         CHIT_PRIVATE, CHIT_PUBLIC)

# The paper's A' (section 3): actions that add new basic world knowledge.
IMPORTANT = frozenset({MOVE_CONTAINER, UPDATE_STATE, MOVE_ROOM, CHIT_PRIVATE, CHIT_PUBLIC})
INFO = frozenset({INFO_PRIVATE, INFO_PUBLIC})


def kind_of(action: Action) -> str:
    if action.type in (PRIVATE, BROADCAST):
        abstract = action.topic is not None and action.topic.is_abstract
        if action.type == PRIVATE:
            return CHIT_PRIVATE if abstract else INFO_PRIVATE
        return CHIT_PUBLIC if abstract else INFO_PUBLIC
    return action.type


@dataclass(frozen=True)
class ActionSet:
    name: str
    kinds: frozenset[str]
    # Each group is one boxed entry of table 1; a story needs an action from every group.
    distinguishing: tuple[frozenset[str], ...]
    description: str


def _set(name, extra, distinguishing, description) -> ActionSet:
    return ActionSet(name, frozenset({ENTER, LEAVE, *extra}),
                     tuple(frozenset(g) for g in distinguishing), description)


ACTION_SETS: dict[str, ActionSet] = {s.name: s for s in (
    _set("A1", {MOVE_CONTAINER}, [{MOVE_CONTAINER}], "containers (ToMi-like)"),
    _set("A2", {UPDATE_STATE}, [{UPDATE_STATE}], "object state updates"),
    _set("A3", {MOVE_CONTAINER, UPDATE_STATE}, [{MOVE_CONTAINER}, {UPDATE_STATE}],
         "containers and state updates"),
    _set("A4", {MOVE_CONTAINER, MOVE_ROOM}, [{MOVE_ROOM}], "containers and moving objects "
         "between rooms"),
    _set("A5", {MOVE_CONTAINER, *INFO}, [INFO], "containers and telling where objects are"),
    _set("A6", {MOVE_CONTAINER, MOVE_ROOM, *INFO}, [INFO], "containers, rooms and info"),
    _set("A7", {MOVE_CONTAINER, MOVE_ROOM, CHIT_PRIVATE, CHIT_PUBLIC, *INFO}, [INFO],
         "containers, rooms, chit-chat and info (the richest set of the paper)"),
    _set("A8", {CHIT_PRIVATE}, [{CHIT_PRIVATE}], "private chit-chat"),
    _set("A9", {CHIT_PUBLIC}, [{CHIT_PUBLIC}], "public chit-chat"),
    _set("all", {MOVE_CONTAINER, MOVE_ROOM, UPDATE_STATE, CHIT_PRIVATE, CHIT_PUBLIC, *INFO},
         [INFO], "A7 plus object state updates"),
)}


def get_action_set(name: str) -> ActionSet:
    try:
        return ACTION_SETS[name]
    except KeyError:
        raise ValueError(f"unknown action set {name!r}; choose one of "
                         f"{', '.join(ACTION_SETS)}") from None


@dataclass(frozen=True)
class Conditions:
    """The paper's isDesired: exactly `people` people, exactly `moves` important actions,
    exactly `rooms` rooms, at most `max_actions` actions, every distinguishing group present,
    and (with asymmetry) between 1 and `max_asymmetric` actions carrying a modifier."""

    action_set: str
    people: int
    moves: int
    rooms: int
    max_actions: int
    asymmetric: bool = False
    max_asymmetric: int = 1

    def __post_init__(self) -> None:
        get_action_set(self.action_set)
        for name in ("people", "moves", "rooms", "max_actions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.moves > self.max_actions:
            raise ValueError(f"moves ({self.moves}) cannot exceed max_actions ({self.max_actions})")
        if self.asymmetric and self.max_asymmetric < 1:
            raise ValueError("max_asymmetric must be >= 1 with asymmetry")
        talk = {CHIT_PRIVATE, CHIT_PUBLIC, *INFO}
        for group in self.aset.distinguishing:
            if group <= talk and self.people < 2:
                raise ValueError(f"action set {self.action_set} needs communication, so at "
                                 "least 2 people")
            if group == {MOVE_ROOM} and self.rooms < 2:
                raise ValueError(f"action set {self.action_set} needs move_object_room, so at "
                                 "least 2 rooms")

    @property
    def aset(self) -> ActionSet:
        return ACTION_SETS[self.action_set]

    def is_desired(self, actions: Iterable[Action]) -> bool:
        """Whether `unmet(actions)` is empty (the same tests, stopping at the first that fails:
        the sampler asks this after every step once a story has its important actions)."""
        actions = list(actions)
        if len(actions) > self.max_actions:
            return False
        allowed, kinds, people, rooms = self.aset.kinds, set(), set(), set()
        important = asymmetric = 0
        for a in actions:
            kind = kind_of(a)
            if kind not in allowed:
                return False
            kinds.add(kind)
            important += kind in IMPORTANT
            asymmetric += a.is_asymmetric
            people.update(a.people())
            if a.type in (ENTER, LEAVE, MOVE_ROOM):
                rooms.add(a.room)
        if (important != self.moves or len(people) != self.people or len(rooms) != self.rooms
                or any(group.isdisjoint(kinds) for group in self.aset.distinguishing)):
            return False
        if self.asymmetric:
            return 1 <= asymmetric <= self.max_asymmetric
        return not asymmetric

    def unmet(self, actions: list[Action]) -> list[str]:
        """What keeps `actions` from satisfying the conditions (empty when desired)."""
        kinds = Counter(kind_of(a) for a in actions)
        people = {p for a in actions for p in a.people()}
        rooms = {a.room for a in actions if a.type in (ENTER, LEAVE, MOVE_ROOM)}
        out = []
        if any(k not in self.aset.kinds for k in kinds):
            out.append("kinds outside the action set")
        if len(people) != self.people:
            out.append(f"people {len(people)} != {self.people}")
        n_important = sum(n for k, n in kinds.items() if k in IMPORTANT)
        if n_important != self.moves:
            out.append(f"important actions {n_important} != {self.moves}")
        if len(rooms) != self.rooms:
            out.append(f"rooms {len(rooms)} != {self.rooms}")
        if len(actions) > self.max_actions:
            out.append(f"actions {len(actions)} > {self.max_actions}")
        for group in self.aset.distinguishing:
            if not any(kinds[k] for k in group):
                out.append(f"no action of {'/'.join(sorted(group))}")
        n_asym = sum(a.is_asymmetric for a in actions)
        if self.asymmetric and not 1 <= n_asym <= self.max_asymmetric:
            out.append(f"asymmetric actions {n_asym} not in 1..{self.max_asymmetric}")
        if not self.asymmetric and n_asym:
            out.append("asymmetric action in a symmetric setting")
        return out


def distance_to_desired(cond: Conditions, actions: Iterable[Action]) -> int:
    """How many more actions a story needs, at least, to meet `cond` (large if it overshot).
    The search ranks candidate nodes by it."""
    actions = list(actions)
    kinds = Counter(kind_of(a) for a in actions)
    important = sum(n for k, n in kinds.items() if k in IMPORTANT)
    people = {p for a in actions for p in a.people()}
    rooms = {a.room for a in actions if a.type in (ENTER, LEAVE, MOVE_ROOM)}
    overshoot = (max(0, important - cond.moves) + max(0, len(people) - cond.people)
                 + max(0, len(rooms) - cond.rooms) + max(0, len(actions) - cond.max_actions))
    n_asym = sum(a.is_asymmetric for a in actions)
    return (100 * overshoot + max(0, cond.moves - important)
            + max(0, cond.people - len(people)) + max(0, cond.rooms - len(rooms))
            + sum(1 for g in cond.aset.distinguishing if not any(kinds[k] for k in g))
            + (1 if cond.asymmetric and n_asym == 0 else 0))
