"""Validation of the offline ExploreToM context lexicon (exploretom/data/contexts.json).

The story sampler renders these strings into fixed templates ("Emily, a <role>", "the <room>",
"told Anne about the <topic>", "Does Anne believe that the <object> <state_value>?"), so every rule
below protects a sentence that would otherwise come out wrong. `lexicon_problems` gathers every
violation at once, so a failing run lists all the entries to fix rather than the first one.
"""

from __future__ import annotations

import copy
import json
import re
from importlib.resources import files

import pytest

from exploretom.contexts.validation import _article_problems as context_article_problems
from exploretom.contexts.validation import _contains_phrase, _words

MIN_NAMES = 100
MIN_SETTINGS = 45
MIN_ROLES = 6
MIN_ROOMS = 3
MIN_TOPICS = 6
MIN_OBJECTS = 3
MIN_CONTAINERS = 4
MIN_VISIBLE = 3
MIN_INVISIBLE = 2

# state_value completes "Does Anne believe that the <object> ...?", so it opens with one of these.
STATE_VERBS = {"is", "has", "contains", "holds", "smells", "tastes", "plays", "shows", "opens", "belongs"}
ARTICLES = ("a ", "an ", "the ")
# Words that make a container see-through or open, which would break the ToM premise that
# someone outside the room cannot see what a container holds.
NOT_OPAQUE = {"glass", "jar", "tray", "shelf", "shelves", "table", "bowl", "basket", "mesh", "net",
              "clear", "transparent", "open", "rack", "vase", "bucket", "counter", "hook", "plate",
              "dish", "cup", "windowsill", "see-through"}
# Names are sampled independently of gender, so the narrated action must not assume one.
GENDERED = {"he", "she", "him", "her", "his", "hers", "himself", "herself"}
# Words that cannot follow "the" ("the tomorrow's route", "the my bag").
NOT_AFTER_THE = {"a", "an", "the", "my", "your", "our", "their", "his", "her", "its", "this", "that",
                 "these", "those", "some", "every", "each", "no", "today's", "tomorrow's", "yesterday's",
                 "tonight's"}
# Plural-only nouns: "the goggles has ..." reads wrong, so such objects are named "pair of ...".
PLURAL_ONLY = {"goggles", "scissors", "shears", "secateurs", "glasses", "spectacles", "headphones",
               "earphones", "trousers", "jeans", "shorts", "tongs", "pliers", "tweezers", "binoculars",
               "gloves", "boots", "shoes", "socks", "earrings", "chopsticks", "clippers"}

SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
STATE_TYPE = re.compile(r"<[a-z][a-z0-9]*(_[a-z0-9]+)*>")
NAME = re.compile(r"[A-Z][a-z]+")
SETTING_KEYS = {"id", "description", "roles", "rooms", "topics", "objects"}
OBJECT_KEYS = {"name", "containers", "state_updates"}
UPDATE_KEYS = {"state_type", "state_value", "text", "visible"}


def load_lexicon() -> dict:
    return json.loads(files("exploretom").joinpath("data", "contexts.json").read_text(encoding="utf-8"))


def _article_problems(where: str, text: str) -> list[str]:
    """The sampled contexts' article rule ("a"/"an" as the word sounds), as messages."""
    return [message for _, message in context_article_problems("article", where, text)]


def _plain_phrase_problems(where: str, phrase: object) -> list[str]:
    """Rooms, containers, topics and object names: lower case, no article, rendered as 'the <x>'."""
    if not isinstance(phrase, str) or not phrase:
        return [f"{where}: expected a non-empty string, got {phrase!r}"]
    problems = []
    if phrase != phrase.lower():
        problems.append(f"{where}: {phrase!r} is not lower case")
    first = phrase.lower().split(" ", 1)[0]
    if first in NOT_AFTER_THE:
        problems.append(f"{where}: {phrase!r} starts with {first!r}, which cannot follow 'the'")
    return problems


def _unique_problems(where: str, items: list) -> list[str]:
    seen, problems = set(), []
    for item in items:
        key = item.lower() if isinstance(item, str) else item
        if key in seen:
            problems.append(f"{where}: duplicate {item!r}")
        seen.add(key)
    return problems


def _count_problems(where: str, items: object, minimum: int) -> list[str]:
    if not isinstance(items, list):
        return [f"{where}: expected a list, got {type(items).__name__}"]
    if len(items) < minimum:
        return [f"{where}: {len(items)} entries, need at least {minimum}"]
    return []


def _every_string(node: object, where: str):
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, list):
        for k, item in enumerate(node):
            yield from _every_string(item, f"{where}[{k}]")
    elif isinstance(node, dict):
        for key, item in node.items():
            yield from _every_string(item, f"{where}.{key}")


