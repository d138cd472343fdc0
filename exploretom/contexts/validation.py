"""The rules a sampled context and each of its state updates must meet (`context_problems`).

A defect is a (reason slug, message naming the field) pair, so failures can be counted by kind
and each one said in the record's own terms.
"""
from __future__ import annotations

import re
from typing import Any

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


def is_name(name: str) -> bool:
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
        if not is_name(p["name"]):
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
