"""Who believes a world-state or chit-chat message, and which information wins (SEMANTICS.md).

`MessageRules`, mixed into `exploretom.semantics.tracker.Tracker`, applies a private or public
message
(`_communicate`): it checks the claim against the speaker's belief (the language has no lies,
`_message`) and lets every chain that learns the message judge it (`_adopt`). A chain ignores
a world-state claim when

- it can tell the claim is stale (2026-11-25): its own model of the speaker's belief already
  holds the claim and its own belief is newer;
- it knows its own value is current (2026-11-27): it saw where the object is and has been,
  without a break, where any change would have been seen since (`Tracker._current`), or the
  claim is about her own room (a person always knows which room she is in: a model of her, "Dave
  thinks Anne thinks she is in ...", follows what the mind one level out believes of her room),
  or about who is in the room it has watched since the last of its people came in;
- it knows where the object is not (2026-11-28): it saw the object carried out of a room and
  has been there since without a break (`Tracker._gone`), and the claim puts it in that room or
  in one of its containers;

otherwise the claim wins, even over an earlier message (among claims it cannot judge, the
latest). A person's word on her own room is current when said. The second and third tests
judge the claim against what the receiver saw, so they never depend on who relays it (the first
speaker or anyone passing the claim on); the first judges the speaker's information, so it
applies only where the receiver knows how old that is. The claims kept out of objects'
locations are recorded in `Tracker.kept` (why: "stale", "current" or "gone"), so the trace can
say why.
"""
from __future__ import annotations

from exploretom.semantics.facts import OPEN, Away, Chain, Fact, StoryError
from exploretom.semantics.story import CONTAINER_LOCATION, PRIVATE, ROOM_LOCATION, Action