def _update_problems(where: str, obj_name: str, update: dict) -> list[str]:
    if not isinstance(update, dict) or set(update) != UPDATE_KEYS:
        return [f"{where}: keys must be exactly {sorted(UPDATE_KEYS)}, got {update!r}"]
    problems = []
    state_type, value, text = update["state_type"], update["state_value"], update["text"]
    if not isinstance(update["visible"], bool):
        problems.append(f"{where}.visible: must be true or false, got {update['visible']!r}")
    if not STATE_TYPE.fullmatch(state_type):
        problems.append(f"{where}.state_type: {state_type!r} is not <snake_case>")
    first = value.split(" ", 1)[0]
    if first not in STATE_VERBS:
        problems.append(f"{where}.state_value: {value!r} must start with one of {sorted(STATE_VERBS)}")
    if value.rstrip(".?!") != value or "?" in value:
        problems.append(f"{where}.state_value: {value!r} must not end in punctuation")
    if not text.startswith("{person} "):
        problems.append(f"{where}.text: {text!r} must start with '{{person}} '")
    if text.count("{person}") != 1:
        problems.append(f"{where}.text: {text!r} must contain {{person}} exactly once")
    if text.replace("{person}", "").count("{") or text.count("}") != 1:
        problems.append(f"{where}.text: {text!r} has braces other than {{person}}")
    if not re.search(rf"\bthe {re.escape(obj_name)}\b", text):
        problems.append(f"{where}.text: {text!r} does not name 'the {obj_name}'")
    if not text.endswith(".") or re.search(r"[.!?] ", text):
        problems.append(f"{where}.text: {text!r} must be one sentence ending with '.'")
    gendered = GENDERED & set(_words(text))
    if gendered:
        problems.append(f"{where}.text: {text!r} uses gendered pronoun(s) {sorted(gendered)}")
    problems += _article_problems(f"{where}.text", text)
    problems += _article_problems(f"{where}.state_value", value)
    return problems


def _object_problems(where: str, obj: dict, rooms: list[str], setting_containers: set[str]) -> list[str]:
    if not isinstance(obj, dict) or set(obj) != OBJECT_KEYS:
        return [f"{where}: keys must be exactly {sorted(OBJECT_KEYS)}, got {sorted(obj) if isinstance(obj, dict) else obj!r}"]
    name = obj["name"]
    problems = _plain_phrase_problems(f"{where}.name", name)
    if _words(name)[-1:] and _words(name)[-1] in PLURAL_ONLY and not name.startswith("pair of "):
        problems.append(f"{where}.name: {name!r} is plural; name it 'pair of {name}'")
    for place in [*rooms, *setting_containers]:
        if _contains_phrase(name, place):
            problems.append(f"{where}.name: {name!r} contains the room or container name {place!r}")

    containers = obj["containers"]
    problems += _count_problems(f"{where}.containers", containers, MIN_CONTAINERS)
    problems += _unique_problems(f"{where}.containers", containers)
    for k, container in enumerate(containers):
        problems += _plain_phrase_problems(f"{where}.containers[{k}]", container)
        see_through = NOT_OPAQUE & set(_words(container))
        if see_through:
            problems.append(f"{where}.containers[{k}]: {container!r} is not opaque ({sorted(see_through)})")
        if container in rooms:
            problems.append(f"{where}.containers[{k}]: {container!r} is also a room")

    updates = obj["state_updates"]
    if not isinstance(updates, list):
        return problems + [f"{where}.state_updates: expected a list"]
    for k, update in enumerate(updates):
        problems += _update_problems(f"{where}.state_updates[{k}]", name, update)
    if all(isinstance(u, dict) and set(u) == UPDATE_KEYS for u in updates):
        problems += _unique_problems(f"{where}.state_updates.state_type", [u["state_type"] for u in updates])
        problems += _unique_problems(f"{where}.state_updates.state_value", [u["state_value"] for u in updates])
        visible = sum(u["visible"] is True for u in updates)
        invisible = sum(u["visible"] is False for u in updates)
        if visible < MIN_VISIBLE:
            problems.append(f"{where}.state_updates: {visible} visible updates, need at least {MIN_VISIBLE}")
        if invisible < MIN_INVISIBLE:
            problems.append(f"{where}.state_updates: {invisible} invisible updates, need at least {MIN_INVISIBLE}")
    return problems


def _setting_problems(where: str, setting: dict) -> list[str]:
    if not isinstance(setting, dict) or set(setting) != SETTING_KEYS:
        return [f"{where}: keys must be exactly {sorted(SETTING_KEYS)}"]
    problems = []
    if not SNAKE.fullmatch(setting["id"]):
        problems.append(f"{where}.id: {setting['id']!r} is not snake_case")
    description = setting["description"]
    if not description.startswith(ARTICLES) or description != description.lower():
        problems.append(f"{where}.description: {description!r} must be a lower-case noun phrase with an article")
    problems += _article_problems(f"{where}.description", description)

    for field, minimum in (("roles", MIN_ROLES), ("rooms", MIN_ROOMS), ("topics", MIN_TOPICS), ("objects", MIN_OBJECTS)):
        problems += _count_problems(f"{where}.{field}", setting[field], minimum)
    for k, role in enumerate(setting["roles"]):
        if not role or role.lower().startswith(ARTICLES):
            problems.append(f"{where}.roles[{k}]: {role!r} must be non-empty with no article")
    for field in ("rooms", "topics"):
        for k, phrase in enumerate(setting[field]):
            problems += _plain_phrase_problems(f"{where}.{field}[{k}]", phrase)
    for field in ("roles", "rooms", "topics"):
        problems += _unique_problems(f"{where}.{field}", setting[field])

    objects = setting["objects"]
    problems += _unique_problems(f"{where}.objects.name", [o.get("name") for o in objects if isinstance(o, dict)])
    setting_containers = {c for o in objects if isinstance(o, dict) for c in o.get("containers", [])}
    for k, obj in enumerate(objects):
        problems += _object_problems(f"{where}.objects[{k}]", obj, setting["rooms"], setting_containers)
    return problems


