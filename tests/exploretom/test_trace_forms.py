"""Two trace forms beside the full one: room steps (`StoryTracer(..., room_steps=True)`,
`export --trace-rooms`) and short traces (`short=True`, `export --short-traces`).

A plain trace says "Hunter was elsewhere" at a move without saying why; the reason (Hunter left
at step 5) sits in the story, maybe far back. A trace with room steps also names each step where
a person of the question enters or leaves, so each presence claim rests on an earlier line of
the trace. The checker accepts such a step only with every person's part right and no claim.

A short trace keeps the decisive steps only (the last change of the asked view's value, the
world's last change the view missed) and is checked by `check_short_trace`.
"""
from __future__ import annotations

import json
import random

import pytest

from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.sampler import sample_story
from exploretom.semantics.build import enter, leave, put
from exploretom.semantics.label import label_story
from exploretom.semantics.questions import generate_questions
from exploretom.semantics.replay import Replay
from exploretom.semantics.story import parse_story
from exploretom.semantics.trace import StoryTracer, story_traces
from exploretom.semantics.trace_check import (TraceError, check_short_trace, check_story,
                                              check_trace)

# ToMi's shape: two people in one room, a placement, a move seen by both, then one leaves.
BATHROOM = (enter("Jayden", "bathroom"), enter("Hunter", "bathroom"),
            put("Jayden", "banana", "red bathtub"), put("Jayden", "banana", "green bathtub"),
            leave("Hunter", "bathroom"))
# The same, but Hunter leaves before the move: a false belief.
BATHROOM_FB = (enter("Jayden", "bathroom"), enter("Hunter", "bathroom"),
               put("Jayden", "banana", "red bathtub"), leave("Hunter", "bathroom"),
               put("Jayden", "banana", "green bathtub"))


def traces_of(actions, room_steps, max_order=2, short=False):
    st = parse_story({"id": "t", "actions": list(actions)})
    qs = label_story(st, max_order)["questions"]
    return (qs, story_traces(st.actions, qs, max_order, room_steps, short),
            Replay(st.actions, max_order))


def sampled_stories(seed, n):
    """n sampled stories of every action set: 2-3 people, up to 16 actions, with and without
    asymmetry, two in three from the constrained sampler."""
    rng = random.Random(seed)
    for k in range(n):
        aset = list(ACTION_SETS)[k % len(ACTION_SETS)]
        cond = Conditions(aset, 2 + k % 2, 3, 2, 8 + k % 9, asymmetric=k % 2 == 0)
        yield k, sample_story(cond, rng, k, max_order=3, constrained=k % 3 != 0)[0]


def find(qs, traces, question):
    [(q, tr)] = [(q, tr) for q, tr in zip(qs, traces) if q["question"] == question]
    return q, tr


SECOND = "In which container does Hunter think that Jayden will search for the banana?"
HUNTER = "In which container will Hunter search for the banana?"


def test_room_steps_name_where_the_view_enters_and_leaves():
    qs, traces, replay = traces_of(BATHROOM, room_steps=True)
    q, tr = find(qs, traces, SECOND)
    # Hunter left after the move: Hunter saw it, and knows Jayden did it.
    assert q["answer"] == "green bathtub"
    assert tr == (
        "Step 1: Jayden entered the bathroom. Hunter was elsewhere, Jayden came in.\n"
        "Step 2: Hunter entered the bathroom. Hunter came in, Jayden saw it.\n"
        "Step 3: Jayden moved the banana to the red bathtub. Hunter saw it, Jayden did it. "
        "Hunter thinks the banana is in the red bathtub in the bathroom. Hunter thinks Jayden "
        "thinks the banana is in the red bathtub in the bathroom.\n"
        "Step 4: Jayden moved the banana to the green bathtub. Hunter saw it, Jayden did it. "
        "Hunter thinks the banana is in the green bathtub in the bathroom. Hunter thinks Jayden "
        "thinks the banana is in the green bathtub in the bathroom.\n"
        "Step 5: Hunter left the bathroom. Hunter left, Jayden saw it.\n"
        "So Hunter thinks Jayden thinks the banana is in the green bathtub in the bathroom.")
    assert check_trace(tr, replay, q) == "green bathtub"
    assert check_story(replay.actions, qs, traces) == [q["answer"] for q in qs]


def test_room_steps_only_add_lines_to_the_plain_trace():
    for actions in (BATHROOM, BATHROOM_FB):
        qs, plain, _ = traces_of(actions, room_steps=False)
        _, rooms, _ = traces_of(actions, room_steps=True)
        for q, a, b in zip(qs, plain, rooms):
            kept = [line for line in b.split("\n") if line in a.split("\n")]
            assert kept == a.split("\n"), q["question"]
            if not q["order"]:  # the world's questions have no people to follow
                assert a == b


