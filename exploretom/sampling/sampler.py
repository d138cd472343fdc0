"""Random valid stories that meet the user conditions (the paper's isDesired).

`StorySampler.step` appends one random valid action to a tracker; a story is a random walk of
steps, retried until `Conditions.is_desired` holds. The A* search reuses `step` to expand nodes
and to sample the random continuations of its heuristic.

Two independent switches (docs/exploretom.md says which one each figure used):
- `steered` (default): the walk is steered towards the conditions (missing people and rooms
  first, needed kinds weighted up as the story runs out of room, a modifier made certain before
  the end). Unsteered walks draw kinds by their base odds and actions uniformly, and keep only
  the walks that happen to meet the conditions (overgenerate and filter, as the paper's
  "randomly sampled" stories of tables 7-9).
- `constrained` (default): no action repeated back to back, no "X entered R. X left R.", no
  communication by or to someone who has not entered a room yet, no peeker who has not, no
  distracted listener of a private message. Unconstrained walks allow all of them (the paper's sampler).
"""
from __future__ import annotations

import dataclasses
import functools
import random
from bisect import bisect
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Sequence

from exploretom.sampling.action_sets import (CHIT_PRIVATE, CHIT_PUBLIC, IMPORTANT, INFO_PRIVATE,
                                             INFO_PUBLIC, Conditions, distance_to_desired, kind_of)
from exploretom.sampling.lexicon import Context, sample_context
from exploretom.semantics.story import (BROADCAST, CONTAINER_LOCATION, ENTER, LEAVE, MOVE_CONTAINER,
                                        MOVE_ROOM, PRIVATE, ROOM_LOCATION, UPDATE_STATE, Action,
                                        Story, Topic)
from exploretom.semantics.tracker import StoryError, Tracker

# Relative odds of each kind in a step (communication kinds share one unit between their
# private and public forms, as in the paper's info-* and chitChat-*).
KIND_WEIGHTS = {ENTER: 1.0, LEAVE: 1.0, MOVE_CONTAINER: 1.0, UPDATE_STATE: 1.0, MOVE_ROOM: 1.0,
                INFO_PRIVATE: 0.5, INFO_PUBLIC: 0.5, CHIT_PRIVATE: 0.5, CHIT_PUBLIC: 0.5}
STOP_PROBABILITY = 0.6  # once the conditions hold, chance of ending the story at each step
MODIFIER_PROBABILITY = 0.3  # chance that an eligible action gets a peeker or a distraction


class ConditionsUnreachable(RuntimeError):
    """No story meeting the conditions was found within the retry budget."""


@dataclass
class Progress:
    """Counters the walk steers by (kept in step with the tracker's actions)."""

    important: int = 0
    asymmetric: int = 0
    kinds: set[str] = field(default_factory=set)  # the kinds the story has

    def add(self, action: Action) -> None:
        kind = kind_of(action)
        self.kinds.add(kind)
        self.important += kind in IMPORTANT
        self.asymmetric += action.is_asymmetric

    @classmethod
    def of(cls, actions) -> "Progress":
        p = cls()
        for a in actions:
            p.add(a)
        return p


