"""What a story implies, replayed: every chain's beliefs about objects and topics after each step.

`Replay` is a second implementation of the belief rules of SEMANTICS.md, written apart from
`exploretom.semantics.tracker` (it shares no code with it, and keeps only what questions about
objects and
topics need). The trace checker (exploretom.semantics.trace_check) compares a reasoning trace with it, so a
trace that passes is a derivation that two implementations of the rules agree on.
"""
from __future__ import annotations

from functools import cached_property
from typing import Any, Iterable, Sequence

from exploretom.semantics.story import (BROADCAST, CONTAINER_LOCATION, ENTER, LEAVE, MOVE_CONTAINER,
                                        MOVE_ROOM, PRIVATE, UPDATE_STATE, Action)

OPEN = ""  # the container value of an object lying in the open
Chain = tuple


class Replay:
    """Every chain's beliefs about objects and topics after each step of a story.

    beliefs[chain][fact] = (value, date): the date is the step whose change the holder saw, or,
    for news it cannot date, the step of the message. Facts: ("loc", obj) -> (room, container)
    (room None: unknown; container OPEN: in the open, None: unknown), ("state", obj, type) ->
    value, ("knows", person, topic) -> True.

    seen[(chain, obj)] = (room, step, container seen): the last step at which the chain saw where
    the object is. Whether it still knows that is current is read off the story at the message
    (`watching`): where everyone was after each step since, and who was distracted.
    carried_out[(chain, obj)] = (room, step): the chain saw the object carried out of the room;
    while it stays there it knows the object is not there (`knows_gone`, read off the same way).
    """

    def __init__(self, actions: Sequence[Action], max_order: int) -> None:
        self.actions = list(actions)
        # One order more than asked, as the tracker does: a mind at the highest asked order
        # still has a model of a speaker's belief to judge a message by.
        self.max_order = max_order + 1
        self.room: dict[str, str | None] = {}
        self.container_room: dict[str, str] = {}
        self.visible: dict[tuple[str, str], bool] = {}
        self.types: dict[str, list[str]] = {}
        self.people: set[str] = set()
        self.beliefs: dict[Chain, dict[tuple, tuple]] = {(): {}}
        self.world_places: dict[str, dict[int, list[tuple]]] = {}  # obj -> step -> locations
        self.presence: list[tuple[dict, dict]] = []
        self.after: list[dict[Chain, dict]] = []
        self._changes: dict[tuple, dict[int, Any]] = {}
        # what the trace checker worked out once for this story (its readers, its verdicts)
        self.memo: dict[tuple, Any] = {}
        self.ignored: set[tuple] = set()  # (chain, object, step): a stale claim it kept out
        self.seen: dict[tuple, tuple] = {}
        # (chain, object, step) -> (room, since): a claim kept out by a mind that knew its own
        # value was current
        self.kept_current: dict[tuple, tuple] = {}
        self.carried_out: dict[tuple, tuple] = {}
        # (chain, object, step) -> (room, since): a claim kept out by a mind that knew the object
        # was not in that room
        self.kept_gone: dict[tuple, tuple] = {}
        for i, a in enumerate(self.actions):
            before = dict(self.room)
            self.people.update(a.people())
            self._apply(a, i)
            self.presence.append((before, dict(self.room)))
            self.after.append({c: dict(b) for c, b in self.beliefs.items()})

    # -------------------------------------------------------------- helpers
    def _of(self, chain: Chain) -> dict[tuple, tuple]:
        return self.beliefs.setdefault(chain, {})

    def _learners(self, observers: Iterable[str], witnesses: Iterable[str]) -> list[Chain]:
        """Chains that learn an action: the first person observed it and every later one was a
        witness (nobody is believed to peek, nobody is seen to be distracted)."""
        wit = sorted(set(witnesses))
        level = [(p,) for p in sorted(set(observers))]
        out = list(level)
        while level and len(level[0]) < self.max_order:
            level = [c + (q,) for c in level for q in wit if q != c[-1]]
            out.extend(level)
        return out

    def _place(self, obj: str, loc: tuple, i: int) -> None:
        self.beliefs[()][("loc", obj)] = (loc, i)
        self.world_places.setdefault(obj, {}).setdefault(i, []).append(loc)

    def _here(self, room: str | None) -> set[str]:
        return {x for x in self.people if room is not None and self.room.get(x) == room}

    def _see(self, chain: Chain, obj: str) -> None:
        """Seeing an object shows its visible states, as the mind one level out believes them."""
        outer = self.beliefs.get(chain[:-1], {})
        for st in self.types.get(obj, ()):
            if self.visible[(obj, st)] and ("state", obj, st) in outer:
                self._of(chain)[("state", obj, st)] = outer[("state", obj, st)]

    def _look_around(self, chain: Chain, room: str, i: int) -> None:
        outer = self.beliefs.get(chain[:-1], {})
        mine = self._of(chain)
        for obj in self.world_places:
            seen, had = outer.get(("loc", obj)), mine.get(("loc", obj))
            if seen is not None and seen[0] == (room, OPEN):
                mine[("loc", obj)] = seen
                self._see(chain, obj)
                # Seen for certain only if the mind one level out is sure it lies there now.
                if len(chain) == 1 or self.watching(chain[:-1], obj, i):
                    self.seen[(chain, obj)] = (room, i, True)
                else:
                    self.seen.pop((chain, obj), None)
            elif had is not None and had[0] == (room, OPEN):  # expected it here; it is gone
                mine[("loc", obj)] = ((None, None), (seen or had)[1])
                self.seen.pop((chain, obj), None)

    def watching(self, chain: Chain, obj: str, i: int) -> tuple | None:
        """The chain's sighting of the object, if at step i it knows it is still current: every
        person of the chain has stayed in the room where it was seen (after each step since,
        and now) and the outermost one, whose belief it is, was never distracted since."""
        rec = self.seen.get((chain, obj))
        return rec if rec is not None and self._stayed(chain, rec[0], rec[1], i) else None

    def knows_gone(self, chain: Chain, obj: str, i: int) -> tuple | None:
        """(room, step) if at step i the chain knows the object is not in that room: it saw it
        carried out of there at that step, and every person of the chain has stayed there since
        (the outermost never distracted): it would have seen the object brought back."""
        rec = self.carried_out.get((chain, obj))
        return rec if rec is not None and self._stayed(chain, rec[0], rec[1], i) else None

    def _stayed(self, chain: Chain, room: str, since: int, i: int) -> bool:
        """Every person of the chain in `room` after each step from `since` to step i, and the
        outermost one, whose belief it is, never distracted in between."""
        for k in range(since, i):
            after = self.presence[k][1]
            if any(after.get(p) != room for p in chain):
                return False
        if any(self.room.get(p) != room for p in chain):
            return False
        return not any(chain[0] in self.actions[k].distracted for k in range(since + 1, i))

    # -------------------------------------------------------------- actions
    def _apply(self, a: Action, i: int) -> None:
        room = self.room
        peek, dist = set(a.peeking), set(a.distracted)
        if a.type == ENTER:
            w = self._here(a.room) | {a.person}
            room[a.person] = a.room
            for c in self._learners((w | peek) - dist, w):
                if a.person in c:
                    self._look_around(c, a.room, i)
        elif a.type == LEAVE:
            room[a.person] = None
        elif a.type == MOVE_CONTAINER:
            here = room[a.person]
            self.container_room[a.container] = here
            loc = (here, a.container)
            self._place(a.object, loc, i)
            w = self._here(here)
            for c in self._learners((w | peek) - dist, w):
                self._see(c, a.object)
                self._of(c)[("loc", a.object)] = (loc, i)
                self.seen[(c, a.object)] = (here, i, True)
        elif a.type == MOVE_ROOM:
            here = room[a.person]
            if ("loc", a.object) not in self.beliefs[()]:
                self._place(a.object, (here, OPEN), i)  # picked up where it lay
            w = self._here(here)
            for c in self._learners(w, w):  # they see it carried out, not where to
                self._see(c, a.object)
                self._of(c)[("loc", a.object)] = ((None, OPEN), i)
                self.seen.pop((c, a.object), None)
                self.carried_out[(c, a.object)] = (here, i)
            room[a.person] = a.room
            loc = (a.room, OPEN)
            self._place(a.object, loc, i)
            w = self._here(a.room)
            for c in self._learners(w, w):
                self._see(c, a.object)
                self._of(c)[("loc", a.object)] = (loc, i)
                self.seen[(c, a.object)] = (a.room, i, True)
                self.carried_out.pop((c, a.object), None)  # back in sight
                if a.person in c:
                    self._look_around(c, a.room, i)
        elif a.type == UPDATE_STATE:
            here = room[a.person]
            was = self.beliefs[()].get(("loc", a.object))
            if was is None:
                self._place(a.object, (here, OPEN), i)
            true = (here, OPEN) if was is None else was[0]
            # Watchers learn the room; the container too only if it lies in the open (only the
            # one who handles it knows which container it came out of and went back into).
            seen = true if true[1] == OPEN else (here, None)
            types = self.types.setdefault(a.object, [])
            if a.state_type not in types:
                types.append(a.state_type)
            self.visible[(a.object, a.state_type)] = a.visible
            key = ("state", a.object, a.state_type)
            self.beliefs[()][key] = (a.state_value, i)
            w = self._here(here)
            for c in self._learners((w | peek) - dist, w):
                self._see(c, a.object)
                self._of(c)[key] = (a.state_value, i)
                handled = c == (a.person,)
                self._of(c)[("loc", a.object)] = (true if handled else seen, i)
                self.seen[(c, a.object)] = (here, i, handled or seen[1] is not None)
        elif a.type in (PRIVATE, BROADCAST):
            s = a.person
            w = {s, a.listener} if a.type == PRIVATE else self._here(room[s])
            observers = (w | peek) - dist
            t = a.topic
            if t.is_abstract:
                for x in observers | {s}:
                    self.beliefs[()][("knows", x, t.topic)] = (True, i)
                for c in self._learners(observers, w):
                    for x in (w | {c[0]}) if len(c) == 1 else w:
                        self._of(c)[("knows", x, t.topic)] = (True, i)
            elif ("loc", t.entity) in self.beliefs[()]:  # about an object (not a person/container)
                for c in self._learners(observers, w):
                    self._hear(c, s, t.entity, t.property, t.value, i)

    def _hear(self, c: Chain, s: str, obj: str, prop: str, value: str, i: int) -> None:
        """Which information wins: a mind ignores a claim only when it can tell it is stale (its
        model of the speaker already holds the claim, and what it holds itself is newer)."""
        def holds(entry):
            return entry is not None and entry[0][1 if prop == CONTAINER_LOCATION else 0] == value

        key = ("loc", obj)
        mine = self._of(c)
        cur = mine.get(key)
        if holds(cur):
            return
        if c[-1] != s and len(c) < self.max_order:
            model = self.beliefs.get(c + (s,), {}).get(key)
            if holds(model) and cur is not None and cur[1] > model[1]:
                self.ignored.add((c, obj, i))
                return
        # What a mind knows to be current wins over any message (SEMANTICS.md, 2026-11-27): it
        # would have seen the room change, and the container too if it saw that.
        rec = self.watching(c, obj, i) if c[-1] != s else None
        if rec is not None and (prop != CONTAINER_LOCATION or rec[2]
                                or self.container_room[value] != rec[0]):
            self.kept_current[(c, obj, i)] = (rec[0], rec[1])
            return
        # Knowing where the object is not (2026-11-28): it saw it carried out of the room the
        # claim puts it in, and would have seen it brought back. Judged from what the mind saw,
        # never from who speaks.
        gone = self.knows_gone(c, obj, i) if c[-1] != s else None
        if gone is not None and gone[0] == (value if prop != CONTAINER_LOCATION
                                            else self.container_room[value]):
            self.kept_gone[(c, obj, i)] = gone
            return
        source = self.beliefs.get((s,) if c[0] == s else (c[0], s), {}).get(key)
        date = source[1] if holds(source) else i
        if prop == CONTAINER_LOCATION:
            new = (self.container_room[value], value)
        else:
            r, cont = cur[0] if cur is not None else (None, None)
            same_room = (cont == OPEN and r == value) or (
                bool(cont) and self.container_room.get(cont) == value)
            new = (value, cont if same_room else None)
        mine[key] = (new, date)
        old = self.seen.pop((c, obj), None)
        if old is not None and old[0] == new[0]:  # still watching the room, not the container
            self.seen[(c, obj)] = (old[0], old[1], False)

    # -------------------------------------------------------------- reading
    def value(self, step: int, chain: Chain, fact: tuple) -> Any:
        """The chain's value for `fact` after step `step` (-1: before the story)."""
        entry = self.after[step].get(chain, {}).get(fact) if step >= 0 else None
        if fact[0] == "knows":
            return entry is not None
        if entry is None or entry[0] == (None, None):
            return None
        return entry[0]

    def changes(self, chain: Chain, fact: tuple) -> dict[int, Any]:
        """{step: new value} at each step that changes the chain's value of the fact."""
        key = (chain, fact)
        out = self._changes.get(key)
        if out is None:
            out, prev = {}, self.value(-1, chain, fact)
            for i in range(len(self.actions)):
                v = self.value(i, chain, fact)
                if v != prev:
                    out[i] = prev = v
            self._changes[key] = out
        return out

    @cached_property
    def state_type_of(self) -> dict[tuple[str, str], str]:
        return {(a.object, a.state_value): a.state_type for a in self.actions
                if a.type == UPDATE_STATE}