def test_a_false_belief_rests_on_the_step_where_the_person_left():
    qs, traces, replay = traces_of(BATHROOM_FB, room_steps=True)
    q, tr = find(qs, traces, HUNTER)
    assert q["answer"] == "red bathtub"
    lines = tr.split("\n")
    assert lines[2] == "Step 4: Hunter left the bathroom. Hunter left."
    assert lines[3] == "Step 5: Jayden moved the banana to the green bathtub. Hunter was elsewhere."
    assert check_trace(tr, replay, q) == "red bathtub"


def test_the_checker_refuses_a_wrong_room_step():
    qs, traces, replay = traces_of(BATHROOM_FB, room_steps=True)
    q, tr = find(qs, traces, HUNTER)
    # Jayden's entry is not a room step of Hunter's question.
    outsider = "Step 1: Jayden entered the bathroom. Hunter was elsewhere.\n" + tr
    with pytest.raises(TraceError, match="step 1 changes nothing that is asked"):
        check_trace(outsider, replay, q)
    wrong_part = tr.replace("Hunter left the bathroom. Hunter left.",
                            "Hunter left the bathroom. Hunter saw it.")
    with pytest.raises(TraceError, match="step 4: the trace says"):
        check_trace(wrong_part, replay, q)
    with_claim = tr.replace("Hunter left the bathroom. Hunter left.",
                            "Hunter left the bathroom. Hunter left. Hunter thinks the banana is "
                            "in the red bathtub in the bathroom.")
    with pytest.raises(TraceError, match="step 4 changes nothing"):
        check_trace(with_claim, replay, q)
    # A plain trace (no room steps) still checks: the room steps are allowed, not required.
    _, plain, _ = traces_of(BATHROOM_FB, room_steps=False)
    assert check_trace(find(qs, plain, HUNTER)[1], replay, q) == "red bathtub"


def test_every_question_of_sampled_stories_checks_with_room_steps():
    n_q = with_moves = 0
    for k, st in sampled_stories(22, 400):
        tracer, replay = StoryTracer(st.actions, 3, room_steps=True), Replay(st.actions, 3)
        plain = StoryTracer(st.actions, 3)
        for q in generate_questions(tracer.tracker):
            tr = tracer.trace(q)
            assert check_trace(tr, replay, q) == q["answer"], (k, q["question"], tr)
            n_q += 1
            with_moves += tr != plain.trace(q)
    assert n_q > 4000 and with_moves > n_q // 4


def test_a_short_false_belief_reads_in_two_steps():
    qs, traces, replay = traces_of(BATHROOM_FB, room_steps=False, short=True)
    q, tr = find(qs, traces, HUNTER)
    assert tr == (
        "Step 3: Jayden moved the banana to the red bathtub. Hunter saw it. Hunter thinks the "
        "banana is in the red bathtub in the bathroom.\n"
        "Step 5: Jayden moved the banana to the green bathtub. Hunter was elsewhere.\n"
        "So Hunter thinks the banana is in the red bathtub in the bathroom.")
    assert check_short_trace(tr, replay, q) == "red bathtub"
    with pytest.raises(TraceError):  # a short trace is not a full one: Jayden's step 4 is not
        check_trace(find(*traces_of(BATHROOM_FB, False, short=True)[:2], SECOND)[1], replay,
                    find(qs, traces, SECOND)[0])
    _, roomed, _ = traces_of(BATHROOM_FB, room_steps=True, short=True)
    assert find(qs, roomed, HUNTER)[1].split("\n")[1] == "Step 4: Hunter left the bathroom. Hunter left."
    # a true belief: the last move Hunter saw decides it, nothing was missed
    qs, traces, replay = traces_of(BATHROOM, room_steps=False, short=True)
    q, tr = find(qs, traces, SECOND)
    assert tr == (
        "Step 4: Jayden moved the banana to the green bathtub. Hunter saw it, Jayden did it. "
        "Hunter thinks Jayden thinks the banana is in the green bathtub in the bathroom.\n"
        "So Hunter thinks Jayden thinks the banana is in the green bathtub in the bathroom.")
    assert check_short_trace(tr, replay, q) == "green bathtub"


