"""Checking a reasoning trace (exploretom.trace): parse it back and re-derive every statement.

`check_trace` reads the trace's statements (the steps it names, how each person took part, the
values it claims for the world and for each prefix of the asked chain, its conclusion), and
accepts them only if each one is what the story implies, and if no step that changes the asked
fact for one of those minds is missing. The answer is then read from the trace's conclusion.

What the story implies is computed by `Replay`, a second implementation of the belief rules of
SEMANTICS.md written apart from `exploretom.tracker` (it shares no code with it, and keeps only
what questions about objects and topics need): a trace written from the tracker that passes is
a derivation that two implementations of the rules agree on, step by step.
"""
from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Iterable, Sequence

from exploretom.render import short_clause, the
from exploretom.story import (BROADCAST, CONTAINER_LOCATION, ENTER, LEAVE, MOVE_CONTAINER,
                              MOVE_ROOM, PRIVATE, UPDATE_STATE, Action)
from exploretom.trace import (STATUSES, answer_of, knows_current, question_view, status,
                              view_people)

OPEN = ""  # the container value of an object lying in the open
Chain = tuple


class TraceError(ValueError):
    """A trace statement the story does not support (or that cannot be read)."""


# ------------------------------------------------------------------------------------------
# The rules, replayed


class Replay:
    """Every chain's beliefs about objects and topics after each step of a story.

    beliefs[chain][fact] = (value, date): the date is the step whose change the holder saw, or,
    for news it cannot date, the step of the message. Facts: ("loc", obj) -> (room, container)
    (room None: unknown; container OPEN: in the open, None: unknown), ("state", obj, type) ->
    value, ("knows", person, topic) -> True.

    seen[(chain, obj)] = (room, step, container seen): the last step at which the chain saw where
    the object is. Whether it still knows that is current is read off the story at the message
    (`watching`): where everyone was after each step since, and who was distracted.
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
        self._readers: dict[tuple, _Reader] = {}
        self.checked: dict[tuple, Any] = {}  # check_trace's verdicts: value derived
        self.ignored: set[tuple] = set()  # (chain, object, step): a stale claim it kept out
        self.seen: dict[tuple, tuple] = {}
        # (chain, object, step) -> (room, since): a claim kept out by a mind that knew its own
        # value was current
        self.kept_current: dict[tuple, tuple] = {}
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
        if rec is None:
            return None
        room, since = rec[0], rec[1]
        for k in range(since, i):
            after = self.presence[k][1]
            if any(after.get(p) != room for p in chain):
                return None
        if any(self.room.get(p) != room for p in chain):
            return None
        if any(chain[0] in self.actions[k].distracted for k in range(since + 1, i)):
            return None
        return rec

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
            room[a.person] = a.room
            loc = (a.room, OPEN)
            self._place(a.object, loc, i)
            w = self._here(a.room)
            for c in self._learners(w, w):
                self._see(c, a.object)
                self._of(c)[("loc", a.object)] = (loc, i)
                self.seen[(c, a.object)] = (a.room, i, True)
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

    def reader(self, fact: tuple, asked: str | None) -> "_Reader":
        key = (fact, asked)
        if key not in self._readers:
            self._readers[key] = _Reader(self, fact, asked)
        return self._readers[key]

    @cached_property
    def state_type_of(self) -> dict[tuple[str, str], str]:
        return {(a.object, a.state_value): a.state_type for a in self.actions
                if a.type == UPDATE_STATE}

    @cached_property
    def names(self) -> tuple[list[str], dict[str, str], list[tuple[str, str]]]:
        """People (longest name first), rooms and containers (longest first) as the trace
        writes them ('the kitchen' -> 'kitchen')."""
        rooms = {a.room for a in self.actions if a.type in (ENTER, LEAVE, MOVE_ROOM)}
        rooms |= set(self.container_room.values())
        return (sorted(self.people, key=len, reverse=True), {the(r): r for r in rooms if r},
                sorted(((the(c), c) for c in self.container_room), key=lambda x: -len(x[0])))


# ------------------------------------------------------------------------------------------
# Reading a trace back


class _Reader:
    def __init__(self, replay: Replay, fact: tuple, asked: str | None) -> None:
        self.fact, self.asked = fact, asked
        self.people, self.rooms, self.containers = replay.names
        self.obj = the(fact[1]) if fact[0] != "knows" else ""
        self.read: dict[str, tuple[Chain, Any]] = {}
        self.lines: dict[tuple, tuple] = {}

    def name(self, text: str) -> tuple[str, str]:
        """The person `text` starts with (followed by a space), and the rest."""
        for p in self.people:
            if text.startswith(p + " "):
                return p, text[len(p) + 1:]
        raise TraceError(f"expected a person's name at {text[:40]!r}")

    def place(self, text: str) -> tuple:
        if text == "being carried to another room":
            return (None, OPEN)
        for lead, container in (("in the open in ", OPEN), ("somewhere in ", None)):
            if text.startswith(lead) and text[len(lead):] in self.rooms:
                return (self.rooms[text[len(lead):]], container)
        for name, c in self.containers:
            if text.startswith(f"in {name} in ") and text[len(name) + 7:] in self.rooms:
                return (self.rooms[text[len(name) + 7:]], c)
        raise TraceError(f"cannot read the place {text!r}")

    def value(self, text: str, verb: str = "is") -> Any:
        """A value phrase of the fact (exploretom.trace.value_phrase)."""
        f = self.fact
        if f[0] == "loc":
            lead = f"{self.obj} {verb} "
            if not text.startswith(lead):
                raise TraceError(f"expected {lead!r} at {text[:40]!r}")
            return self.place(text[len(lead):])
        if f[0] == "state":
            if not text.startswith(self.obj + " "):
                raise TraceError(f"expected {self.obj!r} at {text[:40]!r}")
            return text[len(self.obj) + 1:]
        for v, verb_ in ((True, "knows"), (False, "does not know")):
            if text == f"{f[1]} {verb_} about {the(f[2])}":
                return v
        raise TraceError(f"cannot read what {f[1]} knows in {text!r}")

    def chain(self, text: str) -> Chain:
        """'Anne thinks Beth' -> ('Anne', 'Beth')."""
        out = []
        while True:
            p, rest = self.name(text + " ")
            out.append(p)
            if not rest:
                return tuple(out)
            if not rest.startswith("thinks "):
                raise TraceError(f"cannot read the people of {text!r}")
            text = rest[len("thinks "):].rstrip()

    def is_value(self, text: str) -> bool:
        f = self.fact
        if f[0] == "knows":
            return text in (f"{f[1]} knows about {the(f[2])}",
                            f"{f[1]} does not know about {the(f[2])}")
        return text.startswith(self.obj + " ")

    def claim(self, text: str) -> tuple[Chain, Any]:
        """(chain, value) of a claim sentence body (exploretom.trace.claim)."""
        if text not in self.read:  # the story's questions share most sentences
            self.read[text] = self._claim(text)
        return self.read[text]

    def _claim(self, text: str) -> tuple[Chain, Any]:
        if text.startswith("now "):
            return (), self.value(text[4:])
        unknown = ("" if self.fact[0] == "knows" else
                   f"does not know where {self.obj} is" if self.fact[0] == "loc" else
                   f"does not know whether {self.obj} {self.asked}")
        chain: list[str] = []
        rest = text
        while True:
            if chain and self.is_value(rest):
                return tuple(chain), self.value(rest)
            p, after = self.name(rest)
            if after.startswith("thinks "):
                chain.append(p)
                rest = after[len("thinks "):]
            elif unknown and after == unknown:
                return tuple(chain) + (p,), None
            else:
                raise TraceError(f"cannot read the claim {text!r}")


def _sentences(text: str) -> list[str]:
    if not text.endswith("."):
        raise TraceError(f"a statement must end with a period: {text[-40:]!r}")
    return [s for s in text[:-1].split(". ")]


def _read_step(line: str, replay: Replay, reader: _Reader, fact: tuple, names: tuple):
    head, sep, rest = line.partition(": ")
    if not sep or not head.startswith("Step ") or not head[5:].isdigit():
        raise TraceError(f"expected 'Step N: ...' at {line[:40]!r}")
    i = int(head[5:]) - 1
    if not 0 <= i < len(replay.actions):
        raise TraceError(f"no step {i + 1} in the story")
    clause = short_clause(replay.actions[i]) + "."
    if not rest.startswith(clause):
        raise TraceError(f"step {i + 1} is not {clause!r}")
    parts = _sentences(rest[len(clause):].strip())
    statuses = []
    if names:
        for item in parts.pop(0).split(", "):
            p, st = reader.name(item)
            if st not in STATUSES:
                raise TraceError(f"step {i + 1}: unknown status {st!r}")
            statuses.append((p, st))
    pickups, claims = [], []
    first = f"{reader.obj[:1].upper()}{reader.obj[1:]} was first "
    stale = f" ignores it, knowing {replay.actions[i].person}'s news is out of date"
    for s in parts:
        if fact[0] == "loc" and s.startswith(first):
            pickups.append(reader.place(s[len(first):]))
        elif fact[0] == "loc" and s.endswith(stale):
            claims.append((reader.chain(s[:-len(stale)]), "ignores it"))
        elif fact[0] == "loc" and " ignores it: " in s:
            claims.append(_read_current(s, reader, i))
        else:
            claims.append(reader.claim("now " + s[4:] if s.startswith("Now ") else s))
    return i, statuses, pickups, claims


_CURRENT = re.compile(r"(.+) ignores it: .+ (?:has|have) been in (.+) since step (\d+), so "
                      r".+ would have seen any change")


def _read_current(s: str, reader: _Reader, i: int) -> tuple[Chain, tuple]:
    """(chain, ("current", room, since)) of 'Anne ignores it: Anne has been in the kitchen since
    step 5, so Anne would have seen any change' (exploretom.trace.knows_current)."""
    m = _CURRENT.fullmatch(s)
    if m is None or m.group(2) not in reader.rooms:
        raise TraceError(f"step {i + 1}: cannot read {s!r}")
    chain, room, since = reader.chain(m.group(1)), reader.rooms[m.group(2)], int(m.group(3)) - 1
    if s != knows_current(chain, room, since):
        raise TraceError(f"step {i + 1}: cannot read {s!r}")
    return chain, ("current", room, since)


