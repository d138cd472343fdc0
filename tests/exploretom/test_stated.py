"""Stated placements: a first placement told as a fact ("The marble is in the basket.", as ToMi
and Hi-ToM tell theirs). A wording only: everyone in the room sees it, so every label is the one
of the story told with the move, and its trace still passes the independent checker."""
from __future__ import annotations

import json
import random

import pytest

from exploretom.cli import main as cli_main
from exploretom.datasets.wording import state_placements
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.sampler import sample_story
from exploretom.semantics.label import label_story
from exploretom.semantics.replay import Replay
from exploretom.semantics.story import StoryFormatError, parse_story
from exploretom.semantics.trace import story_traces
from exploretom.semantics.trace_check import check_story, check_trace
from exploretom.semantics.tracker import StoryError

SALLY_ANNE = {"id": "sally-anne", "actions": [
    {"type": "enter_room", "person": "Sally", "room": "kitchen"},
    {"type": "enter_room", "person": "Anne", "room": "kitchen"},
    {"type": "move_object_container", "person": "Sally", "object": "marble", "container": "basket"},
    {"type": "leave_room", "person": "Sally", "room": "kitchen"},
    {"type": "move_object_container", "person": "Anne", "object": "marble", "container": "box"}]}


def answers(labelled: dict) -> dict[str, str]:
    return {q["question"]: q["answer"] for q in labelled["questions"]}


def test_sally_anne_told_as_tomi_tells_it_keeps_every_answer():
    moved = label_story(parse_story(SALLY_ANNE))
    stated = state_placements(moved, 1.0, 0)
    assert stated["text"].splitlines() == [
        "Sally entered the kitchen.", "Anne entered the kitchen.", "The marble is in the basket.",
        "Sally left the kitchen.",
        "Anne moved the marble to the box, which is also located in the kitchen."]
    assert stated["actions"][2]["stated"] is True and "stated" not in stated["actions"][4]
    relabelled = label_story(parse_story(stated))
    assert relabelled["text"] == stated["text"]
    assert answers(relabelled) == answers(moved)
    assert answers(moved)["In which container will Sally search for the marble?"] == "basket"
    assert answers(moved)["In which container was the marble at the beginning?"] == "basket"


def test_the_trace_of_a_stated_placement_names_no_actor_and_checks():
    st = parse_story(state_placements(label_story(parse_story(SALLY_ANNE)), 1.0, 0))
    qs = [q for q in label_story(st)["questions"] if q["order"] >= 1]
    traces = story_traces(st.actions, qs)
    sally = traces[[q["question"] for q in qs].index(
        "In which container will Sally search for the marble?")]
    assert sally.splitlines()[0] == ("Step 3: The marble is in the basket. Sally saw it. "
                                     "Sally thinks the marble is in the basket in the kitchen.")
    assert check_story(st.actions, qs, traces) == [q["answer"] for q in qs]


def test_only_a_first_placement_without_modifiers_can_be_stated():
    later = json.loads(json.dumps(SALLY_ANNE))
    later["actions"][4]["stated"] = True
    with pytest.raises(StoryError, match="action 5 .*must be the first handling of the marble"):
        label_story(parse_story(later))
    apart = json.loads(json.dumps(SALLY_ANNE))
    del apart["actions"][3:]
    apart["actions"][1]["room"] = "hall"
    apart["actions"][2]["stated"] = True
    with pytest.raises(StoryError, match="action 3 .*everyone who is in a room to be in the "
                                         "kitchen"):
        label_story(parse_story(apart))
    assert state_placements(label_story(parse_story({**apart, "actions": [
        {k: v for k, v in a.items() if k != "stated"} for a in apart["actions"]]})), 1.0, 0
    )["text"].splitlines()[2].startswith("Sally moved")  # so it is never drawn
    peeked = json.loads(json.dumps(SALLY_ANNE))
    peeked["actions"][2].update(stated=True, peeking=["Anne"])
    with pytest.raises(StoryFormatError, match="action 3 .*only a move_object_container without"):
        parse_story(peeked)
    carried = {"id": 1, "actions": [SALLY_ANNE["actions"][0], {
        "type": "move_object_room", "person": "Sally", "object": "marble", "room": "hall",
        "stated": True}]}
    with pytest.raises(StoryFormatError, match="action 2 .*only a move_object_container"):
        parse_story(carried)
    wrong = json.loads(json.dumps(SALLY_ANNE))
    wrong["actions"][2]["stated"] = "yes"
    with pytest.raises(StoryFormatError, match="field 'stated' must be true or false"):
        parse_story(wrong)


def test_sampled_stories_stated_keep_their_labels_and_their_traces_check():
    """Every action set, with and without asymmetry: all stateable placements stated, the
    questions and answers are the same and every trace passes the checker."""
    rng, n_stated = random.Random(5), 0
    for k in range(120):
        cond = Conditions(list(ACTION_SETS)[k % len(ACTION_SETS)], 2 + k % 2, 2, 2, 10,
                          asymmetric=k % 3 == 0)
        st, _ = sample_story(cond, rng, k, max_order=2)
        moved = label_story(st)
        stated = state_placements(moved, 1.0, 0)
        n_stated += sum(bool(a.get("stated")) for a in stated["actions"])
        again = parse_story(stated)
        qs = label_story(again)["questions"]
        assert all(q in qs for q in moved["questions"])  # it may ask more (wording.py says when)
        replay = Replay(again.actions, 2)
        for q, tr in zip(qs, story_traces(again.actions, qs)):
            assert check_trace(tr, replay, q) == q["answer"]
    assert n_stated > 30  # the action sets without containers have none


def test_export_states_a_seeded_share_and_keeps_every_row(tmp_path):
    from datasets import load_from_disk

    src = tmp_path / "s.jsonl"
    assert cli_main(["sample", "--action-set", "A1", "--people", "3", "--moves", "3", "--rooms", "2",
                     "--max-actions", "10", "-n", "40", "--seed", "2", "--label", "-q", "-o", str(src)]) == 0
    rows = {}
    for name, extra in (("moved", []), ("stated", ["--stated-placements", "0.5"])):
        assert cli_main(["export", str(src), "-o", str(tmp_path / name), *extra]) == 0
        rows[name] = load_from_disk(str(tmp_path / name))["train"].to_list()
    assert [(r["id"], r["answer"]) for r in rows["stated"]] == [
        (r["id"], r["answer"]) for r in rows["moved"]]
    told = [r for r in rows["stated"] if any(
        line.startswith("The ") and " is in the " in line for line in r["prompt"][-1]["content"].splitlines())]
    assert 0.2 < len(told) / len(rows["stated"]) < 0.8  # about half the stories state one
    for r in told:  # the row's trace is the one of the story it shows: nobody did a stated step
        meta = json.loads(r["meta"])
        assert any(a.get("stated") for a in meta["story"]["actions"])
        for line in meta["reasoning"].splitlines():
            if line.startswith("Step ") and line.partition(": ")[2].startswith("The "):
                assert "did it" not in line
    stats = json.loads((tmp_path / "stated" / "export_stats.json").read_text())
    assert stats["options"]["stated_placements"] == 0.5
    assert "--stated-placements 0.5" in stats["command"]
