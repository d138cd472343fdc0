"""The context sampler's prompts: the structure of the paper's figures 7 and 8 (a context, then
the state updates of its object) in this project's words, the update judge, and the requests for
name and setting pools. Each asks for JSON in an exact shape, so replies can be checked field by
field."""
from __future__ import annotations

import json
from typing import Any

SYSTEM = ("You help build short stories that test whether readers can keep track of what each "
          "character knows. You answer with JSON only, exactly in the requested shape.")

_CONTEXT_EXAMPLE = {
    "people": [{"name": "Lena", "role": "head baker"}, {"name": "Omar", "role": "delivery driver"}],
    "situation": "Lena and Omar stood at the flour-dusted worktable of the back kitchen, going "
                 "through the morning's orders. Around them, cupboards and bins held the supplies "
                 "they would soon have to sort and put away.",
    "start_room": "back kitchen", "other_room": "storeroom", "object": "order book",
    "containers": ["drawer", "cardboard box", "metal tin"],
    "topics": ["wedding cake order", "new oven", "holiday opening hours"],
}


def context_prompt(setting: str, names: list[str], people: int, containers: int,
                   topics: int) -> list[dict[str, str]]:
    user = f"""Invent the opening situation of a short story: {people} people are together in one room, close enough to see and hear one another. Later in the story they will walk between rooms, put an object away in containers and chat, so the situation has to make all of that believable. Do not state outright that they can see each other; let it follow from the scene.

Set it in {setting}. Names you may use: {", ".join(names)}. Choose other first names if they fit the setting better.

Reply with one JSON object with these fields:
- "people": exactly {people} objects {{"name": a single first name, "role": a few words saying who they are, no article}}
- "situation": at most two sentences placing all {people} people, by name, in the starting room
- "start_room": the room where the story starts
- "other_room": one other nearby room they could plausibly walk to
- "object": one concrete, portable, singular thing that a person could carry and put away (a ladle, a stapler, a harmonica, a tin of paint, ...); be inventive, but no vase or microphone and no long description
- "containers": exactly {containers} different opaque containers (you cannot see inside them) that belong in this setting and are big enough for the object
- "topics": exactly {topics} different subjects they could chat about, each a short noun phrase

Write rooms, the object, containers and topics in lower case, without an article, without brackets, and without alternatives such as "a box or a bag".

Example of the shape for two people and three containers and topics:
{json.dumps(_CONTEXT_EXAMPLE)}"""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def updates_prompt(record: dict[str, Any], visible: int, invisible: int) -> list[dict[str, str]]:
    obj = record["objects"][0]
    example = [
        {"text": "{person} tore the cover off the order book.",
         "state_value": "has its cover torn off", "visible": True},
        {"text": "{person} wrote a secret code on the last page of the order book.",
         "state_value": "contains a secret code", "visible": False},
    ]
    user = f"""A story takes place in {record["description"]} (rooms: {", ".join(record["rooms"])}). One character will change the state of the {obj["name"]}, which may lie in the open or in one of these containers: {", ".join(obj["containers"])}.

Propose {visible} visible and {invisible} invisible changes to the {obj["name"]}:
- visible: anyone who looks at the {obj["name"]} afterwards can tell it changed (painted, dented, wrapped in paper);
- invisible: looking at it afterwards does not reveal the change; only someone who watched it happen, or was told, knows (poisoned, switched off, emptied, signed on an inside page).
Every change must leave the {obj["name"]} where it is, in one piece and still recognisably the same object: do not move it, hide it, eat it, break it apart or throw it away.

Each change is an object with:
- "text": one past-tense sentence that starts with the placeholder {{person}} for whoever does it, names "the {obj["name"]}", and uses no he/she/his/her
- "state_value": the words that finish the question "Does Anne believe that the {obj["name"]} ...?", starting with is, has, contains, holds, smells, tastes or shows
- "visible": true or false

Reply with one JSON object {{"updates": [...]}}. Example of the shape, for an order book:
{json.dumps({"updates": example})}"""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


JUDGE_SYSTEM = ("You review material for a story generator and answer with JSON only. Be "
                "strict: reject anything doubtful.")


def judge_update_prompt(record: dict[str, Any], update: dict[str, Any]) -> list[dict[str, str]]:
    obj = record["objects"][0]["name"]
    kind = "VISIBLE" if update["visible"] else "INVISIBLE"
    user = f"""A story generator will use the event below in a story set in {record["description"]}. It assumes the following about the event: when it is marked VISIBLE, anyone who sees the {obj} afterwards notices the change; when it is marked INVISIBLE, nobody can notice it by looking at the {obj} afterwards, and only witnesses or people who are told know about it.

Event: "{update["text"].replace("{person}", "Anne")}"
Marked: {kind}
Claimed result: the {obj} {update["state_value"]}

Answer these questions:
- "plausible": could a person in this setting really do this to the {obj}?
- "visibility_correct": is the marking {kind} right?
- "object_stays": does the {obj} stay where it was, in one piece, still the same object (not moved, hidden, eaten, destroyed, taken apart or thrown away)?
- "state_matches": is "the {obj} {update["state_value"]}" true right after the event, and does it read as a correct English sentence?

Reply with one JSON object: {{"plausible": true/false, "visibility_correct": true/false, "object_stays": true/false, "state_matches": true/false, "reason": "one short sentence"}}"""
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def names_prompt(size: int) -> list[dict[str, str]]:
    user = (f"Write {size} different first names, varied in origin and gender, each a single "
            "capitalised word without accents. Reply with a JSON array of strings only.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def settings_prompt(size: int) -> list[dict[str, str]]:
    user = (f"Write {size} different everyday places where a small group of people can be in the "
            "same spot, seeing and hearing one another, such as \"a bakery\", \"a fire station\" "
            "or \"a student flat\". Keep each one a short noun phrase that starts with a or an. "
            "Reply with a JSON array of strings only.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
