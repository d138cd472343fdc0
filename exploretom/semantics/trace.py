"""Reasoning traces: a short plain-English derivation of each question's answer, from the tracker.

A question asks about one *fact* (where the object is, one of its states, whether a person knows a
topic) as held by one *view*: the world, or a chain of people ("what Anne thinks Beth thinks").
The trace replays the story and keeps only the steps where the fact changed for the world or for
some prefix of the view (Anne; Anne about Beth; ...). Each kept step names the action, says how
each person of the view took part in it (did it, saw it, peeked, was distracted, was elsewhere,
heard it, ...) and states the new value for every level that changed:

    Step 3: Beth moved the apple to the basket. Anne was elsewhere, Beth did it. Now the apple is
    in the basket in the kitchen. Anne thinks Beth thinks the apple is in the basket in the kitchen.

and it ends with the view's final value ("So Anne thinks Beth thinks ..."). Its length grows with
the steps that changed the fact, not with the story.

With `short` the trace keeps only the decisive steps: the last step that changed the asked
view's value (with that value alone), and for a belief the world's last change after it, which the
view missed (with how each person took part); memory questions, and a view whose value never
changed, keep the full trace. A false belief then reads in two lines:

    Step 3: The apple is in the basket. Anne saw it. Anne thinks the apple is in the basket in
    the kitchen.
    Step 5: Beth moved the apple to the box. Anne was elsewhere.
    So Anne thinks the apple is in the basket in the kitchen.

With `room_steps` the trace also names every step where a person of the view enters or leaves a
room ("Step 5: Anne left the kitchen. Anne left, Beth saw them leave."), so that a later "Anne was
elsewhere" rests on a line of the trace rather than on a sentence far back in the story.

`exploretom.semantics.trace_check` parses a trace back and re-derives every statement from the
story with its own implementation of the rules; the grammar below is shared with it (the
statuses, the value phrases), the derivations are not.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from exploretom.semantics.questions import CONTAINER, KNOWLEDGE, KNOWS, NOT_KNOWS, ROOM, STATE
from exploretom.semantics.render import join_names, short_clause, the
from exploretom.semantics.story import BROADCAST, ENTER, LEAVE, MOVE_ROOM, PRIVATE, Action
from exploretom.semantics.tracker import OPEN, Tracker

# How a person took part in an action (what the trace says of each person of the view).
DID, CAME_IN, LEFT = "did it", "came in", "left"
SAW, PEEKED, DISTRACTED, ELSEWHERE = "saw it", "peeked", "was distracted", "was elsewhere"
SAW_LEAVE, SAW_ARRIVE = "saw them leave", "saw them arrive"
SAID, HEARD, OVERHEARD, NOT_HEARD = "said it", "heard it", "overheard it", "did not hear it"
STATUSES = (DID, CAME_IN, LEFT, SAW, PEEKED, DISTRACTED, ELSEWHERE, SAW_LEAVE, SAW_ARRIVE, SAID,
            HEARD, OVERHEARD, NOT_HEARD)


def status(a: Action, x: str, before: dict[str, Any], after: dict[str, Any]) -> str:
    """How `x` took part in action `a`, given everyone's room before and after it."""
    if a.type in (PRIVATE, BROADCAST):
        if x == a.person:
            return SAID
        if x in a.peeking:
            return OVERHEARD
        hears = x == a.listener if a.type == PRIVATE else (
            before.get(x) is not None and before.get(x) == before.get(a.person))
        if hears:
            return DISTRACTED if x in a.distracted else HEARD
        return NOT_HEARD
    if a.type == MOVE_ROOM:
        if x == a.person:
            return DID
        if before.get(x) is not None and before.get(x) == before.get(a.person):
            return SAW_LEAVE
        if after.get(x) == a.room:
            return SAW_ARRIVE
        return ELSEWHERE
    if x == a.person and not a.stated:  # a stated placement names no actor: its actor saw it
        return {ENTER: CAME_IN, LEAVE: LEFT}.get(a.type, DID)
    if x in a.peeking:
        return PEEKED
    room = a.room if a.type in (ENTER, LEAVE) else before.get(a.person)
    if room is not None and before.get(x) == room:
        return DISTRACTED if x in a.distracted else SAW
    return ELSEWHERE