class MessageRules:
    """The tracker's rules for messages, mixed into `exploretom.semantics.tracker.Tracker`: they read and
    write its state (beliefs, watches, who is where) and call its helpers for observers."""

    def _communicate(self, a: Action, i: int) -> None:
        """Apply a private or public message (the tracker's handler for both)."""
        s = a.person
        if a.type == PRIVATE:
            if a.listener == s:
                raise StoryError(i, a.type, f"{s} cannot tell something privately to themselves")
            w = {s, a.listener}
            room = self.person_room.get(s) or ""
        else:
            room = self._actor_room(a, i)
            w = set(self.people_in(room))
            if len(w) < 2:
                raise StoryError(i, a.type, f"nobody else is in the {room} to hear {s}")
        topic = a.topic
        about = "" if topic.is_abstract else self._message(a, i, s)
        peek, dist = self._check_modifiers(a, i, w)
        observers = (w | peek) - dist
        if topic.is_abstract:
            t = topic.topic
            if t not in self.topics:
                self.topics.append(t)
            world = self.beliefs[()]
            for x in observers | {s}:
                world[("knows", x, t)] = (True, i)
            for c in self._chains(observers, w):
                mine = self._mine(c)
                for x in (w | {c[0]}) if len(c) == 1 else w:
                    mine[("knows", x, t)] = (True, i)
        elif about != "container":  # where a container stands is common knowledge already
            key = ("at" if about == "person" else "loc", topic.entity)
            for c in self._chains(observers, w):
                self._adopt(c, s, key, topic.property, topic.value, i)
        self._record(a, observers, room)

    def _message(self, a: Action, i: int, speaker: str) -> str:
        """Check a world-state claim against the speaker's belief. Returns what it is about:
        "object", "person" or "container"."""
        t = a.topic
        e, value = t.entity, t.value
        if e in self.person_room and e in self.people:
            if t.property != ROOM_LOCATION:
                raise StoryError(i, a.type, f"{e} is a person: a message can say which room "
                                 f"{e} is in, not which container")
            self._check_room_name(a, i, value)
            believed = self.belief((speaker,), ("at", e))
            if not isinstance(believed, str):
                where = f" (only that {e} left the {believed.room})" if believed else ""
                raise StoryError(i, a.type, f"{speaker} does not know which room {e} is "
                                 f"in{where}")
            if believed != value:
                raise StoryError(i, a.type, f"{speaker} believes {e} is in the {believed}, "
                                 f"not in the {value}")
            return "person"
        if e in self.container_room:
            if t.property != ROOM_LOCATION:
                raise StoryError(i, a.type, f"the {e} is a container: a message can say which "
                                 "room it is in, not which container")
            # Where a container stands is common knowledge (containers never move).
            if self.container_room[e] != value:
                raise StoryError(i, a.type, f"the {e} is in the {self.container_room[e]}, not "
                                 f"in the {value}")
            return "container"
        if e not in self.loc_history:
            raise StoryError(i, a.type, f"{e!r} is no person, object or container that has "
                             "appeared in the story before this action")
        if t.property == ROOM_LOCATION:
            self._check_room_name(a, i, value)
        room, container = self.location((speaker,), e)
        believed = container if t.property == CONTAINER_LOCATION else room
        if not believed:
            what = "container" if t.property == CONTAINER_LOCATION else "room"
            if t.property == CONTAINER_LOCATION and container == OPEN and room:
                raise StoryError(i, a.type, f"{speaker} believes the {e} lies in the open in "
                                 f"the {room}, in no container")
            raise StoryError(i, a.type, f"{speaker} does not know which {what} the {e} is in")
        if believed != value:
            raise StoryError(i, a.type, f"{speaker} believes the {e} is in the {believed}, "
                             f"not in the {value}")
        return "object"

    def _check_room_name(self, a: Action, i: int, value: str) -> None:
        if value in self.container_room:
            raise StoryError(i, a.type, f"{value!r} is a container, not a room")
        if value in self.loc_history or value in self.person_room:
            raise StoryError(i, a.type, f"{value!r} is an object or a person, not a room")

    def _adopt(self, chain: Chain, speaker: str, key: Fact, prop: str, value: str,
              i: int) -> None:
        """`chain` hears `speaker` claim that `key`'s `prop` is `value` (SEMANTICS.md, which
        information wins): adopted unless the chain can tell the claim is stale, i.e. its own
        model of the speaker's belief already holds `value` and its own belief is newer, or
        unless it knows its own value is current (2026-11-27: it saw it and has been where any
        change would have been seen since; a person always knows which room they are in), or
        unless it knows the object is not where the claim puts it (2026-11-28: it saw it carried
        out of that room and has been there since). The last two judge the claim, never the
        speaker: they are the same whoever relays it. Among claims it cannot judge, the latest
        wins. Only timestamps the chain itself holds are compared: its own belief's and that of
        its model of the speaker."""
        mine = self._mine(chain)
        cur = mine.get(key)
        receiver = chain[-1] != speaker
        person = key[0] == "at"
        if person and receiver and chain[-1] == key[1]:
            # A person always knows which room they are in: her own belief stays; a model of
            # her believes she knows what the mind one level out believes of her room.
            if len(chain) > 1:
                outer = self.beliefs.get(chain[:-1], {}).get(key)
                if outer is not None:
                    mine[key] = outer
            return
        if cur is not None and _holds(cur[0], prop, value):
            return  # nothing new for this mind
        if person and speaker == key[1]:
            mine[key] = (value, i)  # her word on where she is: current when she says it
            return
        if receiver and len(chain) < self.depth:
            model = self.beliefs.get(chain + (speaker,), {}).get(key)
            if (model is not None and _holds(model[0], prop, value) and cur is not None
                    and cur[1] > model[1]):
                if not person:
                    self.kept[(i, chain, key[1])] = ("stale",)
                return  # it knows what the speaker saw, and has seen something newer since
        if receiver:
            if person:  # it sees who is in its room: a claim that contradicts that is ignored
                room = self._room_in_view(chain)
                if room is not None and (self.person_room.get(key[1]) == room) != (value == room):
                    return
            else:
                w = self._current(chain, key[1])
                if w is not None and (prop == ROOM_LOCATION or w[2]
                                      or self.container_room[value] != w[0]):
                    self.kept[(i, chain, key[1])] = ("current", w[0], w[1])
                    return  # it would have seen any change since it saw the value
                if self.carried_out:  # (nothing was carried out of a room: nothing to check)
                    room = value if prop == ROOM_LOCATION else self.container_room[value]
                    j = self._gone(chain, key[1], room)
                    if j is not None:
                        self.kept[(i, chain, key[1])] = ("gone", room, j)
                        return  # it saw the object carried out of that room, and would have
                        #         seen it brought back
        # Dates in a chain are its outermost person's: how old that person knows the speaker's
        # information to be, else the message's own index (news it cannot date).
        source = self.beliefs.get((speaker,) if chain[0] == speaker else (chain[0], speaker),
                                  {}).get(key)
        ts = source[1] if source is not None and _holds(source[0], prop, value) else i
        new = self._claimed(key, prop, value, cur)
        mine[key] = (new, ts)
        if not person:
            w = self.watch.get((chain, key[1]))
            if w is not None:  # news: the room may still be watched, the container is not
                if w[0] == new[0]:
                    self.watch[(chain, key[1])] = (w[0], w[1], False)
                else:
                    del self.watch[(chain, key[1])]

    def _claimed(self, key: Fact, prop: str, value: str, cur: tuple | None):
        """The belief a claim leaves: a room message keeps a container belief that agrees."""
        if key[0] == "at":
            return value
        if prop == CONTAINER_LOCATION:
            return (self.container_room[value], value)
        room, container = cur[0] if cur else (None, None)
        keep = (container == OPEN and room == value) or (
            bool(container) and self.container_room.get(container) == value)
        return (value, container if keep else None)

    def _room_in_view(self, chain: Chain) -> str | None:
        """The room whose people `chain` knows: everyone of the chain has been in it since the
        last of them came in, the outermost never distracted since (None otherwise)."""
        where = self.person_room
        room = where.get(chain[0])
        if room is None:
            return None
        since = -1
        for p in chain:
            if where.get(p) != room:
                return None
            since = max(since, self.arrived[p])
        return room if self.distracted_at.get(chain[0], -1) < since else None


def _holds(belief, prop: str, value: str) -> bool:
    """Whether a belief (a person's room, or an object's (room, container)) agrees with a claim."""
    if isinstance(belief, tuple) and not isinstance(belief, Away):
        return belief[1 if prop == CONTAINER_LOCATION else 0] == value
    return belief == value


__all__ = ["MessageRules"]