def read_trace(trace: str, replay: Replay, q: dict[str, Any]) -> dict[str, Any]:
    """The trace's statements: {"steps": [(step index, statuses, world pick-ups, claims)],
    "conclusion": value}. Raises TraceError where a line cannot be read."""
    view, fact = question_view(q, replay.state_type_of)
    reader = replay.reader(fact, q.get("state_value"))
    names = view_people(view, fact)
    lines = trace.split("\n")
    steps = []
    for line in lines[:-1]:
        key = (line, names)
        if key not in reader.lines:  # the story's questions share many lines
            reader.lines[key] = _read_step(line, replay, reader, fact, names)
        steps.append(reader.lines[key])
    last = lines[-1]
    if not last.startswith("So ") or not last.endswith("."):
        raise TraceError(f"expected the conclusion 'So ...' at {last[:40]!r}")
    body = last[3:-1]
    if q["kind"] == "memory_beginning":
        lead = "at the beginning "
        if not body.startswith(lead):
            raise TraceError(f"expected {lead!r} in {last!r}")
        concluded = ((), reader.value(body[len(lead):], "was"))
    elif q["kind"] == "memory_before":
        lead = f"before step {q['before_action'] + 1}, "
        if not body.startswith(lead):
            raise TraceError(f"expected {lead!r} in {last!r}")
        concluded = ((), reader.value(body[len(lead):], "was"))
    else:
        concluded = reader.claim(body)
    return {"steps": steps, "conclusion": concluded}


