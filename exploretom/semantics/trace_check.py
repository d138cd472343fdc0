"""Checking a reasoning trace (exploretom.semantics.trace): parse it back and re-derive every
statement.

`check_trace` reads the trace's statements (the steps it names, how each person took part, the
values it claims for the world and for each prefix of the asked chain, its conclusion), and
accepts them only if each one is what the story implies, and if no step that changes the asked
fact for one of those minds is missing. A step that changes nothing asked is accepted only where a
person of the view enters or leaves a room (the room steps a trace may name, see
`exploretom.semantics.trace`), with no claim and each person's part stated right. The answer is
then read from the trace's conclusion.

What the story implies is computed by `exploretom.semantics.replay.Replay`, a second implementation
of the
belief rules written apart from `exploretom.semantics.tracker`: a trace written from the tracker that
passes is a derivation that two implementations of the rules agree on, step by step.
"""
from __future__ import annotations

import re
from typing import Any, Sequence

from exploretom.semantics.render import short_clause, the
from exploretom.semantics.replay import OPEN, Chain, Replay
from exploretom.semantics.story import ENTER, LEAVE, MOVE_ROOM, Action
from exploretom.semantics.trace import (STATUSES, answer_of, knows_current, knows_gone,
                                        memory_value, question_view, room_changes, status,
                                        view_people)


class TraceError(ValueError):
    """A trace statement the story does not support (or that cannot be read)."""


# ------------------------------------------------------------------------------------------
# Reading a trace back


def _names(replay: Replay) -> tuple[list[str], dict[str, str], list[tuple[str, str]]]:
    """People (longest name first), rooms and containers (longest first) as the trace writes
    them ('the kitchen' -> 'kitchen')."""
    rooms = {a.room for a in replay.actions if a.type in (ENTER, LEAVE, MOVE_ROOM)}
    rooms |= set(replay.container_room.values())
    return (sorted(replay.people, key=len, reverse=True), {the(r): r for r in rooms if r},
            sorted(((the(c), c) for c in replay.container_room), key=lambda x: -len(x[0])))


def _reader(replay: Replay, fact: tuple, asked: str | None) -> "_Reader":
    """The reader of one asked fact, made once per story."""
    key = ("reader", fact, asked)
    if key not in replay.memo:
        replay.memo[key] = _Reader(replay, fact, asked)
    return replay.memo[key]


class _Reader:
    def __init__(self, replay: Replay, fact: tuple, asked: str | None) -> None:
        self.fact, self.asked = fact, asked
        self.people, self.rooms, self.containers = _names(replay)
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
        """A value phrase of the fact (exploretom.semantics.trace.value_phrase)."""
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
        """(chain, value) of a claim sentence body (exploretom.semantics.trace.claim)."""
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
            claims.append(_read_kept(s, reader, i, replay))
        else:
            claims.append(reader.claim("now " + s[4:] if s.startswith("Now ") else s))
    return i, statuses, pickups, claims


_CURRENT = re.compile(r"(.+) ignores it: .+ (?:has|have) been in (.+) since step (\d+), so "
                      r".+ would have seen any change")
_GONE = re.compile(r"(.+) ignores it: .+ saw .+ carry .+ out of (.+) at step (\d+) and "
                   r"(?:has|have) been in (.+) since")


def _read_kept(s: str, reader: _Reader, i: int, replay: Replay) -> tuple[Chain, tuple]:
    """(chain, ("current", room, since)) of 'Anne ignores it: Anne has been in the kitchen since
    step 5, so Anne would have seen any change' (exploretom.semantics.trace.knows_current), or (chain,
    ("gone", room, since)) of 'Anne ignores it: Anne saw Beth carry the apple out of the kitchen
    at step 7 and has been in the kitchen since' (exploretom.semantics.trace.knows_gone)."""
    m = _CURRENT.fullmatch(s)
    if m is not None and m.group(2) in reader.rooms:
        chain, room, since = reader.chain(m.group(1)), reader.rooms[m.group(2)], int(m.group(3)) - 1
        if s == knows_current(chain, room, since):
            return chain, ("current", room, since)
    m = _GONE.fullmatch(s)
    if m is not None and m.group(2) in reader.rooms and 0 < int(m.group(3)) <= i:
        chain, room, since = reader.chain(m.group(1)), reader.rooms[m.group(2)], int(m.group(3)) - 1
        if s == knows_gone(chain, replay.actions[since].person, reader.fact[1], room, since):
            return chain, ("gone", room, since)
    raise TraceError(f"step {i + 1}: cannot read {s!r}")


