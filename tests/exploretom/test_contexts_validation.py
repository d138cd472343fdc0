"""The rules a sampled context and its state updates must meet (`exploretom.contexts.validation`):
each defect is reported with its reason slug and a message naming the field."""
from __future__ import annotations

import copy

import pytest

from exploretom.contexts.validation import context_problems

# The first four updates of the scripted model in test_contexts.py: three visible, one not.
UPDATES = [
    {"text": "{person} painted the ladle red.", "state_value": "is painted red", "visible": True},
    {"text": "{person} wrapped the ladle in a tea towel.", "state_value": "is wrapped in a tea towel",
     "visible": True},
    {"text": "{person} tied a ribbon to the ladle.", "state_value": "has a ribbon tied to it",
     "visible": True},
    {"text": "{person} rubbed garlic on the ladle.", "state_value": "smells of garlic", "visible": False},
]


def _valid_record() -> dict:
    return {
        "id": "llm_s0_000000", "description": "a busy restaurant", "roles": ["head cook", "waiter"],
        "rooms": ["kitchen", "pantry"], "topics": ["new menu", "rent"],
        "objects": [{"name": "ladle", "containers": ["drawer", "cupboard"],
                     "state_updates": [dict(u, state_type="<" + u["state_value"].replace(" ", "_") + ">")
                                       for u in UPDATES]}],
        "people": [{"name": "Ada", "role": "head cook"}, {"name": "Bruno", "role": "waiter"}],
        "situation": "Ada and Bruno stood in the kitchen.", "source": {"model": "m", "judge_model": "m"},
    }


BREAKS = [
    (lambda r: r["objects"][0]["containers"].append("open tray"), "containers", "not an opaque"),
    (lambda r: r["rooms"].append("Attic"), "rooms", "not lower case"),
    (lambda r: r["topics"].append("the rent"), "topics", "cannot follow 'the'"),
    (lambda r: r["topics"].append("rent"), "topics", "duplicate"),
    (lambda r: r["objects"][0].update(name="pair of tongs in the drawer"), "object", "contains the room or container"),
    (lambda r: r["objects"][0].update(name="tongs"), "object", "is plural"),
    (lambda r: r["people"][1].update(name="bruno"), "people", "capitalised"),
    (lambda r: r["people"][1].update(role="a waiter"), "people", "no article"),
    (lambda r: r.update(situation="They stood in the kitchen."), "situation", "does not mention Ada, Bruno"),
    (lambda r: r["objects"][0]["state_updates"][0].update(text="{person} painted his ladle."), "update_pronoun", "gendered"),
    (lambda r: r["objects"][0]["state_updates"][0].update(state_value="was painted"), "update_state_value", "must start with"),
    (lambda r: r["objects"][0]["state_updates"][0].update(text="Someone painted the ladle."), "update_text", "{person}"),
    (lambda r: [u.update(visible=True) for u in r["objects"][0]["state_updates"]], "too_few_updates", "0 invisible"),
    (lambda r: r.update(description="restaurant"), "description", "a/an/the"),
    (lambda r: r.pop("situation"), "schema", "missing field"),
    (lambda r: r.update(people="Ada"), "schema", "list of {name, role}"),
]


def test_valid_record_has_no_problems():
    assert context_problems(_valid_record(), people=2, containers=2, topics=2, rooms=2) == []


@pytest.mark.parametrize("break_it, reason, fragment", BREAKS, ids=[b[2] for b in BREAKS])
def test_each_defect_is_reported_with_its_reason(break_it, reason, fragment):
    record = copy.deepcopy(_valid_record())
    break_it(record)
    problems = context_problems(record)
    assert any(r == reason and fragment in m for r, m in problems), problems
