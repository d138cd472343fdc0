"""Write stories in Python: each function returns one action in the JSON format.

    from exploretom.semantics.build import enter, leave, put
    story = {"id": "sally-anne", "actions": [enter("Sally", "kitchen"), ...]}
"""
from __future__ import annotations

from typing import Any, Sequence

Action = dict[str, Any]


def _mods(action: Action, peeking: Sequence[str], distracted: Sequence[str]) -> Action:
    if peeking:
        action["peeking"] = list(peeking)
    if distracted:
        action["distracted"] = list(distracted)
    return action


def enter(person: str, room: str, peeking=(), distracted=()) -> Action:
    return _mods({"type": "enter_room", "person": person, "room": room}, peeking, distracted)


def leave(person: str, room: str, peeking=(), distracted=()) -> Action:
    return _mods({"type": "leave_room", "person": person, "room": room}, peeking, distracted)


def put(person: str, obj: str, container: str, peeking=(), distracted=()) -> Action:
    """move_object_container"""
    return _mods({"type": "move_object_container", "person": person, "object": obj,
                  "container": container}, peeking, distracted)


def carry(person: str, obj: str, room: str) -> Action:
    """move_object_room (takes no modifiers)"""
    return {"type": "move_object_room", "person": person, "object": obj, "room": room}


def update(person: str, obj: str, state_value: str, text: str, visible: bool,
           state_type: str | None = None, peeking=(), distracted=()) -> Action:
    st = state_type or "<" + state_value.replace(" ", "_") + ">"
    return _mods({"type": "update_object_state", "person": person, "object": obj,
                  "state_type": st, "state_value": state_value, "text": text,
                  "visible": visible}, peeking, distracted)


def _topic(topic: str | tuple[str, str, str]) -> dict[str, str]:
    if isinstance(topic, str):
        return {"kind": "abstract", "topic": topic}
    entity, prop, value = topic
    return {"kind": "world_state", "entity": entity, "property": prop, "value": value}


def tell(speaker: str, listener: str, topic, peeking=(), distracted=()) -> Action:
    """private_communication; `topic` is a noun phrase or (object, property, value)."""
    return _mods({"type": "private_communication", "speaker": speaker, "listener": listener,
                  "topic": _topic(topic)}, peeking, distracted)


def announce(speaker: str, topic, peeking=(), distracted=()) -> Action:
    """broadcast_communication; `topic` is a noun phrase or (object, property, value)."""
    return _mods({"type": "broadcast_communication", "speaker": speaker,
                  "topic": _topic(topic)}, peeking, distracted)
