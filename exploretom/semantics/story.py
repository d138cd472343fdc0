"""Story structures: the JSON interchange format of STORY_FORMAT.md as typed, immutable values.

`parse_story` turns one JSON object into a `Story` and raises `StoryFormatError` naming the
action index and field when the input is malformed; `Story.to_json` writes it back unchanged
(unknown top-level keys included).
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import Any

ENTER = "enter_room"
LEAVE = "leave_room"
MOVE_CONTAINER = "move_object_container"
MOVE_ROOM = "move_object_room"
UPDATE_STATE = "update_object_state"
PRIVATE = "private_communication"
BROADCAST = "broadcast_communication"
ACTION_TYPES = (ENTER, LEAVE, MOVE_CONTAINER, MOVE_ROOM, UPDATE_STATE, PRIVATE, BROADCAST)

ROOM_LOCATION = "room_location"
CONTAINER_LOCATION = "container_location"

# Fields each action type needs, in the JSON spelling.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    ENTER: ("person", "room"),
    LEAVE: ("person", "room"),
    MOVE_CONTAINER: ("person", "object", "container"),
    MOVE_ROOM: ("person", "object", "room"),
    UPDATE_STATE: ("person", "object", "state_type", "state_value", "text", "visible"),
    PRIVATE: ("speaker", "listener", "topic"),
    BROADCAST: ("speaker", "topic"),
}


class StoryFormatError(ValueError):
    """Malformed story input: bad JSON shape, missing field, unknown action type."""


@dataclass(frozen=True, slots=True)
class Topic:
    """What is communicated: an abstract topic, or a claim about where an object is."""

    kind: str  # "abstract" | "world_state"
    topic: str = ""  # abstract: noun phrase, e.g. "election"
    entity: str = ""  # world_state: the object
    property: str = ""  # world_state: ROOM_LOCATION | CONTAINER_LOCATION
    value: str = ""  # world_state: the room or container named

    @builtins.property  # the field `property` shadows the builtin in this class body
    def is_abstract(self) -> bool:
        return self.kind == "abstract"

    def to_json(self) -> dict[str, str]:
        if self.is_abstract:
            return {"kind": "abstract", "topic": self.topic}
        return {"kind": "world_state", "entity": self.entity, "property": self.property,
                "value": self.value}


@dataclass(frozen=True, slots=True)
class Action:
    """One story action. `person` is the actor (the speaker for communications)."""

    type: str
    person: str
    room: str = ""
    object: str = ""
    container: str = ""
    state_type: str = ""
    state_value: str = ""
    text: str = ""
    visible: bool = False
    listener: str = ""
    topic: Topic | None = None
    peeking: tuple[str, ...] = ()
    distracted: tuple[str, ...] = ()
    # A wording, not an event of its own: an object's first placement told as a fact ("The apple
    # is in the box.", as ToMi and Hi-ToM tell theirs) instead of as someone's move. Everyone in
    # the actor's room sees it, as they see any move (docs/exploretom.md, "Stated placements").
    # Out of the repr, which the `lapses` reader hashes: a wording does not change what it misses.
    stated: bool = field(default=False, repr=False)

    @property
    def is_asymmetric(self) -> bool:
        return bool(self.peeking or self.distracted)

    def people(self) -> tuple[str, ...]:
        """Everyone the action names, actor first."""
        names = [self.person]
        if self.listener:
            names.append(self.listener)
        names.extend(self.peeking)
        names.extend(self.distracted)
        return tuple(names)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type}
        if self.type in (PRIVATE, BROADCAST):
            d["speaker"] = self.person
            if self.type == PRIVATE:
                d["listener"] = self.listener
            d["topic"] = self.topic.to_json() if self.topic else None
        else:
            d["person"] = self.person
            for name in REQUIRED_FIELDS[self.type][1:]:
                d[name] = getattr(self, name)
        if self.peeking:
            d["peeking"] = list(self.peeking)
        if self.distracted:
            d["distracted"] = list(self.distracted)
        if self.stated:
            d["stated"] = True
        return d


@dataclass(frozen=True, slots=True)
class Story:
    id: Any
    actions: tuple[Action, ...]
    context: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown top-level keys, copied through

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "actions": [a.to_json() for a in self.actions]}
        if self.context is not None:
            d["context"] = self.context
        for k, v in self.extra.items():
            d.setdefault(k, v)
        return d


def _str_field(raw: dict, name: str, where: str) -> str:
    value = raw.get(name)
    if not isinstance(value, str) or not value.strip():
        raise StoryFormatError(f"{where}: field '{name}' must be a non-empty string")
    return value.strip()


def _names(raw: dict, name: str, where: str) -> tuple[str, ...]:
    value = raw.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise StoryFormatError(f"{where}: field '{name}' must be a list of names")
    return tuple(v.strip() for v in value)


def parse_topic(raw: Any, where: str) -> Topic:
    if not isinstance(raw, dict):
        raise StoryFormatError(f"{where}: field 'topic' must be an object")
    kind = raw.get("kind")
    if kind == "abstract":
        return Topic(kind="abstract", topic=_str_field(raw, "topic", f"{where} topic"))
    if kind == "world_state":
        prop = raw.get("property")
        if prop not in (ROOM_LOCATION, CONTAINER_LOCATION):
            raise StoryFormatError(
                f"{where}: topic 'property' must be {ROOM_LOCATION} or {CONTAINER_LOCATION}, "
                f"got {prop!r}")
        return Topic(kind="world_state", entity=_str_field(raw, "entity", f"{where} topic"),
                     property=prop, value=_str_field(raw, "value", f"{where} topic"))
    raise StoryFormatError(f"{where}: topic 'kind' must be 'abstract' or 'world_state', got {kind!r}")


def parse_action(raw: Any, index: int) -> Action:
    """One action; `index` is 0-based, messages number actions from 1 (as StoryError does)."""
    if not isinstance(raw, dict):
        raise StoryFormatError(f"action {index + 1}: expected an object, got {type(raw).__name__}")
    typ = raw.get("type")
    where = f"action {index + 1} ({typ})"
    if typ not in REQUIRED_FIELDS:
        raise StoryFormatError(f"action {index + 1}: unknown action type {typ!r}")
    peeking = _names(raw, "peeking", where)
    distracted = _names(raw, "distracted", where)
    if typ == MOVE_ROOM and (peeking or distracted):
        raise StoryFormatError(f"{where}: move_object_room takes no peeking/distracted modifiers")
    stated = raw.get("stated", False)
    if not isinstance(stated, bool):
        raise StoryFormatError(f"{where}: field 'stated' must be true or false")
    if stated and (typ != MOVE_CONTAINER or peeking or distracted):
        raise StoryFormatError(f"{where}: only a move_object_container without peeking or "
                               f"distracted modifiers can be stated")
    if typ in (PRIVATE, BROADCAST):
        topic = parse_topic(raw.get("topic"), where)
        listener = _str_field(raw, "listener", where) if typ == PRIVATE else ""
        return Action(type=typ, person=_str_field(raw, "speaker", where), listener=listener,
                      topic=topic, peeking=peeking, distracted=distracted)
    kwargs: dict[str, Any] = {}
    for name in REQUIRED_FIELDS[typ]:
        if name == "visible":
            if not isinstance(raw.get("visible"), bool):
                raise StoryFormatError(f"{where}: field 'visible' must be true or false")
            kwargs["visible"] = raw["visible"]
        else:
            kwargs[name] = _str_field(raw, name, where)
    return Action(type=typ, peeking=peeking, distracted=distracted, stated=stated, **kwargs)


def parse_story(raw: Any) -> Story:
    """A Story from one decoded JSON object; StoryFormatError names what is wrong."""
    if not isinstance(raw, dict):
        raise StoryFormatError(f"a story must be a JSON object, got {type(raw).__name__}")
    if "id" not in raw:
        raise StoryFormatError("story has no 'id'")
    actions = raw.get("actions")
    if not isinstance(actions, list) or not actions:
        raise StoryFormatError("field 'actions' must be a non-empty list")
    context = raw.get("context")
    if context is not None and not isinstance(context, dict):
        raise StoryFormatError("field 'context' must be an object")
    extra = {k: v for k, v in raw.items() if k not in ("id", "actions", "context")}
    return Story(id=raw["id"], actions=tuple(parse_action(a, i) for i, a in enumerate(actions)),
                 context=context, extra=extra)