# ------------------------------------------------------------------------------------------
# Checking


def _expected_steps(replay: Replay, q: dict[str, Any], view: Chain, fact: tuple):
    """What a trace must state: for every step that changes the fact for the world or a prefix
    of the view, how each person took part, the pick-up, the new values."""
    levels = [tuple(view[:k]) for k in range(len(view) + 1)]
    names = view_people(view, fact)
    kind = q["kind"]
    upto = q["before_action"] if kind == "memory_before" else len(replay.actions)
    places = replay.world_places.get(fact[1], {}) if fact[0] == "loc" else {}
    changes = [replay.changes(lv, fact) for lv in levels]
    out = []
    stale = {i for lv, obj, i in (*replay.ignored, *replay.kept_current)
             if fact[0] == "loc" and lv in levels and obj == fact[1]}
    for i in sorted({i for ch in changes for i in ch} | set(places) | stale):
        if i > upto:
            break
        # The world's new values are stated only when the world is what is asked; a belief's
        # trace still names each step that changed the world (the step says what happened).
        claims = [(lv, ch[i]) for lv, ch in zip(levels, changes)
                  if i in ch and i < upto and (lv or not view)]
        if i in stale:
            claims += [(lv, "ignores it") for lv in levels[1:]
                       if (lv, fact[1], i) in replay.ignored]
            claims += [(lv, ("current",) + replay.kept_current[(lv, fact[1], i)])
                       for lv in levels[1:] if (lv, fact[1], i) in replay.kept_current]
        pickups = places.get(i, [])[:-1] if not view else []
        if not claims and not pickups and not (view and i in changes[0]):
            continue
        before, after = replay.presence[i]
        statuses = [(x, status(replay.actions[i], x, before, after)) for x in names]
        out.append((i, statuses, pickups, claims))
        if kind == "memory_beginning":
            break
    return out