# ------------------------------------------------------------------------------------------
# What a question asks: a view (chain of people, () = the world) and a fact


def question_view(q: dict[str, Any], state_type_of: dict[tuple[str, str], str]
                  ) -> tuple[tuple[str, ...], tuple]:
    """(view, fact) of a question. `state_type_of[(object, value)]` names a value's state type."""
    people = tuple(q["people"])
    if q["property"] == KNOWLEDGE:
        return people[:-1], ("knows", people[-1], q["thing"])
    if q["property"] == STATE:
        return people, ("state", q["thing"], state_type_of[(q["thing"], q["state_value"])])
    if q["property"] in (ROOM, CONTAINER):
        return people, ("loc", q["thing"])
    raise ValueError(f"unknown question property {q['property']!r}")


def view_people(view: Sequence[str], fact: tuple) -> tuple[str, ...]:
    """The people whose part in each step the trace states: the view's, then a knowledge
    question's subject."""
    out: list[str] = []
    for p in (*view, fact[1]) if fact[0] == "knows" else view:
        if p not in out:
            out.append(p)
    return tuple(out)


# ------------------------------------------------------------------------------------------
# Value phrases (shared with the checker, which parses them back)


def place_phrase(loc: tuple) -> str:
    """Where a location value puts the object, after 'is' / 'was'."""
    room, container = loc
    if room is None:
        return "being carried to another room"
    if container == OPEN:
        return f"in the open in {the(room)}"
    if container is None:
        return f"somewhere in {the(room)}"
    return f"in {the(container)} in {the(room)}"


def value_phrase(fact: tuple, value: Any, asked: str | None, verb: str = "is") -> str:
    """The value of `fact` for a mind that holds it, e.g. 'the apple is in the box in the kitchen'.
    `asked` is the state value a state question asks about (for the unknown phrase)."""
    if fact[0] == "loc":
        return f"{the(fact[1])} {verb} {place_phrase(value)}"
    if fact[0] == "state":
        return f"{the(fact[1])} {value}"
    return f"{fact[1]} {'knows' if value else 'does not know'} about {the(fact[2])}"


def unknown_phrase(fact: tuple, asked: str | None) -> str:
    """What a mind without a value for `fact` does not know (after its name)."""
    if fact[0] == "loc":
        return f"does not know where {the(fact[1])} is"
    return f"does not know whether {the(fact[1])} {asked}"


def claim(chain: Sequence[str], fact: tuple, value: Any, asked: str | None = None) -> str:
    """One level's value as a sentence body: 'Anne thinks Beth thinks the apple is in ...'."""
    if not chain:
        return "now " + value_phrase(fact, value, asked)
    if value is None:
        return "".join(f"{p} thinks " for p in chain[:-1]) + f"{chain[-1]} " + \
            unknown_phrase(fact, asked)
    return "".join(f"{p} thinks " for p in chain) + value_phrase(fact, value, asked)


def first_place(fact: tuple, value: Any) -> str:
    """Where an object lay before the action that first handled it carried it off."""
    return f"{the(fact[1])} was first {place_phrase(value)}"


def ignores(chain: Sequence[str], speaker: str) -> str:
    """A mind that keeps its belief against a claim it can tell is out of date."""
    return "".join(f"{p} thinks " for p in chain[:-1]) + \
        f"{chain[-1]} ignores it, knowing {speaker}'s news is out of date"