class StorySampler:
    def __init__(self, conditions: Conditions, context: Context, rng: random.Random,
                 max_order: int = 2, steered: bool = True, constrained: bool = True) -> None:
        self.cond = conditions
        self.ctx = context
        self.rng = rng
        self.max_order = max_order
        self.steered = steered
        self.constrained = constrained
        self.kinds = [k for k in KIND_WEIGHTS if k in conditions.aset.kinds]
        if MOVE_ROOM in self.kinds and len(context.rooms) < 2:
            self.kinds.remove(MOVE_ROOM)
        self._made: dict[tuple, Any] = {}  # candidates recur at every step: each made once

    def _make(self, cls, *args, **fields):
        """`cls(*args, **fields)` (an Action or a Topic), the same object every time."""
        key = (cls, args, tuple(fields.items()))
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = cls(*args, **fields)
        return made

    # ---------------------------------------------------------------- candidates per kind
    def _in_rooms(self, t: Tracker) -> list[tuple[str, str]]:
        return [(p, t.person_room[p]) for p in t.people if t.person_room.get(p)]

    def _object_here(self, t: Tracker, room: str) -> bool:
        loc = t.belief((), ("loc", self.ctx.object))
        return loc is None or loc[0] == room

    def candidates(self, t: Tracker, kind: str) -> list[Action]:
        ctx, obj = self.ctx, self.ctx.object
        if kind == ENTER:  # the commonest kind: made once per person and room, looked up fast
            made, out = self._made, []
            for p in ctx.people:
                here = t.person_room.get(p)
                for r in ctx.rooms:
                    if here != r:
                        a = made.get((ENTER, p, r))
                        if a is None:
                            a = made[(ENTER, p, r)] = Action(ENTER, p, room=r)
                        out.append(a)
            return out
        if kind == LEAVE:
            return [self._make(Action, LEAVE, p, room=r) for p, r in self._in_rooms(t)]
        if kind == MOVE_CONTAINER:
            loc = t.belief((), ("loc", obj))
            return [self._make(Action, MOVE_CONTAINER, p, object=obj, container=c)
                    for p, r in self._in_rooms(t) if loc is None or loc[0] == r
                    for c in ctx.containers
                    if t.container_room.get(c, r) == r and (loc is None or loc[1] != c)]
        if kind == MOVE_ROOM:
            return [self._make(Action, MOVE_ROOM, p, object=obj, room=dest)
                    for p, r in self._in_rooms(t) if self._object_here(t, r)
                    for dest in ctx.rooms if dest != r]
        if kind == UPDATE_STATE:
            return [self._make(Action, UPDATE_STATE, p, object=obj, state_type=u.state_type,
                               state_value=u.state_value, text=u.text.format(person=p),
                               visible=u.visible)
                    for p, r in self._in_rooms(t) if self._object_here(t, r)
                    for u in ctx.state_updates
                    if t.belief((), ("state", obj, u.state_type)) != u.state_value]
        if kind in (INFO_PRIVATE, INFO_PUBLIC):
            out = []
            for s in ctx.people:
                room, container = t.location((s,), obj)
                claims = [(ROOM_LOCATION, room)] if room else []
                if container:
                    claims.append((CONTAINER_LOCATION, container))
                if not claims:
                    continue
                prop, value = self.rng.choice(claims)
                topic = self._make(Topic, "world_state", entity=obj, property=prop, value=value)
                out += self._communications(t, kind == INFO_PRIVATE, s, topic)
            return out
        if kind in (CHIT_PRIVATE, CHIT_PUBLIC):
            out = []
            for s in ctx.people:
                topic = self._make(Topic, "abstract", topic=self.rng.choice(ctx.topics))
                out += self._communications(t, kind == CHIT_PRIVATE, s, topic)
            return out
        raise ValueError(f"unknown kind {kind!r}")

    def _communications(self, t: Tracker, private: bool, s: str, topic: Topic) -> list[Action]:
        if private:  # common too: looked up as ENTER is
            made, out = self._made, []
            for lst in self.ctx.people:
                if lst != s:
                    a = made.get((PRIVATE, s, lst, topic))
                    if a is None:
                        a = made[(PRIVATE, s, lst, topic)] = Action(PRIVATE, s, listener=lst,
                                                                    topic=topic)
                    out.append(a)
            return out
        room = t.person_room.get(s)
        if room and len(t.people_in(room)) >= 2:
            return [self._make(Action, BROADCAST, s, topic=topic)]
        return []

    # ---------------------------------------------------------------- modifiers
    def witnesses(self, t: Tracker, a: Action) -> set[str]:
        if a.type == PRIVATE:
            return {a.person, a.listener}
        room = t.person_room.get(a.person)
        w = set(t.people_in(room)) if room else set()
        if a.type == ENTER:
            w |= set(t.people_in(a.room))
        return w

    def _with_modifier(self, t: Tracker, a: Action) -> Action:
        w = self.witnesses(t, a)
        peekers = [p for p in self.ctx.people if p not in w]
        if self.constrained:  # someone who never entered a room cannot be watching in secret
            entered = {x.person for x in t.actions if x.type == ENTER}
            peekers = [p for p in peekers if p in entered]
        distracted = [p for p in self.ctx.people if p in w and p != a.person]
        options = [("peeking", p) for p in peekers] + [("distracted", p) for p in distracted]
        if not options:
            return a
        if self.constrained and a.type == PRIVATE:  # a distracted listener would hear nothing
            options = [o for o in options if o != ("distracted", a.listener)]
            if not options:
                return a
        field, who = self.rng.choice(options)
        return dataclasses.replace(a, **{field: (who,)})

    # ---------------------------------------------------------------- story quality
    def allowed(self, t: Tracker, a: Action) -> bool:
        """The constrained sampler's quality rules (module docstring); always True without."""
        return self._quality_rules(t)(a)

    def _quality_rules(self, t: Tracker):
        """`allowed` for every candidate of one step (what it needs is computed once)."""
        if not self.constrained:
            return lambda a: True
        entered = {x.person for x in t.actions if x.type == ENTER}
        prev = t.actions[-1] if t.actions else None
        if prev is not None and prev.is_asymmetric:
            prev = dataclasses.replace(prev, peeking=(), distracted=())  # candidates have none
        undo = (prev.person, prev.room) if prev is not None and prev.type == ENTER else None

        def allowed(a: Action) -> bool:
            if prev is not None and a.type == prev.type and a == prev:
                return False
            if a.type in (PRIVATE, BROADCAST):
                return a.person in entered and (a.type != PRIVATE or a.listener in entered)
            return not (a.type == LEAVE and (a.person, a.room) == undo)
        return allowed

    # ---------------------------------------------------------------- walking
    def _kind_weights(self, t: Tracker, prog: Progress) -> list[tuple[str, float]]:
        if not self.steered:
            return [(k, KIND_WEIGHTS[k]) for k in self.kinds]
        unmet = tuple(g for g in self.cond.aset.distinguishing if g.isdisjoint(prog.kinds))
        return list(_steered_weights(self.cond, tuple(self.kinds), len(t.actions),
                                     prog.important, unmet))

    def step(self, t: Tracker, prog: Progress) -> Action | None:
        """Append one random valid action to `t` (and `prog`); None when no kind has one."""
        weighted = self._kind_weights(t, prog)
        allowed = self._quality_rules(t)
        while weighted:
            kinds, weights = zip(*weighted)
            # self.rng.choices(kinds, weights)[0], as random.py computes it
            cum = list(accumulate(weights))
            kind = kinds[bisect(cum, self.rng.random() * (cum[-1] + 0.0), 0, len(cum) - 1)]
            options = [a for a in self.candidates(t, kind) if allowed(a)]
            self.rng.shuffle(options)
            for a in self._prefer_new(t, options) if self.steered else options:
                if (self.cond.asymmetric and a.type != MOVE_ROOM
                        and prog.asymmetric < self.cond.max_asymmetric
                        and self.rng.random() < self._modifier_odds(t, prog, a)):
                    a = self._with_modifier(t, a)
                try:
                    t.apply(a)
                except StoryError:
                    continue
                prog.add(a)
                return a
            weighted = [(k, w) for k, w in weighted if k != kind]
        return None

    def _modifier_odds(self, t: Tracker, prog: Progress, a: Action) -> float:
        if not self.steered:
            return MODIFIER_PROBABILITY
        if prog.asymmetric == 0 and len(t.actions) >= self.cond.max_actions - 2:
            return 1.0  # the story is about to end without its asymmetric action
        return MODIFIER_PROBABILITY if kind_of(a) not in (ENTER, LEAVE) else MODIFIER_PROBABILITY / 3

    def _prefer_new(self, t: Tracker, options: list[Action]) -> list[Action]:
        """Options that bring in a person or room the story still lacks come first."""
        people = set(t.people)
        rooms = set(t.rooms())
        need_people = len(people) < self.cond.people
        need_rooms = len(rooms) < self.cond.rooms
        if not (need_people or need_rooms):
            return options

        first, rest = [], []
        for a in options:
            if ((need_people and (a.person not in people
                                  or (a.listener and a.listener not in people)
                                  or any(p not in people for p in a.peeking + a.distracted)))
                    or (need_rooms and a.type in (ENTER, MOVE_ROOM) and a.room not in rooms)):
                first.append(a)
            else:
                rest.append(a)
        return first + rest

    def walk(self, tracker: Tracker | None = None) -> Tracker | None:
        """Continue (or start) a story until it meets the conditions; None on a dead end."""
        t = tracker.copy() if tracker is not None else Tracker(self.max_order)
        prog = Progress.of(t.actions)
        while len(t.actions) < self.cond.max_actions:
            if self.step(t, prog) is None:
                return None
            if not self.steered and distance_to_desired(self.cond, t.actions) >= 100:
                return None  # overshot (too many people, rooms or moves): can never be kept
            # (exactly `moves` important actions is necessary, and cheap to test first)
            if (prog.important == self.cond.moves and self._desired(t, prog)
                    and self.rng.random() < STOP_PROBABILITY):
                return t
        return t if self._desired(t, prog) else None

    def _desired(self, t: Tracker, prog: Progress) -> bool:
        """`self.cond.is_desired(t.actions)`, read off the counters kept in step with them (the
        tracker's people are the people the actions name, its rooms the rooms they name)."""
        cond = self.cond
        if (len(t.actions) > cond.max_actions or prog.important != cond.moves
                or len(t.people) != cond.people or len(t.rooms()) != cond.rooms
                or not prog.kinds <= cond.aset.kinds
                or any(g.isdisjoint(prog.kinds) for g in cond.aset.distinguishing)):
            return False
        if cond.asymmetric:
            return 1 <= prog.asymmetric <= cond.max_asymmetric
        return not prog.asymmetric

    def walks(self, n: int, tries_per_story: int = 20) -> list[Tracker]:
        """Up to `n` independent stories meeting the conditions, giving up after
        `tries_per_story` x n walks (fewer stories where the conditions are hard to meet)."""
        out: list[Tracker] = []
        for _ in range(n * tries_per_story):
            if len(out) == n:
                break
            t = self.walk()
            if t is not None:
                out.append(t)
        return out


