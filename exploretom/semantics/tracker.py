"""World state and nested beliefs of every person, updated action by action (SEMANTICS.md).

Beliefs are kept per *chain* of people: `()` is the true world, `("Anne",)` is what Anne
believes, `("Anne", "Beth")` what Anne believes Beth believes, and so on up to `max_order`,
plus one order more, kept only to judge messages: a mind at the highest asked order still has a
model of each speaker's belief (exploretom.semantics.messages).
Each chain maps facts to `(value, ts)`:

- `("loc", obj)`          -> `(room, container)`; room `None` = unknown; container `OPEN` = lying
                             in the open (in no container), `None` = unknown
- `("state", obj, type)`  -> the state value, e.g. `"is salted"` (absent = unknown)
- `("knows", person, t)`  -> `True` when the person heard about abstract topic t (absent = no)
- `("at", person)`        -> the person's room, `Away(room)` ("not in that room, whereabouts
                             unknown") or `None` (world: in no room)

`ts` dates a belief as its holder can: the index of the action whose world change it saw, or,
for news from a message it cannot date, of the message. Who believes a message, and which
information wins, are the rules of `exploretom.semantics.messages`; this module handles every other
action and records what those rules read.

What a mind knows to be current (SEMANTICS.md, 2026-11-27): `watch[(chain, obj)] = (room, j,
container_known)` records that `chain` last saw where the object is at action j, in `room`. The
chain knows that value is current while everyone of the chain has been in that room since j
(`arrived[p] <= j`: entered it at j or before, never left) and its outermost person, whose
knowledge it is, has not been distracted since (nobody sees another's distraction): then any
change would have been observed (`_current`). Likewise `carried_out[(obj, room)] = j` records
the last action that carried the object out of `room`: a chain whose people have all stayed there
since j without a break saw it go and knows it is not there (SEMANTICS.md, 2026-11-28; `_gone`),
for it would have seen it brought back.

Who learns what: an action has witnesses W (the people in the actor's room; for private
communication the speaker and listener), secret peekers K and distracted witnesses D.
Observers O = (W | K) - D. A chain (p1, ..., pn) learns the action when p1 is an observer
and every later pi is a witness: observers believe that exactly the witnesses saw it, nobody
knows about peekers, nobody noticed the distraction, and nobody updates a belief about a
peeker's belief.
"""
from __future__ import annotations

from typing import Iterable

from exploretom.semantics.facts import OPEN, Away, Chain, Fact, Loc, StoryError
from exploretom.semantics.messages import MessageRules
from exploretom.semantics.story import (BROADCAST, CONTAINER_LOCATION, ENTER, LEAVE, MOVE_CONTAINER,
                                        MOVE_ROOM, PRIVATE, ROOM_LOCATION, UPDATE_STATE, Action)