def knows_current(chain: Sequence[str], room: str, since: int) -> str:
    """A mind that keeps its belief against any claim because it knows it is current: everyone
    of the chain has been in the object's room since step `since` (0-based) and the innermost
    would have seen any change (SEMANTICS.md, 2026-11-27)."""
    people = list(dict.fromkeys(chain))
    return "".join(f"{p} thinks " for p in chain[:-1]) + \
        f"{chain[-1]} ignores it: {join_names(people)} {'has' if len(people) == 1 else 'have'} " \
        f"been in {the(room)} since step {since + 1}, so {chain[-1]} would have seen any change"


def knows_gone(chain: Sequence[str], carrier: str, obj: str, room: str, since: int) -> str:
    """A mind that keeps out a claim putting the object in a room it knows the object is not
    in: everyone of the chain saw it carried out of that room at step `since` (0-based) and has
    been there since (SEMANTICS.md, 2026-11-28)."""
    people = list(dict.fromkeys(chain))
    return "".join(f"{p} thinks " for p in chain[:-1]) + \
        f"{chain[-1]} ignores it: {join_names(people)} saw {carrier} carry {the(obj)} out of " \
        f"{the(room)} at step {since + 1} and {'has' if len(people) == 1 else 'have'} been " \
        f"in {the(room)} since"


def sentence(body: str) -> str:
    return body[0].upper() + body[1:] + "."


def conclusion(q: dict[str, Any], view: Sequence[str], fact: tuple, value: Any) -> str:
    """The trace's last sentence: the view's value the answer is read from."""
    asked = q.get("state_value")
    if q["kind"] == "memory_beginning":
        return f"So at the beginning {value_phrase(fact, value, asked, 'was')}."
    if q["kind"] == "memory_before":
        before = f"before step {q['before_action'] + 1}"
        return f"So {before}, {value_phrase(fact, value, asked, 'was')}."
    return f"So {claim(view, fact, value, asked)}."


def memory_value(places: dict[int, list], q: dict[str, Any]) -> tuple:
    """Where a memory question's object was: `places` maps each step that placed the object to
    the locations it was given in that step, in order (the world's, not any mind's)."""
    if q["kind"] == "memory_beginning":
        return places[min(places)][0]
    j = q["before_action"]
    if len(places.get(j, ())) > 1:
        return places[j][-2]
    return places[max(i for i in places if i < j)][-1]


def answer_of(q: dict[str, Any], fact: tuple, value: Any) -> str:
    """The canonical answer a view's final value gives to question `q`."""
    if fact[0] == "loc":
        if value is None:
            raise ValueError("no location is known: the question has no answer")
        return value[0] if q["property"] == ROOM else value[1]
    if fact[0] == "state":
        return "yes" if value == q["state_value"] else "no"
    if q["order"] >= 2:
        return KNOWS if value else NOT_KNOWS
    return "yes" if value else "no"


# ------------------------------------------------------------------------------------------
# Reading the tracker


def _value(beliefs: dict, chain: tuple, fact: tuple) -> Any:
    entry = beliefs.get(chain, {}).get(fact)
    if fact[0] == "knows":
        return bool(entry and entry[0])
    if entry is None:
        return None
    if fact[0] == "loc" and entry[0] == (None, None):
        return None
    return entry[0]