def read_trace(trace: str, replay: Replay, q: dict[str, Any]) -> dict[str, Any]:
    """The trace's statements: {"steps": [(step index, statuses, world pick-ups, claims)],
    "conclusion": value}. Raises TraceError where a line cannot be read."""
    view, fact = question_view(q, replay.state_type_of)
    reader = _reader(replay, fact, q.get("state_value"))
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
    stale = {i for lv, obj, i in (*replay.ignored, *replay.kept_current, *replay.kept_gone)
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
            claims += [(lv, ("gone",) + replay.kept_gone[(lv, fact[1], i)])
                       for lv in levels[1:] if (lv, fact[1], i) in replay.kept_gone]
        pickups = places.get(i, [])[:-1] if not view else []
        if not claims and not pickups and not (view and i in changes[0]):
            continue
        before, after = replay.presence[i]
        statuses = [(x, status(replay.actions[i], x, before, after)) for x in names]
        out.append((i, statuses, pickups, claims))
        if kind == "memory_beginning":
            break
    return out


def check_trace(trace: str, replay: Replay, q: dict[str, Any]) -> str:
    """The answer the trace derives, once every statement is checked against the story;
    TraceError names the first statement that is wrong, or the step that is missing."""
    view, fact = question_view(q, replay.state_type_of)
    # A room and a container question of the same mind have the same trace: check it once.
    key = ("verdict", trace, q["kind"], q.get("before_action"), tuple(view), fact,
           q.get("state_value"))
    if key not in replay.memo:
        replay.memo[key] = _derive(trace, replay, q, view, fact)
    return answer_of(q, fact, replay.memo[key])


def _steps_said(got: dict[str, Any]) -> dict[int, tuple]:
    """The trace's steps by story index, once they are in story order and each named once."""
    said = {s[0]: s for s in got["steps"]}
    if [s[0] for s in got["steps"]] != sorted(said):
        raise TraceError("steps are not in story order, or one is named twice")
    return said


def _same_parts(i: int, said: list, story: list) -> None:
    if said != story:
        raise TraceError(f"step {i + 1}: the trace says {said}, the story gives {story}")


def _same_claims(i: int, said: list, story: list) -> None:
    if sorted(map(repr, said)) != sorted(map(repr, story)):
        raise TraceError(f"step {i + 1}: the trace claims {said}, the story gives {story}")


def _derive(trace: str, replay: Replay, q: dict[str, Any], view: Chain, fact: tuple) -> Any:
    got = read_trace(trace, replay, q)
    want = _expected_steps(replay, q, view, fact)
    said = _steps_said(got)
    for i, statuses, pickups, claims in want:
        if i not in said:
            raise TraceError(f"step {i + 1} changes what is asked and is missing")
        _, s_statuses, s_pickups, s_claims = said.pop(i)
        _same_parts(i, s_statuses, statuses)
        if s_pickups != pickups:
            raise TraceError(f"step {i + 1}: where the object first lay is wrong")
        _same_claims(i, s_claims, claims)
    _room_steps_only(said, replay, q, view, fact)
    return _concluded(got, replay, q, view, fact)


def _room_steps_only(said: dict[int, tuple], replay: Replay, q: dict[str, Any], view: Chain,
                     fact: tuple) -> None:
    """The steps a trace names beyond those it must: each must be a room step of the view (a
    person of it enters or leaves) with every part right and no claim."""
    names = view_people(view, fact)
    upto = q["before_action"] if q["kind"] == "memory_before" else len(replay.actions)
    moves = room_changes(replay.presence, names, upto)
    for i, (_, s_statuses, s_pickups, s_claims) in sorted(said.items()):
        if i not in moves or s_pickups or s_claims:
            raise TraceError(f"step {i + 1} changes nothing that is asked")
        before, after = replay.presence[i]
        _same_parts(i, s_statuses, [(x, status(replay.actions[i], x, before, after))
                                    for x in names])


def _concluded(got: dict[str, Any], replay: Replay, q: dict[str, Any], view: Chain,
               fact: tuple) -> Any:
    """The trace's concluded value, once it is the view's value in the story."""
    chain, value = got["conclusion"]
    if q["kind"] in ("memory_beginning", "memory_before"):
        expected = memory_value(replay.world_places[q["thing"]], q)
    else:
        expected = replay.value(len(replay.actions) - 1, tuple(view), fact)
    if chain != tuple(view) or value != expected:
        raise TraceError(f"the conclusion is {chain}: {value!r}, the story gives "
                         f"{tuple(view)}: {expected!r}")
    return value


def check_short_trace(trace: str, replay: Replay, q: dict[str, Any]) -> str:
    """The answer a short trace (`StoryTracer(..., short=True)`) derives: the last step that
    changed the view's value must be named with that value (and only the view's claim), and for
    a belief the world's last change after it, which the view missed, with each person's part and
    no claim; room steps of the view are allowed. Memory questions, and views whose value never
    changed, are checked as full traces."""
    view, fact = question_view(q, replay.state_type_of)
    chain = tuple(view)
    changed = replay.changes(chain, fact)
    if q["kind"] in ("memory_beginning", "memory_before") or not changed:
        return check_trace(trace, replay, q)
    got = read_trace(trace, replay, q)
    said = _steps_said(got)
    full = {s[0]: s for s in _expected_steps(replay, q, view, fact)}
    d = max(changed)
    if d not in said:
        raise TraceError(f"step {d + 1} last changes what is asked and is missing")
    _, statuses, pickups, claims = said.pop(d)
    _, w_statuses, w_pickups, w_claims = full[d]
    _same_parts(d, statuses, w_statuses)
    if pickups != (w_pickups if not view else []):
        raise TraceError(f"step {d + 1}: where the object first lay is wrong")
    _same_claims(d, claims, [c for c in w_claims if c[0] == chain])
    missed = [i for i in replay.changes((), fact) if i > d][-1:] if view else []
    for i in missed:
        if i not in said:
            raise TraceError(f"step {i + 1} changes the world after step {d + 1} and is missing")
        _, statuses, pickups, claims = said.pop(i)
        _same_parts(i, statuses, full[i][1])
        if pickups or claims:
            raise TraceError(f"step {i + 1}: a short trace claims nothing at the step it missed")
    _room_steps_only(said, replay, q, view, fact)
    return answer_of(q, fact, _concluded(got, replay, q, view, fact))


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


__all__ = ["Replay", "TraceError", "check_trace", "check_short_trace", "check_story",
           "read_trace"]