def _memory_value(replay: Replay, q: dict[str, Any]) -> tuple:
    places = replay.world_places[q["thing"]]
    if q["kind"] == "memory_beginning":
        return places[min(places)][0]
    j = q["before_action"]
    if len(places.get(j, ())) > 1:
        return places[j][-2]
    return places[max(i for i in places if i < j)][-1]


def check_trace(trace: str, replay: Replay, q: dict[str, Any]) -> str:
    """The answer the trace derives, once every statement is checked against the story;
    TraceError names the first statement that is wrong, or the step that is missing."""
    view, fact = question_view(q, replay.state_type_of)
    # A room and a container question of the same mind have the same trace: check it once.
    key = (trace, q["kind"], q.get("before_action"), tuple(view), fact, q.get("state_value"))
    if key not in replay.checked:
        replay.checked[key] = _derive(trace, replay, q, view, fact)
    return answer_of(q, fact, replay.checked[key])


def _derive(trace: str, replay: Replay, q: dict[str, Any], view: Chain, fact: tuple) -> Any:
    got = read_trace(trace, replay, q)
    want = _expected_steps(replay, q, view, fact)
    said = {s[0]: s for s in got["steps"]}
    if [s[0] for s in got["steps"]] != sorted(said):
        raise TraceError("steps are not in story order, or one is named twice")
    for i, statuses, pickups, claims in want:
        if i not in said:
            raise TraceError(f"step {i + 1} changes what is asked and is missing")
        _, s_statuses, s_pickups, s_claims = said.pop(i)
        if s_statuses != statuses:
            raise TraceError(f"step {i + 1}: the trace says {s_statuses}, the story gives "
                             f"{statuses}")
        if s_pickups != pickups:
            raise TraceError(f"step {i + 1}: where the object first lay is wrong")
        if sorted(map(repr, s_claims)) != sorted(map(repr, claims)):
            raise TraceError(f"step {i + 1}: the trace claims {s_claims}, the story gives "
                             f"{claims}")
    if said:
        raise TraceError(f"step {min(said) + 1} changes nothing that is asked")
    chain, value = got["conclusion"]
    if q["kind"] in ("memory_beginning", "memory_before"):
        expected = _memory_value(replay, q)
    else:
        expected = replay.value(len(replay.actions) - 1, tuple(view), fact)
    if chain != tuple(view) or value != expected:
        raise TraceError(f"the conclusion is {chain}: {value!r}, the story gives "
                         f"{tuple(view)}: {expected!r}")
    return value


def check_story(actions: Sequence[Action], questions: Sequence[dict[str, Any]],
                traces: Sequence[str], max_order: int | None = None) -> list[str]:
    """The answers the traces of one story's questions derive (TraceError on the first bad
    trace, naming the question)."""
    order = max_order or max([q["order"] for q in questions] + [1])
    replay = Replay(actions, max(1, order))
    out = []
    for q, tr in zip(questions, traces):
        try:
            out.append(check_trace(tr, replay, q))
        except TraceError as e:
            raise TraceError(f"{q['question']!r}: {e}") from None
    return out


__all__ = ["Replay", "TraceError", "check_trace", "check_story", "read_trace"]