class StoryTracer:
    """Replays a story once through the tracker and writes the trace of any of its questions."""

    def __init__(self, actions: Sequence[Action], max_order: int = 2,
                 room_steps: bool = False, short: bool = False) -> None:
        t = Tracker(max(1, max_order))
        self.room_steps, self.short = room_steps, short
        self.actions = list(actions)
        self.rooms: list[tuple[dict, dict]] = []  # everyone's room before and after each step
        self.snapshots: list[dict] = []  # the tracker's beliefs after each step
        for a in self.actions:
            before = dict(t.person_room)
            t.apply(a)
            self.rooms.append((before, dict(t.person_room)))
            self.snapshots.append({c: dict(b) for c, b in t.beliefs.items()})
        self.tracker = t  # after the last step: generate_questions(tracer.tracker) asks them
        self.state_type_of = {(o, v): st for o, st, v in t.state_values}
        self._memo: dict[tuple, Any] = {}
        self._texts: dict[tuple, str] = {}  # sentences shared by the story's questions
        # The world's locations of each object at each step: two at the step that picks up an
        # object never placed before and carries it to another room (where it was, where it went).
        self.places: dict[str, dict[int, list[tuple]]] = {}
        for obj, history in t.loc_history.items():
            for i, loc in history:
                self.places.setdefault(obj, {}).setdefault(i, []).append(loc)

    def _head(self, i: int, people: tuple[str, ...]) -> str:
        """'Step 4: <the action>. <how each of `people` took part>.'"""
        key = (i, people)
        text = self._texts.get(key)
        if text is None:
            a = self.actions[i]
            text = f"Step {i + 1}: {short_clause(a)}."
            if people:
                before, after = self.rooms[i]
                text += " " + sentence(", ".join(f"{x} {status(a, x, before, after)}"
                                                 for x in people))
            self._texts[key] = text
        return text

    def _ignored(self, chain: tuple, fact: tuple) -> dict[int, str]:
        """{step: sentence} where the chain heard a claim about where the object is and kept
        its own, different belief: it could tell the speaker's news was out of date, it knew
        its own value was current, or it knew the object was not where the claim put it."""
        if fact[0] != "loc":
            return {}
        key = ("ignored", chain, fact)
        out = self._memo.get(key)
        if out is None:
            out = self._memo[key] = {}
            for (i, c, obj), why in self.tracker.kept.items():
                if c == chain and obj == fact[1]:
                    out[i] = sentence(self._why(chain, obj, i, why))
        return out

    def _why(self, chain: tuple, obj: str, i: int, why: tuple) -> str:
        if why[0] == "stale":
            return ignores(chain, self.actions[i].person)
        if why[0] == "current":
            return knows_current(chain, why[1], why[2])
        return knows_gone(chain, self.actions[why[2]].person, obj, why[1], why[2])

    def _changes(self, chain: tuple, fact: tuple) -> dict[int, Any]:
        """{step: new value} at each step that changes the chain's value of the fact."""
        key = (chain, fact)
        out = self._memo.get(key)
        if out is None:
            out, prev = {}, _value({}, chain, fact)
            for i, snap in enumerate(self.snapshots):
                v = _value(snap, chain, fact)
                if v != prev:
                    out[i] = prev = v
            self._memo[key] = out
        return out

    def final(self, chain: tuple, fact: tuple) -> Any:
        return _value(self.snapshots[-1], chain, fact) if self.snapshots else None

    def _world_claims(self, fact: tuple, i: int, upto: int) -> list[str]:
        """The world's location claims of step i (only the pick-up before step `upto`)."""
        locs = self.places.get(fact[1], {}).get(i, [])
        out = [sentence(first_place(fact, v)) for v in locs[:-1]]
        if i < upto:
            out.append(sentence(claim((), fact, locs[-1])))
        return out

    def trace(self, q: dict[str, Any]) -> str:
        view, fact = question_view(q, self.state_type_of)
        # A room and a container question of the same mind share their trace.
        key = ("trace", q["kind"], q.get("before_action"), tuple(view), fact, q.get("state_value"))
        if key not in self._memo:
            self._memo[key] = (self._short_trace if self.short else self._trace)(q, view, fact)
        return self._memo[key]

    def _short_trace(self, q: dict[str, Any], view: tuple, fact: tuple) -> str:
        chain = tuple(view)
        changed = self._changes(chain, fact)
        if q["kind"] in ("memory_beginning", "memory_before") or not changed:
            return self._trace(q, view, fact)
        people = view_people(view, fact)
        d = max(changed)
        if not view and fact[0] == "loc":
            claims = self._world_claims(fact, d, len(self.actions))
        else:
            claims = [sentence(claim(chain, fact, changed[d], q.get("state_value")))]
        lines = [" ".join([self._head(d, people)] + claims)]
        missed = [i for i in self._changes((), fact) if i > d][-1:] if view else []
        # room steps between the decisive step and the missed one: why the view missed it
        moves = {i for i in room_changes(self.rooms, people, missed[0]) if i > d} \
            if self.room_steps and missed else set()
        lines += [self._head(i, people) for i in sorted(moves | set(missed))]
        lines.append(conclusion(q, view, fact, self.final(chain, fact)))
        return "\n".join(lines)

    def _trace(self, q: dict[str, Any], view: tuple, fact: tuple) -> str:
        levels = [tuple(view[:k]) for k in range(len(view) + 1)]
        people = view_people(view, fact)
        asked = q.get("state_value")
        memory = q["kind"] in ("memory_beginning", "memory_before")
        upto = q["before_action"] if q["kind"] == "memory_before" else len(self.actions)
        changes = [self._changes(lv, fact) for lv in levels]
        ignored = [self._ignored(lv, fact) if lv else {} for lv in levels]
        moves = room_changes(self.rooms, people, upto) if self.room_steps else set()
        steps = sorted({i for ch in changes + ignored for i in ch if i < upto} | moves
                       | ({upto} if upto in self.places.get(fact[1], {}) else set()))
        lines = []
        for i in steps:
            claims = []
            for k, ch in enumerate(changes):
                if i in ignored[k]:
                    claims.append(ignored[k][i])
                if i not in ch or (k == 0 and view):
                    continue  # a belief's trace leaves the world's new value to the step's text
                if k == 0 and fact[0] == "loc":
                    claims.extend(self._world_claims(fact, i, upto))
                else:
                    key = (levels[k], fact, ch[i], asked)
                    text = self._texts.get(key)
                    if text is None:
                        text = self._texts[key] = sentence(claim(*key))
                    claims.append(text)
            if i >= upto:  # memory_before: only the pick-up of the asked step
                claims = self._world_claims(fact, i, upto)
            if not claims and not (view and i in changes[0]) and i not in moves:
                continue
            lines.append(" ".join([self._head(i, people)] + claims))
            if q["kind"] == "memory_beginning":
                break
        value = memory_value(self.places[q["thing"]], q) if memory else self.final(tuple(view), fact)
        lines.append(conclusion(q, view, fact, value))
        return "\n".join(lines)

    def answer(self, q: dict[str, Any]) -> str:
        """The answer the tracker's replay gives (what the trace concludes)."""
        view, fact = question_view(q, self.state_type_of)
        if q["kind"] in ("memory_beginning", "memory_before"):
            return answer_of(q, fact, memory_value(self.places[q["thing"]], q))
        return answer_of(q, fact, self.final(tuple(view), fact))


def room_changes(rooms: Sequence[tuple[dict, dict]], people: Sequence[str], upto: int) -> set[int]:
    """The steps before `upto` where one of `people` changes room, given everyone's room before
    and after each step (the steps a trace with room steps names besides the fact's changes)."""
    return {i for i, (before, after) in enumerate(rooms[:upto])
            if any(before.get(x) != after.get(x) for x in people)}


def story_traces(actions: Sequence[Action], questions: Iterable[dict[str, Any]],
                 max_order: int | None = None, room_steps: bool = False,
                 short: bool = False) -> list[str]:
    """The trace of each question of one story (tracked to the highest order asked)."""
    questions = list(questions)
    order = max_order or max([q["order"] for q in questions] + [1])
    tracer = StoryTracer(actions, order, room_steps, short)
    return [tracer.trace(q) for q in questions]


__all__ = ["StoryTracer", "story_traces", "room_changes", "status", "question_view", "view_people",
           "claim", "value_phrase", "unknown_phrase", "place_phrase", "conclusion", "answer_of",
           "ignores", "knows_current", "knows_gone", "STATUSES"]