class Tracker(MessageRules):
    """Apply actions one at a time; read the world and any chain's beliefs at any point."""

    def __init__(self, max_order: int = 2) -> None:
        if max_order < 1:
            raise ValueError(f"max_order must be >= 1, got {max_order}")
        self.max_order = max_order
        self.depth = max_order + 1  # orders tracked: one more than asked (see module docstring)
        self.beliefs: dict[Chain, dict[Fact, tuple]] = {(): {}}
        self.person_room: dict[str, str | None] = {}
        self.container_room: dict[str, str] = {}
        self.state_visible: dict[tuple[str, str], bool] = {}
        self.state_types: dict[str, list[str]] = {}  # object -> its state types, in order seen
        self.people: list[str] = []  # in order of first mention
        self.objects: list[str] = []
        self.topics: list[str] = []  # abstract topics
        self.state_values: list[tuple[str, str, str]] = []  # (object, state_type, value) seen
        self.loc_history: dict[str, list[tuple[int, Loc]]] = {}  # change points per object
        self.actions: list[Action] = []
        self._rooms: dict[str, None] = {}  # rooms named by the actions, in order of first mention
        self._chain_lists: dict[tuple[frozenset, frozenset], list[Chain]] = {}  # see _chains
        self.observers: list[frozenset[str]] = []
        self.left_containers: list[str] = []
        self.action_rooms: list[str] = []
        self.arrived: dict[str, int] = {}  # person -> index of the action that put them in
        #                                    their current room
        self.distracted_at: dict[str, int] = {}  # person -> last action they were distracted in
        self.watch: dict[tuple[Chain, str], tuple] = {}  # (chain, obj) -> (room, j, container?)
        # (obj, room) -> the last action that carried the object out of that room
        self.carried_out: dict[tuple[str, str], int] = {}
        # Messages a chain ignored: (index, chain, object) -> ("stale",), ("current", room, j)
        # or ("gone", room, j)
        self.kept: dict[tuple[int, Chain, str], tuple] = {}

    # ------------------------------------------------------------------ reading
    def copy(self) -> "Tracker":
        t = Tracker.__new__(Tracker)
        t.max_order, t.depth = self.max_order, self.depth
        t.beliefs = {c: dict(b) for c, b in self.beliefs.items()}
        t.person_room = dict(self.person_room)
        t.container_room = dict(self.container_room)
        t.state_visible = dict(self.state_visible)
        t.state_types = {o: list(v) for o, v in self.state_types.items()}
        t.people, t.objects, t.topics = list(self.people), list(self.objects), list(self.topics)
        t.state_values = list(self.state_values)
        t.loc_history = {o: list(h) for o, h in self.loc_history.items()}
        t.actions, t.observers = list(self.actions), list(self.observers)
        t._rooms, t._chain_lists = dict(self._rooms), dict(self._chain_lists)
        t.left_containers, t.action_rooms = list(self.left_containers), list(self.action_rooms)
        t.arrived, t.distracted_at = dict(self.arrived), dict(self.distracted_at)
        t.watch, t.kept = dict(self.watch), dict(self.kept)
        t.carried_out = dict(self.carried_out)
        return t

    def belief(self, chain: Iterable[str], fact: Fact):
        """The value `chain` holds for `fact` (None when unknown); chain () is the world."""
        b = self.beliefs.get(chain if type(chain) is tuple else tuple(chain))
        entry = b.get(fact) if b else None
        return entry[0] if entry else None

    def location(self, chain: Iterable[str], obj: str) -> Loc:
        return self.belief(chain, ("loc", obj)) or (None, None)

    def knows(self, chain: Iterable[str], person: str, topic: str) -> bool:
        return bool(self.belief(chain, ("knows", person, topic)))

    def people_in(self, room: str) -> list[str]:
        return [p for p in self.people if self.person_room.get(p) == room]

    def rooms(self) -> list[str]:
        """The rooms the actions enter, leave or carry things to, in order of first mention."""
        return list(self._rooms)

    # ------------------------------------------------------------------ applying
    def apply(self, action: Action) -> None:
        """Apply one action; raise StoryError (and change nothing) if a precondition fails."""
        i = len(self.actions)
        handler = _HANDLERS.get(action.type)
        if handler is None:
            raise StoryError(i, action.type, "unknown action type")
        known = len(self.people)
        self._meet(action.people())
        try:
            handler(self, action, i)  # every handler checks all preconditions before it mutates
        except StoryError:
            for p in self.people[known:]:
                del self.person_room[p]
            del self.people[known:]
            raise
        for p in action.distracted:
            self.distracted_at[p] = i
        if action.type in _ROOM_TYPES:
            self._rooms.setdefault(action.room, None)
        self.actions.append(action)

    def apply_all(self, actions: Iterable[Action]) -> "Tracker":
        for a in actions:
            self.apply(a)
        return self

    # ------------------------------------------------------------------ internals
    def _meet(self, names: Iterable[str]) -> None:
        for n in names:
            if n not in self.person_room:
                self.person_room[n] = None
                self.people.append(n)

    def _chains(self, observers: Iterable[str], witnesses: Iterable[str]) -> list[Chain]:
        """Every chain that learns an action, shortest first (so prefixes update first). The
        same observers and witnesses recur within a story: each list is made once (the order
        of people never changes, so it stays right)."""
        key = (frozenset(observers), frozenset(witnesses))
        out = self._chain_lists.get(key)
        if out is None:
            oset, wset = key
            witnesses = [p for p in self.people if p in wset]
            level = [(p,) for p in self.people if p in oset]
            out = list(level)
            for _ in range(self.depth - 1):
                level = [c + (q,) for c in level for q in witnesses if q != c[-1]]
                out.extend(level)
            self._chain_lists[key] = out
        return out

    def _mine(self, chain: Chain) -> dict[Fact, tuple]:
        b = self.beliefs.get(chain)
        if b is None:
            b = self.beliefs[chain] = {}
        return b

    def _check_modifiers(self, a: Action, i: int, witnesses: set[str]) -> tuple[set, set]:
        if not a.peeking and not a.distracted:
            return _NOBODY, _NOBODY
        peek, dist = set(a.peeking), set(a.distracted)
        if len(peek) != len(a.peeking) or len(dist) != len(a.distracted):
            raise StoryError(i, a.type, "a name is repeated in peeking or distracted")
        if a.person in peek or a.person in dist:
            raise StoryError(i, a.type, f"{a.person} performs the action and cannot also be "
                             "peeking or distracted")
        if peek & dist:
            raise StoryError(i, a.type, f"{', '.join(sorted(peek & dist))} cannot both peek "
                             "and be distracted")
        if peek & witnesses:
            raise StoryError(i, a.type, f"{', '.join(sorted(peek & witnesses))} already "
                             "witness(es) the action and cannot peek at it")
        if dist - witnesses:
            raise StoryError(i, a.type, f"{', '.join(sorted(dist - witnesses))} cannot be "
                             "distracted: not a witness of the action")
        return peek, dist

    def _actor_room(self, a: Action, i: int) -> str:
        room = self.person_room.get(a.person)
        if room is None:
            raise StoryError(i, a.type, f"{a.person} is not in any room")
        return room

    def _check_object_here(self, a: Action, i: int, room: str) -> Loc | None:
        entry = self.beliefs[()].get(("loc", a.object))
        if entry is not None and entry[0][0] != room:
            raise StoryError(i, a.type, f"the {a.object} is in the {entry[0][0]}, not in the "
                             f"{room} where {a.person} is")
        return entry[0] if entry else None

    def _set_world_loc(self, obj: str, loc: Loc, i: int) -> None:
        self.beliefs[()][("loc", obj)] = (loc, i)
        if obj not in self.loc_history:
            self.objects.append(obj)
            self.loc_history[obj] = []
        self.loc_history[obj].append((i, loc))

    def _see(self, chain: Chain, obj: str) -> None:
        """`chain` sees the object: adopt the visible state values its prefix holds."""
        prefix = self.beliefs.get(chain[:-1])
        if not prefix:
            return
        mine = None
        for st in self.state_types.get(obj, ()):
            if self.state_visible[(obj, st)]:
                entry = prefix.get(("state", obj, st))
                if entry is not None:
                    if mine is None:
                        mine = self._mine(chain)
                    mine[("state", obj, st)] = entry

    def _look_around(self, chain: Chain, room: str, i: int) -> None:
        """An entrance seen by `chain`: objects its prefix believes lie in the open in `room`
        are seen there; an object `chain` believed lying there but which is not: room unknown.
        Contents of containers are not visible, so beliefs about them stay. What is seen is
        known to be current when the prefix knows it is (the world always does)."""
        outer = chain[:-1]
        prefix = self.beliefs.get(outer, {})
        mine = self._mine(chain)
        here = (room, OPEN)
        watch = self.watch
        for obj in self.objects:
            key = ("loc", obj)
            seen = prefix.get(key)
            if seen is not None and seen[0] == here:
                mine[key] = seen
                self._see(chain, obj)
                if not outer or self._current(outer, obj) is not None:
                    watch[(chain, obj)] = (room, i, True)
                else:
                    watch.pop((chain, obj), None)
            else:
                cur = mine.get(key)
                if cur is not None and cur[0] == here:
                    mine[key] = ((None, None), seen[1] if seen else cur[1])
                    watch.pop((chain, obj), None)

    def _current(self, chain: Chain, obj: str) -> tuple | None:
        """`chain`'s watch on `obj` (room, j, container seen) if it knows its value is current:
        everyone of the chain in that room since action j, the outermost not distracted since."""
        w = self.watch.get((chain, obj))
        if w is None:
            return None
        room, j = w[0], w[1]
        where, arrived = self.person_room, self.arrived
        for p in chain:  # self._stayed(chain, room, j), inline: this runs at every entrance
            if where.get(p) != room or arrived[p] > j:
                return None
        if self.distracted_at.get(chain[0], -1) > j:
            return None
        return w

    def _gone(self, chain: Chain, obj: str, room: str) -> int | None:
        """The action at which `chain` saw the object carried out of `room`, if it knows the
        object is not there (SEMANTICS.md, 2026-11-28): everyone of the chain has been there
        since (so was there to see it go), the outermost not distracted since, and it has not
        been brought back (they would have seen that: it is not there now)."""
        j = self.carried_out.get((obj, room))
        if j is None or self.beliefs[()][("loc", obj)][0][0] == room:
            return None
        return j if self._stayed(chain, room, j) else None

    def _stayed(self, chain: Chain, room: str, j: int) -> bool:
        """Whether everyone of `chain` has been in `room` since action j (entered it at j or
        before and never left) and its outermost person, whose knowledge it is, has not been
        distracted since (nobody sees another's distraction): the chain would have seen any
        change in that room since j."""
        where, arrived = self.person_room, self.arrived
        for p in chain:
            if where.get(p) != room or arrived[p] > j:
                return False
        return self.distracted_at.get(chain[0], -1) <= j

    def _record(self, a: Action, observers: Iterable[str], room: str = "", left: str = "") -> None:
        self.observers.append(frozenset(observers))
        self.action_rooms.append(room)
        self.left_containers.append(left)

    # ------------------------------------------------------------------ actions
    def _enter(self, a: Action, i: int) -> None:
        p, room = a.person, a.room
        old = self.person_room.get(p)
        if old == room:
            raise StoryError(i, a.type, f"{p} is already in the {room}")
        old_w = set(self.people_in(old)) if old else set()
        new_w = set(self.people_in(room)) | {p}
        peek, dist = self._check_modifiers(a, i, old_w | new_w)
        beliefs = self.beliefs
        if old:  # leaving the old room first: the people there see the person go
            gone = (Away(old), i)
            for c in self._chains((old_w | peek) - dist, old_w):
                mine = beliefs.get(c)
                if mine is None:
                    mine = beliefs[c] = {}
                mine[("at", p)] = gone
        self.person_room[p] = room
        self.arrived[p] = i
        beliefs[()][("at", p)] = (room, i)
        observers = (new_w | peek) - dist
        here = (room, i)
        present = {("at", x): here for x in new_w}
        for c in self._chains(observers, new_w):
            mine = beliefs.get(c)
            if mine is None:
                mine = beliefs[c] = {}
            mine.update(present)
            if p in c:
                self._look_around(c, room, i)
        self._record(a, observers | (old_w - dist), room)

    def _leave(self, a: Action, i: int) -> None:
        p, room = a.person, a.room
        if self.person_room.get(p) != room:
            raise StoryError(i, a.type, f"{p} is not in the {room}")
        w = set(self.people_in(room))
        peek, dist = self._check_modifiers(a, i, w)
        self.person_room[p] = None
        self.beliefs[()][("at", p)] = (None, i)
        observers = (w | peek) - dist
        gone, key, beliefs = (Away(room), i), ("at", p), self.beliefs
        for c in self._chains(observers, w):
            mine = beliefs.get(c)
            if mine is None:
                mine = beliefs[c] = {}
            mine[key] = gone
        self._record(a, observers, room)

    def _move_container(self, a: Action, i: int) -> None:
        room = self._actor_room(a, i)
        cur = self._check_object_here(a, i, room)
        croom = self.container_room.get(a.container)
        if croom is not None and croom != room:
            raise StoryError(i, a.type, f"the {a.container} is in the {croom}, not in the {room} "
                             f"where {a.person} is")
        if a.container in self.loc_history or a.container in self.person_room:
            raise StoryError(i, a.type, f"{a.container!r} is an object or a person, not a container")
        if cur is not None and cur[1] == a.container:
            raise StoryError(i, a.type, f"the {a.object} is already in the {a.container}")
        if a.stated and cur is not None:  # a told fact with nobody moving it: only a first one
            raise StoryError(i, a.type, f"a stated placement must be the first handling of the "
                             f"{a.object}, which was placed before")
        if a.stated and any(r not in (None, room) for r in self.person_room.values()):
            raise StoryError(i, a.type, f"a stated placement needs everyone who is in a room to be "
                             f"in the {room}: a reader could not tell who saw it")
        w = set(self.people_in(room))
        peek, dist = self._check_modifiers(a, i, w)
        self.container_room[a.container] = room
        loc = (room, a.container)
        self._set_world_loc(a.object, loc, i)
        observers = (w | peek) - dist
        watched = (room, i, True)
        for c in self._chains(observers, w):
            self._see(c, a.object)
            self._mine(c)[("loc", a.object)] = (loc, i)
            self.watch[(c, a.object)] = watched
        self._record(a, observers, room)

    def _move_room(self, a: Action, i: int) -> None:
        p, dest = a.person, a.room
        room = self._actor_room(a, i)
        if dest == room:
            raise StoryError(i, a.type, f"{p} is already in the {dest}")
        if dest in self.container_room:
            raise StoryError(i, a.type, f"{dest!r} is a container, not a room")
        cur = self._check_object_here(a, i, room)
        left = cur[1] if cur and cur[1] else ""
        if cur is None:  # first handling: the object was where the actor picked it up
            self._set_world_loc(a.object, (room, OPEN), i)
        old_w = set(self.people_in(room))
        # Departure: the people in the old room see both leave, not where to; while they stay,
        # they know it is not there (they would see it brought back: `_gone`).
        self.carried_out[(a.object, room)] = i
        for c in self._chains(old_w, old_w):
            self._see(c, a.object)
            mine = self._mine(c)
            mine[("at", p)] = (Away(room), i)
            mine[("loc", a.object)] = ((None, OPEN), i)
            self.watch.pop((c, a.object), None)
        self.person_room[p] = dest
        self.arrived[p] = i
        self.beliefs[()][("at", p)] = (dest, i)
        loc = (dest, OPEN)
        self._set_world_loc(a.object, loc, i)
        # Arrival: the people in the destination see the actor come in carrying the object.
        new_w = set(self.people_in(dest))
        watched = (dest, i, True)
        for c in self._chains(new_w, new_w):
            self._see(c, a.object)
            mine = self._mine(c)
            mine[("loc", a.object)] = (loc, i)
            self.watch[(c, a.object)] = watched
            for x in new_w:
                mine[("at", x)] = (dest, i)
            if p in c:
                self._look_around(c, dest, i)
        self._record(a, old_w | new_w, room, left)

    def _update_state(self, a: Action, i: int) -> None:
        room = self._actor_room(a, i)
        cur = self._check_object_here(a, i, room)
        key = ("state", a.object, a.state_type)
        old = self.beliefs[()].get(key)
        if old is not None and old[0] == a.state_value:
            raise StoryError(i, a.type, f"the {a.object} already {a.state_value}")
        w = set(self.people_in(room))
        peek, dist = self._check_modifiers(a, i, w)
        placed_now = cur is None
        if placed_now:  # first appearance of the object: it lies in the open where it is handled
            self._set_world_loc(a.object, (room, OPEN), i)
        types = self.state_types.setdefault(a.object, [])
        if a.state_type not in types:
            types.append(a.state_type)
        self.state_visible[(a.object, a.state_type)] = a.visible
        if (a.object, a.state_type, a.state_value) not in self.state_values:
            self.state_values.append((a.object, a.state_type, a.state_value))
        self.beliefs[()][key] = (a.state_value, i)
        observers = (w | peek) - dist
        true_loc = (room, OPEN) if placed_now else cur
        # Watching tells the room, and the container only when the object lies in the open: the
        # actor alone knows which container it came from and went back to.
        seen_loc = true_loc if true_loc[1] == OPEN else (room, None)
        actor = (a.person,)
        # What was seen is watched from here: the room, and the container when it was seen.
        watched = (room, i, seen_loc[1] is not None)
        for c in self._chains(observers, w):
            self._see(c, a.object)
            mine = self._mine(c)
            mine[key] = (a.state_value, i)
            mine[("loc", a.object)] = (true_loc if c == actor else seen_loc, i)
            self.watch[(c, a.object)] = (room, i, True) if c == actor else watched
        self._record(a, observers, room)


def _holds(belief, prop: str, value: str) -> bool:
    """Whether a belief (a person's room, or an object's (room, container)) agrees with a claim."""
    if isinstance(belief, tuple) and not isinstance(belief, Away):
        return belief[1 if prop == CONTAINER_LOCATION else 0] == value
    return belief == value


_ROOM_TYPES = frozenset({ENTER, LEAVE, MOVE_ROOM})
_NOBODY: frozenset[str] = frozenset()

_HANDLERS = {
    ENTER: Tracker._enter,
    LEAVE: Tracker._leave,
    MOVE_CONTAINER: Tracker._move_container,
    MOVE_ROOM: Tracker._move_room,
    UPDATE_STATE: Tracker._update_state,
    PRIVATE: Tracker._communicate,
    BROADCAST: Tracker._communicate,
}

__all__ = ["Tracker", "StoryError", "Away", "OPEN", "Chain", "Fact", "Loc", "ROOM_LOCATION",
           "CONTAINER_LOCATION"]
