"""Story contexts sampled with an LLM (ExploreToM paper, section 2.1 and appendix C.1).

The offline lexicon (`exploretom/data/contexts.json`) stays the default source of contexts; this
module makes more with a model, in the paper's structure:

1. pools of first names and of settings: the lexicon's, or asked from the model once
   (`--pool llm`, kept in `<output>.pools.json` so a re-run asks the same prompts);
2. one call per context, seeded from the pools (a setting and suggested names): characters with
   roles, a two-sentence situation, a starting room, one alternative room, one object, opaque
   containers that can hold it, and chit-chat topics;
3. one call per context proposing visible and invisible state updates of the object, each a
   sentence with a `{person}` placeholder and a `state_value` completing
   "Does X believe that the <object> ...?";
4. one judge call per proposed update; only updates the judge finds plausible, correctly
   visible or invisible, consistent with their state value, and leaving the object where it is
   and in one piece are kept.

Each context is one JSON line in the schema of one setting of the lexicon (`id, description,
roles, rooms, topics, objects[{name, containers, state_updates}]`) plus `people [{name, role}]`,
`situation` and `source {model, judge_model}`. Every reply is validated (`context_problems`);
rejected contexts go to `<output>.failures.jsonl` with their reason, so a re-run neither loses
nor repeats any attempt, and the command keeps drawing new attempts until `-n` contexts are
written or `--max-attempts` is spent. All requests of a stage go to the backend as one batch.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from pydantic import ValidationError
from tqdm.auto import tqdm

from eval.backends.base import Backend, Completion, GenerationConfig
from exploretom.jsonl import Appender, InputError, read_jsonl, resume
from exploretom.lexicon import Context, StateUpdate, load_lexicon
from exploretom.llm_backend import add_backend_arguments, backends_from_args, close_backends
from exploretom.llm_json import (ReplyError, StrictReply, completion_text,
                                 describe_validation_error, parse_json_reply, parse_model,
                                 parse_string_list)

# -- validation ------------------------------------------------------------------------------------
# state_value completes "Does Anne believe that the <object> ...?", so it opens with a verb
# in the third person singular present.
STATE_VERBS = {"is", "has", "contains", "holds", "smells", "tastes", "plays", "shows", "opens",
               "belongs"}
ARTICLES = ("a ", "an ", "the ")
# A container someone outside the room could see into breaks the false-belief premise.
SEE_THROUGH = {"glass", "jar", "tray", "shelf", "shelves", "table", "bowl", "basket", "mesh", "net",
               "clear", "transparent", "open", "rack", "vase", "bucket", "counter", "hook", "plate",
               "dish", "cup", "windowsill", "see-through"}
# Any person may perform any update, and names carry no gender here.
GENDERED = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}
# Words that cannot follow the "the" the renderer puts before rooms, containers and topics.
NOT_AFTER_THE = {"a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "this", "that",
                 "these", "those", "some", "every", "each", "no", "today's", "tomorrow's",
                 "yesterday's", "tonight's"}
PLURAL_ONLY = {"goggles", "scissors", "shears", "glasses", "spectacles", "headphones", "earphones",
               "trousers", "jeans", "shorts", "tongs", "pliers", "tweezers", "binoculars", "gloves",
               "boots", "shoes", "socks", "earrings", "chopsticks", "clippers", "keys"}
A_BEFORE_VOWEL_LETTER = {"one", "once", "unit", "uniform", "union", "usb", "user", "useful",
                         "european", "u-shaped", "ukulele"}
AN_BEFORE_CONSONANT_LETTER = {"hour", "hourly", "honest", "heir", "honour", "honor", "herb", "mp3",
                              "x-ray", "sd"}
SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
STATE_TYPE = re.compile(r"<[a-z][a-z0-9]*(_[a-z0-9]+)*>")
MAX_SITUATION_CHARS = 700
MAX_SITUATION_SENTENCES = 3
MAX_PHRASE_WORDS = 8

Problem = tuple[str, str]  # (reason slug to count by, message naming the field)


def _words(phrase: str) -> list[str]:
    return re.findall(r"[a-z0-9'-]+", phrase.lower())


def _contains_phrase(haystack: str, needle: str) -> bool:
    hay, nee = _words(haystack), _words(needle)
    return bool(nee) and any(hay[k:k + len(nee)] == nee for k in range(len(hay) - len(nee) + 1))


def _is_name(name: str) -> bool:
    return (len(name) >= 2 and name[0].isupper() and name[1:] == name[1:].lower()
            and all(c.isalpha() or c in "-'" for c in name))


def _article_problems(reason: str, where: str, text: str) -> list[Problem]:
    out = []
    for article, word in re.findall(r"\b(a|an|A|An) ([A-Za-z0-9'-]+)", text):
        w = word.lower()
        vowel = w[0] in "aeiou"
        if w in A_BEFORE_VOWEL_LETTER or w.startswith(("uni", "use")):
            vowel = False
        if w in AN_BEFORE_CONSONANT_LETTER:
            vowel = True
        if (article.lower() == "an") != vowel:
            out.append((reason, f"{where}: article '{article} {word}' in {text!r}"))
    return out


def _phrase_problems(reason: str, where: str, phrase: Any) -> list[Problem]:
    """Rooms, containers, topics and object names are rendered as 'the <phrase>'."""
    if not isinstance(phrase, str) or not phrase.strip():
        return [(reason, f"{where}: expected a non-empty string, got {phrase!r}")]
    out = []
    if phrase != phrase.lower():
        out.append((reason, f"{where}: {phrase!r} is not lower case"))
    if phrase != " ".join(phrase.split()):
        out.append((reason, f"{where}: {phrase!r} has stray whitespace"))
    if phrase.split(" ", 1)[0].lower() in NOT_AFTER_THE:
        out.append((reason, f"{where}: {phrase!r} cannot follow 'the'"))
    if any(c in phrase for c in "()[]{}/;:\"") or " or " in f" {phrase} ":
        out.append((reason, f"{where}: {phrase!r} has brackets, punctuation or alternatives"))
    if len(phrase.split()) > MAX_PHRASE_WORDS:
        out.append((reason, f"{where}: {phrase!r} is longer than {MAX_PHRASE_WORDS} words"))
    return out


def _list_problems(reason: str, where: str, items: Any, exact: int | None,
                   minimum: int = 1) -> list[Problem]:
    if not isinstance(items, list):
        return [("schema", f"{where}: expected a list, got {type(items).__name__}")]
    if exact is not None and len(items) != exact:
        return [(reason, f"{where}: {len(items)} entries, expected {exact}")]
    if len(items) < minimum:
        return [(reason, f"{where}: {len(items)} entries, need at least {minimum}")]
    out = []
    seen: set[str] = set()
    for k, item in enumerate(items):
        out += _phrase_problems(reason, f"{where}[{k}]", item)
        if isinstance(item, str):
            if item.lower() in seen:
                out.append((reason, f"{where}: duplicate {item!r}"))
            seen.add(item.lower())
    return out


def update_problems(update: Any, obj_name: str, where: str = "update") -> list[Problem]:
    """Every defect of one state update (`state_type, state_value, text, visible`)."""
    keys = {"state_type", "state_value", "text", "visible"}
    if not isinstance(update, dict) or set(update) != keys:
        return [("update_schema", f"{where}: keys must be exactly {sorted(keys)}")]
    if not all(isinstance(update[k], str) for k in ("state_type", "state_value", "text")):
        return [("update_schema", f"{where}: state_type, state_value and text must be strings")]
    out: list[Problem] = []
    state_type, value, text = update["state_type"], update["state_value"], update["text"]
    if not isinstance(update["visible"], bool):
        out.append(("update_schema", f"{where}.visible: must be true or false"))
    if not STATE_TYPE.fullmatch(state_type):
        out.append(("update_state_type", f"{where}.state_type: {state_type!r} is not <snake_case>"))
    if value.split(" ", 1)[0] not in STATE_VERBS:
        out.append(("update_state_value",
                    f"{where}.state_value: {value!r} must start with one of {sorted(STATE_VERBS)}"))
    if value != value.strip().rstrip(".?!") or "?" in value or len(value.split()) > 12:
        out.append(("update_state_value", f"{where}.state_value: {value!r} must be a short "
                                          "phrase without final punctuation"))
    if not text.startswith("{person} ") or text.count("{person}") != 1:
        out.append(("update_text", f"{where}.text: {text!r} must start with '{{person}} ' and "
                                   "name {person} once"))
    if text.replace("{person}", "").count("{") or text.count("}") != 1:
        out.append(("update_text", f"{where}.text: {text!r} has braces other than {{person}}"))
    if not re.search(rf"\bthe {re.escape(obj_name)}\b", text):
        out.append(("update_text", f"{where}.text: {text!r} does not name 'the {obj_name}'"))
    if not text.endswith(".") or re.search(r"[.!?] ", text) or len(text) > 200:
        out.append(("update_text", f"{where}.text: {text!r} must be one short sentence ending "
                                   "with '.'"))
    gendered = GENDERED & set(_words(text))
    if gendered:
        out.append(("update_pronoun", f"{where}.text: {text!r} uses gendered pronoun(s) "
                                      f"{sorted(gendered)}"))
    out += _article_problems("update_article", f"{where}.text", text)
    out += _article_problems("update_article", f"{where}.state_value", value)
    return out


def _object_problems(where: str, obj: Any, rooms: list, containers: int | None,
                     check_updates: bool, min_visible: int, min_invisible: int) -> list[Problem]:
    keys = {"name", "containers", "state_updates"}
    if not isinstance(obj, dict) or not keys <= set(obj):
        return [("schema", f"{where}: must be an object with keys {sorted(keys)}")]
    name = obj["name"]
    out = _phrase_problems("object", f"{where}.name", name)
    if out:
        return out
    if _words(name)[-1:] and _words(name)[-1] in PLURAL_ONLY and not name.startswith("pair of "):
        out.append(("object", f"{where}.name: {name!r} is plural; name it 'pair of {name}'"))
    box = obj["containers"]
    out += _list_problems("containers", f"{where}.containers", box, containers)
    if isinstance(box, list):
        for k, c in enumerate(box):
            if not isinstance(c, str):
                continue
            see_through = SEE_THROUGH & set(_words(c))
            if see_through:
                out.append(("containers", f"{where}.containers[{k}]: {c!r} is not an opaque "
                                          f"container ({', '.join(sorted(see_through))})"))
            if c in rooms:
                out.append(("containers", f"{where}.containers[{k}]: {c!r} is also a room"))
        for place in [*rooms, *box]:
            if isinstance(place, str) and _contains_phrase(name, place):
                out.append(("object", f"{where}.name: {name!r} contains the room or container "
                                      f"name {place!r}"))
    if not check_updates:
        return out
    updates = obj["state_updates"]
    if not isinstance(updates, list):
        return out + [("schema", f"{where}.state_updates: expected a list")]
    for k, u in enumerate(updates):
        out += update_problems(u, name, f"{where}.state_updates[{k}]")
    good = [u for u in updates if isinstance(u, dict) and isinstance(u.get("visible"), bool)]
    for key in ("state_type", "state_value"):
        values = [u.get(key) for u in good]
        for v in {v for v in values if values.count(v) > 1}:
            out.append(("state_updates", f"{where}.state_updates: duplicate {key} {v!r}"))
    visible = sum(u["visible"] for u in good)
    invisible = len(good) - visible
    if visible < min_visible or invisible < min_invisible:
        out.append(("too_few_updates", f"{where}.state_updates: {visible} visible and "
                                       f"{invisible} invisible, need at least {min_visible} and "
                                       f"{min_invisible}"))
    return out


def context_problems(record: Any, *, people: int | None = None, containers: int | None = None,
                     topics: int | None = None, rooms: int | None = None,
                     min_visible: int = 1, min_invisible: int = 1,
                     check_updates: bool = True) -> list[Problem]:
    """Every defect of one context record; counts given as None are only checked for >= 1.

    The record is the lexicon's setting schema plus `people`, `situation` and `source`; the
    rules are the lexicon's (tests/exploretom/test_lexicon.py) where they apply to one sampled
    context: every string is rendered into fixed sentence templates, so each rule protects a
    sentence that would otherwise come out wrong."""
    keys = {"id", "description", "roles", "rooms", "topics", "objects", "people", "situation"}
    if not isinstance(record, dict):
        return [("schema", f"expected a JSON object, got {type(record).__name__}")]
    missing = keys - set(record)
    if missing:
        return [("schema", f"missing field(s) {', '.join(sorted(missing))}")]
    out: list[Problem] = []
    if not isinstance(record["id"], str) or not SNAKE.fullmatch(record["id"]):
        out.append(("schema", f"id: {record['id']!r} is not snake_case"))
    desc = record["description"]
    if not isinstance(desc, str) or not desc.startswith(ARTICLES) or len(desc) > 120:
        out.append(("description", f"description: {desc!r} must be a short noun phrase "
                                   "starting with a/an/the"))
    else:
        out += _article_problems("description", "description", desc)

    ppl = record["people"]
    if not isinstance(ppl, list) or not all(
            isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("role"), str)
            for p in ppl):
        return out + [("schema", "people: expected a list of {name, role} objects")]
    if people is not None and len(ppl) != people:
        out.append(("people", f"people: {len(ppl)} people, expected {people}"))
    if not ppl:
        out.append(("people", "people: empty"))
    names = [p["name"] for p in ppl]
    for k, p in enumerate(ppl):
        if not _is_name(p["name"]):
            out.append(("people", f"people[{k}].name: {p['name']!r} is not one capitalised "
                                  "first name"))
        role = p["role"]
        if not role.strip() or role.lower().startswith(ARTICLES) or len(role) > 80 \
                or role != " ".join(role.split()):
            out.append(("people", f"people[{k}].role: {role!r} must be a short phrase with "
                                  "no article"))
    if len({n.lower() for n in names}) != len(names):
        out.append(("people", f"people: duplicate names in {names}"))
    if record["roles"] != [p["role"] for p in ppl]:
        out.append(("schema", "roles: must list the people's roles in order"))

    out += _list_problems("rooms", "rooms", record["rooms"], rooms)
    out += _list_problems("topics", "topics", record["topics"], topics)
    room_list = record["rooms"] if isinstance(record["rooms"], list) else []
    for name in names:
        for field_name in ("rooms", "topics"):
            for phrase in record[field_name] if isinstance(record[field_name], list) else []:
                if isinstance(phrase, str) and _contains_phrase(phrase, name):
                    out.append((field_name, f"{field_name}: {phrase!r} names the character {name}"))

    situation = record["situation"]
    if not isinstance(situation, str) or not situation.strip():
        out.append(("situation", "situation: empty"))
    else:
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", situation.strip()) if s]
        if len(situation) > MAX_SITUATION_CHARS or len(sentences) > MAX_SITUATION_SENTENCES:
            out.append(("situation", f"situation: {len(sentences)} sentences, "
                                     f"{len(situation)} characters; expected a short paragraph"))
        absent = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", situation)]
        if absent:
            out.append(("situation", f"situation: does not mention {', '.join(absent)}"))

    objects = record["objects"]
    if not isinstance(objects, list) or not objects:
        return out + [("schema", "objects: expected a non-empty list")]
    for k, obj in enumerate(objects):
        out += _object_problems(f"objects[{k}]", obj, room_list, containers, check_updates,
                                min_visible, min_invisible)
    return out


def context_from_record(record: dict[str, Any], people: int | None = None,
                        rooms: int | None = None, rng: random.Random | None = None) -> Context:
    """A sampler `Context` from one validated record: its first `people` characters and first
    `rooms` rooms (the starting room first), the first object and its containers."""
    ppl = record["people"][:people] if people else record["people"]
    obj = record["objects"][0] if rng is None else rng.choice(record["objects"])
    return Context(
        setting=record["id"], description=record["description"],
        people=tuple(p["name"] for p in ppl), roles=tuple(p["role"] for p in ppl),
        rooms=tuple(record["rooms"][:rooms] if rooms else record["rooms"]),
        object=obj["name"], containers=tuple(obj["containers"]), topics=tuple(record["topics"]),
        state_updates=tuple(StateUpdate(**u) for u in obj["state_updates"]))


def read_contexts(path: str | Path) -> list[dict[str, Any]]:
    """The context records of a `contexts` output file, each checked; InputError names the
    file, line and field of the first defect."""
    out = []
    for n, record in enumerate(read_jsonl(path), 1):
        problems = context_problems(record)
        if problems:
            raise InputError(f"{path}: context {n} ({record.get('id')!r}): {problems[0][1]}")
        out.append(record)
    if not out:
        raise InputError(f"{path}: no contexts")
    return out


# -- replies ---------------------------------------------------------------------------------------
class PersonReply(StrictReply):
    name: str
    role: str


class ContextReply(StrictReply):
    people: list[PersonReply]
    situation: str
    start_room: str
    other_room: str
    object: str
    containers: list[str]
    topics: list[str]


class UpdateReply(StrictReply):
    text: str
    state_value: str
    visible: bool


class UpdateVerdict(StrictReply):
    plausible: bool
    visibility_correct: bool
    object_stays: bool
    state_matches: bool
    reason: str = ""


def _clean(text: str) -> str:
    return " ".join(text.split())


def _phrase(text: str) -> str:
    """'The Back Kitchen.' -> 'back kitchen': the form the templates put after 'the'."""
    text = _clean(text).strip(" .,;:").lower()
    for article in ARTICLES:
        if text.startswith(article):
            return text[len(article):]
    return text


def _role(text: str) -> str:
    text = _clean(text).strip(" .,;:")
    for article in ARTICLES:
        if text.lower().startswith(article):
            return text[len(article):]
    return text


def _state_value(text: str, obj: str) -> str:
    value = _clean(text).strip(" .?!")
    for prefix in (f"the {obj} ", f"{obj} "):
        if value.lower().startswith(prefix):
            value = value[len(prefix):]
    return value[:1].lower() + value[1:]


def state_type_of(value: str) -> str:
    """'has a lanyard clipped on' -> '<has_lanyard_clipped_on>' (articles dropped)."""
    words = [w for w in re.findall(r"[a-z0-9]+", value.lower()) if w not in ("a", "an", "the")]
    return "<" + "_".join(words[:6] or ["state"]) + ">"


def normalise_update(reply: UpdateReply, obj: str) -> dict[str, Any]:
    text = _clean(reply.text)
    if text and not text.endswith((".", "!", "?")):
        text += "."
    value = _state_value(reply.state_value, obj)
    return {"state_type": state_type_of(value), "state_value": value, "text": text,
            "visible": reply.visible}


def build_record(reply: ContextReply, cid: str, description: str, containers: int,
                 topics: int, source: dict[str, str]) -> dict[str, Any]:
    people = [{"name": _clean(p.name), "role": _role(p.role)} for p in reply.people]
    # Models often give one container or topic too many; extra ones are dropped, too few fail.
    return {
        "id": cid,
        "description": description,
        "roles": [p["role"] for p in people],
        "rooms": [_phrase(reply.start_room), _phrase(reply.other_room)],
        "topics": [_phrase(t) for t in reply.topics][:topics],
        "objects": [{"name": _phrase(reply.object),
                     "containers": [_phrase(c) for c in reply.containers][:containers],
                     "state_updates": []}],
        "people": people,
        "situation": _clean(reply.situation),
        "source": source,
    }


# -- prompts (the structure of the paper's figures 7 and 8, in this project's words) -------------
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


def judge_rejection(verdict: UpdateVerdict) -> str | None:
    """The first failed test of a verdict as a reason slug; None when the update passes."""
    for ok, reason in ((verdict.plausible, "implausible"),
                       (verdict.visibility_correct, "wrong_visibility"),
                       (verdict.object_stays, "moves_or_destroys"),
                       (verdict.state_matches, "state_mismatch")):
        if not ok:
            return reason
    return None


# -- pools -----------------------------------------------------------------------------------------
@dataclass
class Pools:
    names: list[str]
    settings: list[str]
    source: str  # "lexicon" or the model that wrote them


def _setting_phrase(text: str) -> str:
    text = _clean(text).strip(" .,;:")
    if not text:
        return ""
    text = text[:1].lower() + text[1:]
    if not text.startswith(ARTICLES):
        text = ("an " if text[0] in "aeiou" else "a ") + text
    return text


def lexicon_pools() -> Pools:
    lex = load_lexicon()
    return Pools(list(lex["names"]), [s["description"] for s in lex["settings"]], "lexicon")


def llm_pools(backend: Backend, size: int, config: GenerationConfig) -> Pools:
    """Names and settings asked from the model once (both requests in one batch)."""
    names_c, settings_c = backend.generate([names_prompt(size), settings_prompt(size)], config)
    try:
        raw_names = parse_string_list(completion_text(names_c))
        raw_settings = parse_string_list(completion_text(settings_c))
    except ReplyError as e:
        raise ValueError(f"the model's list of names or settings is unusable ({e})") from None
    names = list(dict.fromkeys(n.strip() for n in raw_names if _is_name(n.strip())))
    settings = list(dict.fromkeys(s for s in map(_setting_phrase, raw_settings)
                                  if s and len(s) <= 80 and "\n" not in s))
    if len(names) < 10 or not settings:
        raise ValueError(f"the model gave {len(names)} usable names and {len(settings)} "
                         "settings; need at least 10 names and 1 setting")
    return Pools(names, settings, backend.model)


def load_or_make_pools(kind: str, path: Path, backend: Backend, size: int,
                       config: GenerationConfig) -> Pools:
    if kind == "lexicon":
        return lexicon_pools()
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Pools(list(data["names"]), list(data["settings"]), data["source"])
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{path}: not a pools file written by this command; delete it to "
                             "ask the model again") from None
    pools = llm_pools(backend, size, config)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(pools.__dict__, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(path)  # atomic: a killed run leaves the old file or the whole new one
    return pools


# -- the run ---------------------------------------------------------------------------------------
@dataclass
class ContextSpec:
    people: int
    containers: int = 3
    topics: int = 3
    visible: int = 4
    invisible: int = 3
    min_visible: int = 1
    min_invisible: int = 1

    def __post_init__(self) -> None:
        for name in ("people", "containers", "topics"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name} must be >= 1")
        if self.people > 8:
            raise ValueError("--people must be at most 8")
        if self.visible < self.min_visible or self.invisible < self.min_invisible:
            raise ValueError("ask for at least as many visible/invisible updates as the minimum kept")


@dataclass
class ContextStats:
    written: int = 0
    already: int = 0
    failed: Counter = field(default_factory=Counter)  # context failures by reason
    proposed: int = 0  # state updates proposed by the model
    invalid: Counter = field(default_factory=Counter)  # updates dropped before judging, by reason
    judged: int = 0
    rejected: Counter = field(default_factory=Counter)  # judge rejections by reason
    kept: int = 0
    request_errors: int = 0  # attempts left for a later run because a request failed

    def summary(self) -> str:
        def fmt(c: Counter) -> str:
            return " [" + " ".join(f"{k}={v}" for k, v in c.most_common()) + "]" if c else ""
        return (f"contexts: {self.written} written ({self.already} already there), "
                f"{sum(self.failed.values())} failed{fmt(self.failed)}; state updates: "
                f"{self.proposed} proposed, {sum(self.invalid.values())} invalid{fmt(self.invalid)}, "
                f"{self.judged} judged, {sum(self.rejected.values())} rejected{fmt(self.rejected)}, "
                f"{self.kept} kept")


@dataclass
class _Attempt:
    k: int
    id: str
    setting: str
    names: list[str]
    record: dict[str, Any] | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    pending: int = 0
    request_error: str = ""


def context_id(seed: int, k: int) -> str:
    return f"llm_s{seed}_{k:06d}"


def failures_path(output: str | Path) -> Path:
    return Path(str(output) + ".failures.jsonl")


def pools_path(output: str | Path) -> Path:
    return Path(str(output) + ".pools.json")


class ContextSampler:
    """Runs the three batched stages over rounds of attempts until `n` contexts are written."""

    def __init__(self, generator: Backend, judge: Backend, spec: ContextSpec, pools: Pools, *,
                 seed: int = 0, gen_config: GenerationConfig | None = None,
                 judge_config: GenerationConfig | None = None, progress: bool = False,
                 log: Callable[[str], None] = lambda m: None) -> None:
        self.gen, self.judge, self.spec, self.pools = generator, judge, spec, pools
        self.seed = seed
        self.gen_config = gen_config or GenerationConfig(max_new_tokens=1024, temperature=0.8, seed=seed)
        self.judge_config = judge_config or GenerationConfig(max_new_tokens=256, temperature=0.0, seed=seed)
        self.progress, self.log = progress, log
        self.source = {"model": generator.model, "judge_model": judge.model}
        self.stats = ContextStats()
        if len(pools.names) < spec.people:
            raise ValueError(f"the name pool has {len(pools.names)} names, {spec.people} needed")

    def attempt(self, k: int) -> _Attempt:
        rng = random.Random(f"{self.seed}:{k}")
        return _Attempt(k, context_id(self.seed, k), rng.choice(self.pools.settings),
                        rng.sample(self.pools.names, self.spec.people))

    def run(self, output: str | Path, n: int, max_attempts: int) -> ContextStats:
        out_ids = resume(output)
        failed_ids = resume(failures_path(output))
        self.stats.already = len(out_ids)
        done = out_ids | failed_ids
        with Appender(output) as out, Appender(failures_path(output)) as fails, \
                tqdm(total=n, initial=min(len(out_ids), n), desc="contexts", unit="context",
                     disable=not self.progress, file=sys.stderr) as bar:
            self._out, self._fails, self._bar = out, fails, bar
            k = 0
            while len(out_ids) + self.stats.written < n:
                budget = max_attempts - len(done)
                if budget <= 0:
                    break
                batch: list[_Attempt] = []
                want = min(n - len(out_ids) - self.stats.written, budget)
                while len(batch) < want:
                    if context_id(self.seed, k) not in done:
                        batch.append(self.attempt(k))
                    k += 1
                done |= {a.id for a in batch}
                self._round(batch)
        return self.stats

    # -- stages --------------------------------------------------------------------------------
    def _set_aside(self, a: _Attempt, error: str) -> None:
        """A request that failed for good says nothing about the context: the attempt is not
        recorded, so a later run tries it again."""
        self.stats.failed["request_failed"] += 1
        self.stats.request_errors += 1
        self.log(f"{a.id}: request failed ({error[:300]}); left for a re-run")

    def _fail(self, a: _Attempt, reason: str, problems: Iterable[str], reply: str = "") -> None:
        self.stats.failed[reason] += 1
        entry = {"id": a.id, "reason": reason, "problems": list(problems)[:20]}
        if reply:
            entry["reply"] = reply[:2000]
        if a.verdicts:
            entry["verdicts"] = a.verdicts
        self._fails.write(entry)
        self.log(f"{a.id}: {reason}: {entry['problems'][0] if entry['problems'] else ''}")

    def _round(self, batch: list[_Attempt]) -> None:
        spec = self.spec
        kept: list[_Attempt] = []

        def on_context(i: int, c: Completion) -> None:
            a = batch[i]
            if not c.ok:
                return self._set_aside(a, str(c.error))
            text = ""
            try:
                text = completion_text(c)
                reply = parse_model(ContextReply, text)
            except ReplyError as e:
                return self._fail(a, e.reason, [str(e)], text)
            a.record = build_record(reply, a.id, a.setting, spec.containers, spec.topics, self.source)
            problems = context_problems(a.record, people=spec.people, containers=spec.containers,
                                        topics=spec.topics, rooms=2, check_updates=False)
            if problems:
                return self._fail(a, problems[0][0], [m for _, m in problems], text)
            kept.append(a)

        self.gen.generate([context_prompt(a.setting, a.names, spec.people, spec.containers,
                                          spec.topics) for a in batch],
                          self.gen_config, on_result=on_context)
        kept.sort(key=lambda a: a.k)
        with_updates: list[_Attempt] = []

        def on_updates(i: int, c: Completion) -> None:
            a = kept[i]
            if not c.ok:
                return self._set_aside(a, str(c.error))
            text = ""
            try:
                text = completion_text(c)
                data = parse_json_reply(text, (dict, list))
                items = data.get("updates") if isinstance(data, dict) else data
                if not isinstance(items, list):
                    raise ReplyError("schema", "field updates: expected a list")
            except ReplyError as e:
                return self._fail(a, f"updates_{e.reason}", [str(e)], text)
            obj = a.record["objects"][0]["name"]
            seen: set[str] = set()
            for j, item in enumerate(items[: 3 * (spec.visible + spec.invisible)]):
                self.stats.proposed += 1
                try:
                    update = normalise_update(UpdateReply.model_validate(item), obj)
                except ValidationError as e:
                    self.stats.invalid["update_schema"] += 1
                    self.log(f"{a.id}: update {j}: {describe_validation_error(e)}")
                    continue
                problems = update_problems(update, obj, f"update {j}")
                if not problems and (update["state_type"] in seen or update["state_value"] in seen):
                    problems = [("update_duplicate", f"update {j}: repeats an earlier state")]
                if problems:
                    self.stats.invalid[problems[0][0]] += 1
                    self.log(f"{a.id}: {problems[0][1]}")
                    continue
                seen |= {update["state_type"], update["state_value"]}
                a.candidates.append(update)
            vis = sum(u["visible"] for u in a.candidates)
            if vis < spec.min_visible or len(a.candidates) - vis < spec.min_invisible:
                return self._fail(a, "too_few_updates", [
                    f"{vis} visible and {len(a.candidates) - vis} invisible usable updates before "
                    f"judging, need {spec.min_visible} and {spec.min_invisible}"], text)
            a.pending = len(a.candidates)
            with_updates.append(a)

        if kept:
            self.gen.generate([updates_prompt(a.record, spec.visible, spec.invisible) for a in kept],
                              self.gen_config, on_result=on_updates)
        with_updates.sort(key=lambda a: a.k)
        jobs = [(a, j) for a in with_updates for j in range(len(a.candidates))]

        def on_verdict(i: int, c: Completion) -> None:
            a, j = jobs[i]
            update = a.candidates[j]
            a.pending -= 1
            if not c.ok:
                a.request_error = a.request_error or str(c.error)
            else:
                self._judged(a, j, update, c)
            if a.pending == 0:
                if a.request_error:
                    self._set_aside(a, a.request_error)
                else:
                    self._finish(a)

        if jobs:
            self.judge.generate([judge_update_prompt(a.record, a.candidates[j]) for a, j in jobs],
                                self.judge_config, on_result=on_verdict)

    def _judged(self, a: _Attempt, j: int, update: dict[str, Any], c: Completion) -> None:
        self.stats.judged += 1
        try:
            verdict = parse_model(UpdateVerdict, completion_text(c), max_chars=20_000)
            reason = judge_rejection(verdict)
            note = _clean(verdict.reason)[:300]
        except ReplyError as e:
            reason, note = f"judge_{e.reason}", str(e)[:300]
        update_verdict = {"update": j, "state_value": update["state_value"],
                          "ok": reason is None, "reason": reason or "", "note": note}
        a.verdicts.append(update_verdict)
        if reason:
            self.stats.rejected[reason] += 1

    def _finish(self, a: _Attempt) -> None:
        accepted = {v["update"] for v in a.verdicts if v["ok"]}
        record = a.record
        record["objects"][0]["state_updates"] = [u for j, u in enumerate(a.candidates) if j in accepted]
        problems = context_problems(record, people=self.spec.people, containers=self.spec.containers,
                                    topics=self.spec.topics, rooms=2,
                                    min_visible=self.spec.min_visible,
                                    min_invisible=self.spec.min_invisible)
        if problems:
            return self._fail(a, problems[0][0], [m for _, m in problems])
        self._out.write(record)
        self.stats.written += 1
        self._bar.update(1)
        self.stats.kept += len(accepted)


# -- command line ----------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", type=int, required=True, help="number of contexts to write")
    parser.add_argument("--people", type=int, required=True, help="characters per context")
    parser.add_argument("--containers", type=int, default=3, help="containers per object (default 3)")
    parser.add_argument("--topics", type=int, default=3, help="chit-chat topics (default 3)")
    parser.add_argument("--visible", type=int, default=4,
                        help="visible state updates to propose per context (default 4)")
    parser.add_argument("--invisible", type=int, default=3,
                        help="invisible state updates to propose per context (default 3)")
    parser.add_argument("--min-visible", type=int, default=1,
                        help="fewest visible updates a kept context has after judging (default 1)")
    parser.add_argument("--min-invisible", type=int, default=1,
                        help="fewest invisible updates a kept context has after judging (default 1)")
    parser.add_argument("--pool", choices=["lexicon", "llm"], default="lexicon",
                        help="where names and settings come from: the offline lexicon (default) "
                             "or one request to the model (kept in OUTPUT.pools.json)")
    parser.add_argument("--pool-size", type=int, default=100,
                        help="names and settings asked for with --pool llm (default 100)")
    parser.add_argument("--max-attempts", type=int,
                        help="give up after this many attempts in all (default 3n + 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True, help="JSONL of contexts (appended to)")
    parser.add_argument("-q", "--quiet", action="store_true")
    add_backend_arguments(parser, temperature=0.8, max_new_tokens=1024)


def run(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise ValueError("-n must be >= 1")
    spec = ContextSpec(args.people, args.containers, args.topics, args.visible, args.invisible,
                       args.min_visible, args.min_invisible)
    gen_config = GenerationConfig(max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                                  seed=args.seed)
    judge_config = GenerationConfig(max_new_tokens=256, temperature=0.0, seed=args.seed)
    max_attempts = args.max_attempts if args.max_attempts is not None else 3 * args.n + 10
    generator, judge = backends_from_args(args)
    log = (lambda m: None) if args.quiet else _log
    try:
        pool_config = GenerationConfig(max_new_tokens=max(args.max_new_tokens, 20 * args.pool_size),
                                       temperature=args.temperature, seed=args.seed)
        pools = load_or_make_pools(args.pool, pools_path(args.output), generator,
                                   args.pool_size, pool_config)
        sampler = ContextSampler(generator, judge, spec, pools, seed=args.seed,
                                 gen_config=gen_config, judge_config=judge_config,
                                 progress=not args.quiet, log=log)
        stats = sampler.run(args.output, args.n, max_attempts)
    finally:
        close_backends(generator, judge)
    print(stats.summary())
    total = stats.already + stats.written
    if total < args.n:
        requests = (f"; {stats.request_errors} attempts hit request errors and will be retried"
                    if stats.request_errors else "")
        print(f"error: {total} of {args.n} contexts after {max_attempts} attempts; reasons are in "
              f"{failures_path(args.output)}{requests} (raise --max-attempts and run again to "
              "continue)", file=sys.stderr)
        return 3
    return 0


def _log(message: str) -> None:
    tqdm.write(message, file=sys.stderr)  # keeps the progress bar intact