def lexicon_problems(lexicon: dict) -> list[str]:
    """Every rule violation in the lexicon, each naming the JSON path of the offending field."""
    if set(lexicon) != {"version", "names", "settings"}:
        return [f"top level: keys must be version, names, settings; got {sorted(lexicon)}"]
    problems = [] if lexicon["version"] == 1 else [f"version: expected 1, got {lexicon['version']!r}"]
    for where, text in _every_string(lexicon, "$"):
        if not text.isascii():
            problems.append(f"{where}: {text!r} is not plain ASCII")
        if text != text.strip() or "  " in text:
            problems.append(f"{where}: {text!r} has stray whitespace")

    names = lexicon["names"]
    problems += _count_problems("names", names, MIN_NAMES)
    problems += _unique_problems("names", names)
    problems += [f"names: {n!r} is not one capitalised word" for n in names if not NAME.fullmatch(n)]

    settings = lexicon["settings"]
    problems += _count_problems("settings", settings, MIN_SETTINGS)
    problems += _unique_problems("settings.id", [s.get("id") for s in settings if isinstance(s, dict)])
    for k, setting in enumerate(settings):
        label = setting.get("id", k) if isinstance(setting, dict) else k
        problems += _setting_problems(f"settings[{label}]", setting)
    return problems


@pytest.fixture(scope="module")
def lexicon() -> dict:
    return load_lexicon()


def test_lexicon_follows_every_rule(lexicon):
    problems = lexicon_problems(lexicon)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


def test_lexicon_meets_minimum_sizes(lexicon):
    assert len(lexicon["names"]) >= MIN_NAMES
    assert len(lexicon["settings"]) >= MIN_SETTINGS
    objects = [o for s in lexicon["settings"] for o in s["objects"]]
    assert all(len(o["state_updates"]) >= MIN_VISIBLE + MIN_INVISIBLE for o in objects)


def test_rendered_templates_read_cleanly(lexicon):
    """Render the sampler's sentence shapes once per entry: no placeholder or double space may survive."""
    for setting in lexicon["settings"]:
        for obj in setting["objects"]:
            for update in obj["state_updates"]:
                sentence = update["text"].format(person="Anne")
                question = f"Does Anne believe that the {obj['name']} {update['state_value']}?"
                for rendered in (sentence, question):
                    assert "{" not in rendered and "  " not in rendered, rendered
                assert sentence.startswith("Anne ")


BROKEN_ENTRIES = [
    # (what to break, a fragment the problem report must contain)
    (lambda lx: lx["names"].append(lx["names"][0]), "names: duplicate"),
    (lambda lx: lx["settings"][0]["rooms"].append("The Attic"), "is not lower case"),
    (lambda lx: lx["settings"][0]["topics"].append("a new rota"), "which cannot follow 'the'"),
    (lambda lx: lx["settings"][0]["topics"].append("tomorrow's trip"), "which cannot follow 'the'"),
    (lambda lx: lx["settings"][0]["objects"][0].update(name="ski goggles"), "is plural"),
    (lambda lx: lx["settings"][0]["objects"][0]["containers"].append("glass jar"), "is not opaque"),
    (lambda lx: lx["settings"][0]["objects"][0].update(name=lx["settings"][0]["rooms"][0]), "contains the room or container name"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][0].update(text="Someone dropped it."), "must start with '{person} '"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][0].update(state_value="was dropped"), "must start with one of"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][0].update(state_type="dropped"), "is not <snake_case>"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][1].update(state_type=lx["settings"][0]["objects"][0]["state_updates"][0]["state_type"]), "state_type: duplicate"),
    (lambda lx: [u.update(visible=False) for u in lx["settings"][0]["objects"][0]["state_updates"]], "visible updates, need at least"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][0].update(text="{person} dropped her keys."), "gendered pronoun"),
    (lambda lx: lx["settings"][0]["objects"][0]["state_updates"][0].update(text="{person} put a apple by the " + lx["settings"][0]["objects"][0]["name"] + "."), "article 'a apple'"),
    (lambda lx: lx.update(settings=lx["settings"][: MIN_SETTINGS - 1]), "entries, need at least"),
]


@pytest.mark.parametrize("break_it, expected", BROKEN_ENTRIES, ids=[e for _, e in BROKEN_ENTRIES])
def test_checker_reports_each_kind_of_defect(lexicon, break_it, expected):
    broken = copy.deepcopy(lexicon)
    break_it(broken)
    problems = lexicon_problems(broken)
    assert any(expected in p for p in problems), problems
