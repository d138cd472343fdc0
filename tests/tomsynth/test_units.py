"""The factor lists, unit ids, the plan command and the prompts' constraints."""
from __future__ import annotations

import re
from collections import Counter

from datasets import load_from_disk

from tomsynth import units as U
from tomsynth.cli import main
from tomsynth.prompts import synthesis_messages, verification_messages


def test_factor_lists_match_the_paper():
    states = U.mental_states()
    assert len(states) == 36
    assert Counter(m.dimension_name for m in states) == {
        "Emotions": 7, "Desires": 4, "Intentions": 4, "Knowledge": 4, "Beliefs": 11,
        "Non-literal Communication": 6}
    belief_about = [m.name for m in states if m.name.startswith("Second-order Beliefs (Belief about")]
    assert len(belief_about) == 5  # the supplementary "belief about X" values
    assert len(U.situations()) == 96
    assert Counter(s.domain_name for s in U.situations()) == {d: 8 for d in (
        "Workplace", "Family", "Education", "Healthcare", "Business", "Social Gatherings", "Public Services",
        "Romantic Relationships", "Community", "Friendship", "Stranger Interactions", "Crisis Response")}
    assert [f.name for f in U.formats()] == ["Narrative", "Dialogue"]
    names = U.character_names()
    assert len(names) == len(set(names)) == 200 and names[0] == "James" and names[-1] == "Tiffany"
    # Every value has a definition of its own (they go into the prompt).
    defs = [m.definition for m in states + U.dimensions()]
    assert all(len(d) > 60 for d in defs) and len(set(defs)) == len(defs)


def test_units_and_ids():
    main_units, contrast = U.units("main"), U.units("contrast")
    assert len(main_units) == 6912 and len(contrast) == 2304
    ids = [u.id for u in main_units + contrast]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[mc](\.[a-z0-9-]+){4}", i) for i in ids)
    # Stable ids: built from keys in the data files, not from positions.
    assert main_units[0].id == "m.discrepant-emotions.workplace.meetings.narrative"
    assert "m.mixed-emotions.education.school-bullying.dialogue" in ids
    assert main_units[0].entry_id(3) == "m.discrepant-emotions.workplace.meetings.narrative.e3"
    # Contrast: the 6 dimensions + the 6 second-order values.
    states = U.contrast_states()
    assert len(states) == 12 and len({m.key for m in states}) == 12
    assert {m.name for m in states[:6]} == {"Emotions", "Desires", "Intentions", "Knowledge", "Beliefs",
                                           "Non-literal Communication"}
    assert {m.key for m in states[6:]} == {"second-order-beliefs", "belief-about-emotion", "belief-about-intention",
                                          "belief-about-desire", "belief-about-knowledge",
                                          "belief-about-non-literal-communication"}
    assert U.unit_by_id(contrast[100].id) == contrast[100]


def test_select_spreads_and_is_stable():
    picked = U.select(U.units("main"), 24)
    assert len(set(picked)) == 24 and picked == U.select(U.units("main"), 24)
    assert len({u.format for u in picked}) == 2
    assert len({u.mental_state.dimension for u in picked}) == 6
    assert len({u.situation.domain for u in picked}) >= 8


def test_synthesis_prompt_carries_every_constraint():
    unit = U.unit_by_id("m.hidden-emotions.family.family-dinner.dialogue")
    system, user = (m["content"] for m in synthesis_messages(unit, 2))
    names = unit.names_for(2)
    assert len(names) == 10 and set(names) <= set(U.character_names())
    assert names != unit.names_for(3)  # entries of a unit get different name pools
    for needle in (
        "Format: Dialogue", "Social domain: Family", "Situation: Family Dinner", "Mental-state dimension: Emotions",
        "Target concept: Hidden Emotions", unit.mental_state.definition, ", ".join(names),
        "no more than 4 characters", "800 characters", "Never state the target mental state",
        "observable cues", "combining several facts", "exactly four options", "one correct and three wrong",
        "randomly chosen letter", "alike in length", "Exactly one option must be defensible", "hard",
        '"dialogue":', '"question":', '"options":', '"answer":', '"analysis":',
    ):
        assert needle in user, needle
    assert "JSON" in system
    v_user = verification_messages("Dialogue", "A: hi\nB: hello", "Q?", ["w", "x", "y", "z"], "C")[1]["content"]
    for needle in ("AMBIGUOUS", "PASS", "FALSE", "OTHER", "option C", "exactly one option", '"judgment"',
                   '"correct_answer"', '"reason"'):
        assert needle in v_user, needle


def test_plan_command_writes_units_with_prompts(tmp_path, capsys):
    out = tmp_path / "plan"
    assert main(["plan", "-o", str(out), "--limit-units", "30"]) == 0
    dd = load_from_disk(str(out))
    assert set(dd) == {"main", "contrast"} and len(dd["main"]) == 30 and len(dd["contrast"]) == 30
    row = dd["main"][5]
    unit = U.unit_by_id(row["unit"])
    assert row["entry_ids"] == [unit.entry_id(k) for k in range(4)]
    assert row["messages"][2] == synthesis_messages(unit, 2)
    assert len(dd["contrast"][0]["messages"]) == 12
    assert "30 units, 120 prompts" in capsys.readouterr().out