def test_the_short_checker_refuses_a_stale_or_incomplete_short_trace():
    qs, traces, replay = traces_of(BATHROOM_FB, room_steps=False, short=True)
    q, tr = find(qs, traces, HUNTER)
    first, missed, last = tr.split("\n")
    with pytest.raises(TraceError, match="step 5 changes the world after step 3 and is missing"):
        check_short_trace(f"{first}\n{last}", replay, q)
    with pytest.raises(TraceError, match="step 5: the trace says"):
        check_short_trace(tr.replace("Hunter was elsewhere", "Hunter saw it"), replay, q)
    with pytest.raises(TraceError, match="step 3: the trace claims"):
        check_short_trace(tr.replace("Hunter thinks the banana is in the red bathtub in the "
                                     "bathroom.\nStep", "Hunter thinks the banana is in the "
                                     "green bathtub in the bathroom.\nStep"), replay, q)
    with pytest.raises(TraceError, match="the conclusion"):
        check_short_trace(tr.replace("So Hunter thinks the banana is in the red",
                                     "So Hunter thinks the banana is in the green"), replay, q)
    # Jayden's view last changed at step 5: naming the stale step 3 instead is refused
    qj, trj = find(qs, traces, "In which container will Jayden search for the banana?")
    stale = ("Step 3: Jayden moved the banana to the red bathtub. Jayden did it. Jayden thinks "
             "the banana is in the red bathtub in the bathroom.\n"
             "So Jayden thinks the banana is in the green bathtub in the bathroom.")
    with pytest.raises(TraceError, match="step 5 last changes what is asked and is missing"):
        check_short_trace(stale, replay, qj)
    assert check_short_trace(trj, replay, qj) == "green bathtub"


def test_every_question_of_sampled_stories_checks_as_a_short_trace():
    n_q = shorter = 0
    for k, st in sampled_stories(23, 300):
        replay, plain = Replay(st.actions, 3), StoryTracer(st.actions, 3)
        tracers = [StoryTracer(st.actions, 3, rooms, short=True) for rooms in (False, True)]
        for q in generate_questions(plain.tracker):
            for tracer in tracers:
                tr = tracer.trace(q)
                assert check_short_trace(tr, replay, q) == q["answer"], (k, q["question"], tr)
            n_q += 1
            shorter += len(tracers[0].trace(q)) < len(plain.trace(q))
    assert n_q > 3000 and shorter > n_q // 4


def test_derived_accepts_a_short_derivation():
    from exploretom.semantics.derived import checked_derivation

    qs, traces, _ = traces_of(BATHROOM_FB, room_steps=False, short=True)
    q, tr = find(qs, traces, HUNTER)
    meta = {**q, "story": {"actions": json.loads(json.dumps(list(BATHROOM_FB)))}}
    reply = f"<think>{tr}</think><answer>red bathtub</answer>"
    assert checked_derivation(reply, "red bathtub", "short", meta) == 1.0
    bad = reply.replace("Hunter was elsewhere", "Hunter saw it")
    assert checked_derivation(bad, "red bathtub", "short", meta) == 0.0


def test_export_trace_rooms(tmp_path):
    from datasets import load_from_disk

    from exploretom.cli import main as cli_main

    src = tmp_path / "s.jsonl"
    assert cli_main(["sample", "--action-set", "A5", "--people", "3", "--moves", "3", "--rooms",
                     "2", "--max-actions", "10", "-n", "12", "--seed", "4", "--label", "-q",
                     "-o", str(src)]) == 0
    for name, extra in (("plain", []), ("rooms", ["--trace-rooms"])):
        assert cli_main(["export", str(src), "-o", str(tmp_path / name), *extra]) == 0
    plain = load_from_disk(str(tmp_path / "plain"))["train"]
    rooms = load_from_disk(str(tmp_path / "rooms"))["train"]
    assert plain["id"] == rooms["id"] and plain["answer"] == rooms["answer"]
    by_id = {json.loads(line)["id"]: json.loads(line) for line in src.read_text().splitlines()}
    longer = 0
    for a, b in zip(plain, rooms):
        meta = json.loads(b["meta"])
        rec = by_id[meta["story_id"]]
        replay = Replay(parse_story({"id": 0, "actions": rec["actions"]}).actions, 2)
        q = rec["questions"][meta["question_index"]]
        assert check_trace(meta["reasoning"], replay, q) == b["answer"]
        longer += meta["reasoning"] != json.loads(a["meta"])["reasoning"]
    assert longer > len(rooms) // 4
    stats = json.loads((tmp_path / "rooms" / "export_stats.json").read_text())
    assert stats["options"]["trace_rooms"] is True and "--trace-rooms" in stats["command"]
    assert cli_main(["export", str(src), "-o", str(tmp_path / "short"), "--short-traces",
                     "--trace-rooms"]) == 0
    short = load_from_disk(str(tmp_path / "short"))["train"]
    assert short["answer"] == plain["answer"]
    shorter = 0
    for a, b in zip(plain, short):
        meta = json.loads(b["meta"])
        rec = by_id[meta["story_id"]]
        replay = Replay(parse_story({"id": 0, "actions": rec["actions"]}).actions, 2)
        q = rec["questions"][meta["question_index"]]
        assert check_short_trace(meta["reasoning"], replay, q) == b["answer"]
        shorter += len(meta["reasoning"]) < len(json.loads(a["meta"])["reasoning"])
    assert shorter > len(short) // 4
    stats = json.loads((tmp_path / "short" / "export_stats.json").read_text())
    assert stats["options"]["short_traces"] is True and "--short-traces" in stats["command"]