@functools.lru_cache(maxsize=4096)
def _steered_weights(cond: Conditions, kinds: tuple[str, ...], n_actions: int, important: int,
                     unmet_groups: tuple[frozenset[str], ...]) -> tuple[tuple[str, float], ...]:
    """The steered walk's odds of each kind, given the story so far (the same for every walk
    of a setting, so computed once)."""
    # Slack: steps the story can still spend on actions that fulfil no requirement. As it
    # runs out, the kinds still needed crowd out the rest (entering, leaving, ...).
    needed_important = cond.moves - important
    needed_other = sum(1 for g in unmet_groups if not g <= IMPORTANT)
    slack = cond.max_actions - n_actions - needed_important - needed_other
    pressure = 1.0 if slack > 3 else 3.0 * (4 - max(slack, 0))
    out = []
    for k in kinds:
        w = KIND_WEIGHTS[k]
        if k in IMPORTANT and important >= cond.moves:
            continue
        if any(k in g for g in unmet_groups):
            w *= 3.0 * pressure
        elif k in IMPORTANT:
            w *= pressure
        out.append((k, w))
    return tuple(out)


def sampler_name(steered: bool = True, constrained: bool = True) -> str:
    """How a story was sampled, as recorded in its "sampler" key."""
    return ("steered" if steered else "unsteered") + ("" if constrained else "-unconstrained")


def sample_story(cond: Conditions, rng: random.Random, story_id: Any, max_order: int = 2,
                 max_tries: int = 2000, containers: int = 3,
                 contexts: Sequence[Context] | None = None, steered: bool = True,
                 constrained: bool = True) -> tuple[Story, Tracker]:
    """One story meeting `cond` in a fresh random context (from the offline lexicon, or drawn
    from `contexts`), with the tracker that ran it."""
    if not steered:
        max_tries *= 25  # most uniform walks miss the conditions: overgenerate, then filter
    for _ in range(max_tries):
        ctx = (rng.choice(contexts) if contexts
               else sample_context(rng, cond.people, cond.rooms, containers=containers))
        t = StorySampler(cond, ctx, rng, max_order, steered, constrained).walk()
        if t is not None:
            story = Story(id=story_id, actions=tuple(t.actions), context=ctx.to_json(),
                          extra={"action_set": cond.action_set, "asymmetric": cond.asymmetric,
                                 "conditions": conditions_json(cond),
                                 "sampler": sampler_name(steered, constrained)})
            return story, t
    raise ConditionsUnreachable(f"no story met the conditions in {max_tries} tries: {cond}")


def conditions_json(cond: Conditions) -> dict[str, Any]:
    return {"people": cond.people, "moves": cond.moves, "rooms": cond.rooms,
            "max_actions": cond.max_actions, "max_asymmetric": cond.max_asymmetric}
