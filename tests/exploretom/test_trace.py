"""Reasoning traces (exploretom.semantics.trace) and their checker
(exploretom.semantics.trace_check).

The checker re-derives every statement of a trace from the story with its own implementation of
the rules, so a trace that passes and concludes the tracker's label is a derivation two
implementations agree on. The large test runs it on every question of 10,000 sampled stories.
"""
from __future__ import annotations

import json
import random
import time
from collections import Counter

import pytest

from eval.answers import tagged
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.sampler import sample_story
from exploretom.semantics.build import announce, carry, enter, leave, put, tell, update
from exploretom.semantics.label import label_story
from exploretom.semantics.questions import generate_questions
from exploretom.semantics.replay import Replay
from exploretom.semantics.story import parse_story
from exploretom.semantics.trace import StoryTracer, story_traces
from exploretom.semantics.trace_check import TraceError, check_story, check_trace


def story(*actions):
    return parse_story({"id": "t", "actions": list(actions)})


def traced(st, max_order=2):
    """(questions, traces, replay) of a story."""
    qs = label_story(st, max_order)["questions"]
    return qs, story_traces(st.actions, qs, max_order), Replay(st.actions, max_order)


def check_every_question(actions, max_order):
    """The tracer of a story, and each question it asks with its trace, every trace checked
    against the independent replay."""
    tracer, replay = StoryTracer(actions, max_order), Replay(actions, max_order)
    checked = []
    for q in generate_questions(tracer.tracker):
        tr = tracer.trace(q)
        assert check_trace(tr, replay, q) == q["answer"], q["question"]
        checked.append((q, tr))
    return tracer, checked


def find(qs, traces, question):
    [(q, tr)] = [(q, tr) for q, tr in zip(qs, traces) if q["question"] == question]
    return q, tr


# Table 11 of the ExploreToM paper (its questions and answers in the table's last rows).
TABLE_11 = (enter("David", "study room"), enter("Sarah", "study room"),
            put("Sarah", "prototype model", "metal filing cabinet"), leave("David", "study room"),
            enter("Mark", "study room"), put("Mark", "prototype model", "wooden chest"))


def test_table_11_traces_derive_the_papers_answers():
    qs, traces, replay = traced(story(*TABLE_11))
    for person, answer in (("David", "metal filing cabinet"), ("Sarah", "wooden chest"),
                           ("Mark", "wooden chest")):
        q, tr = find(qs, traces,
                     f"In which container will {person} search for the prototype model?")
        assert q["answer"] == answer and check_trace(tr, replay, q) == answer
    q, tr = find(qs, traces, "In which container will David search for the prototype model?")
    # David saw Sarah's move, then left: he did not see Mark's.
    assert tr == (
        "Step 3: Sarah moved the prototype model to the metal filing cabinet. David saw it. "
        "David thinks the prototype model is in the metal filing cabinet in the study room.\n"
        "Step 6: Mark moved the prototype model to the wooden chest. David was elsewhere.\n"
        "So David thinks the prototype model is in the metal filing cabinet in the study room.")
    q, tr = find(qs, traces, "In which container is the prototype model now?")
    assert tr.split("\n")[1] == ("Step 6: Mark moved the prototype model to the wooden chest. "
                                 "Now the prototype model is in the wooden chest in the study "
                                 "room.")
    assert check_story(story(*TABLE_11).actions, qs, traces) == [q["answer"] for q in qs]


def test_second_order_trace_states_the_nested_view():
    # Sarah saw David leave before Mark's move: Sarah thinks David still thinks "cabinet".
    qs, traces, replay = traced(story(*TABLE_11))
    q, tr = find(qs, traces, "In which container does Sarah think that David will search for "
                 "the prototype model?")
    assert q["answer"] == "metal filing cabinet"
    assert "Sarah did it, David saw it." in tr and "Sarah saw it, David was elsewhere." in tr
    assert "Sarah thinks David thinks the prototype model is in the metal filing cabinet" in tr
    assert check_trace(tr, replay, q) == "metal filing cabinet"


def perturbations(tr: str):
    """Wrong versions of a trace: one observer's part swapped for another's, a person
    swapped, a step dropped, a value changed, the conclusion changed."""
    swaps = [("saw it", "was elsewhere"), ("was elsewhere", "saw it"),
             ("heard it", "did not hear it"), ("did not hear it", "heard it"),
             ("peeked", "was elsewhere"), ("was distracted", "saw it"),
             ("saw them leave", "was elsewhere"), ("saw them arrive", "was elsewhere")]
    for old, new in swaps:
        if f" {old}" in tr:
            yield tr.replace(f" {old}", f" {new}", 1)
    lines = tr.split("\n")
    if len(lines) > 1:
        yield "\n".join(lines[1:])
    if " in the " in tr:
        yield tr.replace(" in the ", " in the other ", 1)
    yield tr.replace(" thinks ", " thinks that ", 1) if " thinks " in tr else tr + " Yes."


def test_a_perturbed_trace_fails_the_checker():
    qs, traces, replay = traced(story(*TABLE_11))
    q, tr = find(qs, traces, "In which container does Sarah think that David will search for "
                 "the prototype model?")
    # as if David had stayed for Mark's move
    swapped = tr.replace("Sarah saw it, David was elsewhere.", "Sarah saw it, David saw it.")
    assert swapped != tr
    with pytest.raises(TraceError, match="step 6"):
        check_trace(swapped, replay, q)
    observer = tr.replace("Sarah did it, David saw it.", "Sarah saw it, David did it.", 1)
    assert observer != tr
    with pytest.raises(TraceError, match="step 3"):
        check_trace(observer, replay, q)
    n = 0
    for q, tr in zip(qs, traces):
        for bad in perturbations(tr):
            n += 1
            with pytest.raises(TraceError):
                check_trace(bad, replay, q)
    assert n > 2 * len(qs)


def test_perturbed_traces_fail_on_sampled_stories():
    """Every perturbation of every trace of stories of every action set is caught."""
    rng = random.Random(5)
    caught = 0
    for k, aset in enumerate(ACTION_SETS):
        st, _ = sample_story(Conditions(aset, 3, 3, 2, 10, asymmetric=k % 2 == 0), rng, k,
                             max_order=3)
        qs, traces, replay = traced(st, 3)
        for q, tr in zip(qs, traces):
            for bad in perturbations(tr):
                with pytest.raises(TraceError):
                    check_trace(bad, replay, q)
                caught += 1
    assert caught > 1000


def test_messages_peekers_and_state_traces():
    # Anne puts the apple in the box, Beth peeks; Anne leaves; Carl moves it to the basket and
    # tells Anne. Beth watched Anne salt it in secret.
    st = story(enter("Anne", "kitchen"), put("Anne", "apple", "box", peeking=["Beth"]),
               update("Anne", "apple", "is salted", "Anne salted the apple.", False,
                      "<is_salted>", peeking=["Beth"]),
               leave("Anne", "kitchen"), enter("Carl", "kitchen"), put("Carl", "apple", "basket"),
               tell("Carl", "Anne", ("apple", "container_location", "basket")))
    qs, traces, replay = traced(st, 3)
    assert check_story(st.actions, qs, traces, 3) == [q["answer"] for q in qs]
    q, tr = find(qs, traces, "In which container will Anne search for the apple?")
    assert q["answer"] == "basket" and "Anne was elsewhere." in tr
    assert ("Step 7: Carl told privately to Anne that the apple is in the basket. "
            "Anne heard it.") in tr
    q, tr = find(qs, traces, "Does Anne believe that Beth believes that the apple is salted? "
                 "Answer yes or no.")
    assert q["answer"] == "no" and "Anne did it, Beth peeked." in tr
    assert tr.endswith("So Anne thinks Beth does not know whether the apple is salted.")


def test_traces_are_compact_and_deterministic():
    rng = random.Random(3)
    st, _ = sample_story(Conditions("A7", 3, 4, 2, 14), rng, "c", max_order=2)
    qs, traces, _ = traced(st)
    assert traces == story_traces(st.actions, qs, 2)
    for q, tr in zip(qs, traces):
        assert len(tr.split("\n")) - 1 <= sum(a.type not in ("enter_room", "leave_room")
                                              for a in st.actions) + 2


N_STORIES = 10_000


def test_every_question_of_10000_sampled_stories_checks():
    """All action sets, with and without asymmetry, orders 0-4: every trace passes the checker
    and derives the tracker's label. Small stories (2 people, at most 8 actions) keep it fast;
    test_every_question_of_larger_stories_checks covers more people and longer stories."""
    rng = random.Random(20)
    sets = list(ACTION_SETS)
    start, n_q, orders = time.perf_counter(), 0, set()
    for k in range(N_STORIES):
        cond = Conditions(sets[k % len(sets)], 2, 2, 2, 8, asymmetric=(k // len(sets)) % 2 == 1)
        st, _ = sample_story(cond, rng, k, max_order=2)  # orders <= 2 do not depend on it
        _, checked = check_every_question(st.actions, 4)
        orders.update(q["order"] for q, _ in checked)
        n_q += len(checked)
    assert orders == {0, 1, 2, 3, 4} and n_q > 10 * N_STORIES
    print(f"{N_STORIES} stories, {n_q} questions in {time.perf_counter() - start:.0f} s")


def test_every_question_of_larger_stories_checks():
    """3-4 people, up to 16 actions, up to 3 modifiers; every other story from the
    unconstrained sampler (the paper's: distracted listeners, talk by people in no room, ...)."""
    rng = random.Random(21)
    for k in range(300):
        aset = list(ACTION_SETS)[k % len(ACTION_SETS)]
        cond = Conditions(aset, 3 + k % 2, 4, 3, 16, asymmetric=k % 3 == 0, max_asymmetric=3)
        st, _ = sample_story(cond, rng, k, max_order=3, constrained=k % 2 == 0)
        check_every_question(st.actions, 3)


def test_export_rows_carry_a_checked_trace_and_sft_can_think_it(tmp_path):
    from datasets import load_from_disk

    from exploretom.cli import main as cli_main
    from rl.data import sft_examples, traced_rows

    src = tmp_path / "s.jsonl"
    assert cli_main(["sample", "--action-set", "A5", "--people", "3", "--moves", "3", "--rooms",
                     "2", "--max-actions", "10", "-n", "12", "--seed", "4", "--label", "-q",
                     "-o", str(src)]) == 0
    assert cli_main(["export", str(src), "-o", str(tmp_path / "ds")]) == 0
    ds = load_from_disk(str(tmp_path / "ds"))["train"]
    by_id = {json.loads(line)["id"]: json.loads(line) for line in src.read_text().splitlines()}
    for row in ds:
        meta = json.loads(row["meta"])
        rec = by_id[meta["story_id"]]
        q = rec["questions"][meta["question_index"]]
        replay = Replay(parse_story({"id": 0, "actions": rec["actions"]}).actions, 2)
        assert check_trace(meta["reasoning"], replay, q) == row["answer"]
    assert traced_rows(ds) == len(ds)
    assert traced_rows(ds.map(lambda r: {"meta": json.dumps({"order": 1})})) == 0
    row = ds[0]
    reasoning = json.loads(row["meta"])["reasoning"]
    traced_ex = sft_examples(ds.select([0]), think="trace")[0]["completion"][0]["content"]
    assert traced_ex == tagged(row['answer'], reasoning)
    plain = sft_examples(ds.select([0]), think="template", think_default="I track who saw what.")
    assert plain[0]["completion"][0]["content"] == \
        tagged(row['answer'], "I track who saw what.")


def test_export_stops_on_labels_the_tracker_no_longer_derives(tmp_path, capsys):
    from exploretom.cli import main as cli_main

    src = tmp_path / "s.jsonl"
    assert cli_main(["sample", "--action-set", "A1", "--people", "3", "--moves", "2", "--rooms",
                     "2", "--max-actions", "8", "-n", "10", "--seed", "1", "--label", "-q",
                     "-o", str(src)]) == 0
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    q = next(q for q in recs[1]["questions"] if q["property"] == "room_location")
    q["answer"] = "nowhere"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    assert cli_main(["export", str(src), "-o", str(tmp_path / "ds")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'nowhere'" in err and "relabel" in err
    assert not (tmp_path / "ds").exists()


def test_docs_show_the_checked_traces_of_table_11(capsys):
    """docs/exploretom.md prints what `python -m exploretom trace` gives for table 11."""
    from pathlib import Path

    from exploretom.cli import main

    root = Path(__file__).resolve().parents[2]
    assert main(["trace", str(root / "docs/examples/table11.jsonl")]) == 0
    printed = capsys.readouterr().out.strip()
    doc = (root / "docs/exploretom.md").read_text()
    block = doc.split("python -m exploretom trace docs/examples/table11.jsonl", 1)[1]
    block = block.split("```text\n", 1)[1].split("\n```", 1)[0]
    assert block == printed
    assert len([line for line in printed.splitlines() if " -> " in line]) == 19


def test_export_of_low_orders_traces_at_the_order_the_file_was_labelled_at(tmp_path):
    """Mateo saw Chloe miss his move, so her out-of-date message does not fool him (he has a
    model of Chloe's belief); exporting only order 1 traces at the file's order and says so."""
    from datasets import load_from_disk

    from exploretom.cli import main as cli_main

    src = tmp_path / "s.jsonl"
    assert cli_main(["sample", "--action-set", "A1", "--people", "3", "--moves", "2", "--rooms",
                     "2", "--max-actions", "8", "-n", "12", "--seed", "2", "--label", "-q",
                     "-o", str(src)]) == 0
    calc = story(enter("Mateo", "office"), enter("Chloe", "office"),
                 put("Mateo", "calculator", "backpack"), leave("Chloe", "office"),
                 put("Mateo", "calculator", "box"),
                 tell("Chloe", "Mateo", ("calculator", "container_location", "backpack")))
    rec = label_story(calc, 2)
    q = next(q for q in rec["questions"]
             if q["question"] == "In which container will Mateo search for the calculator?")
    assert q["answer"] == "box"
    assert StoryTracer(calc.actions, 1).answer(q) == "box"
    with src.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    assert cli_main(["export", str(src), "-o", str(tmp_path / "ds"), "--orders", "1"]) == 0
    rows = [r for d in load_from_disk(str(tmp_path / "ds")).values() for r in d
            if r["id"].startswith("t-")]
    mateo = [r for r in rows if "Mateo search" in r["prompt"][-1]["content"]
             and "container" in r["prompt"][-1]["content"]]
    assert [r["answer"] for r in mateo] == ["box"]
    assert json.loads(mateo[0]["meta"])["reasoning"].endswith(
        "Mateo ignores it, knowing Chloe's news is out of date.\n"
        "So Mateo thinks the calculator is in the box in the office.")


def test_a_stale_message_that_is_kept_out_is_in_the_trace():
    """Chloe left before Mateo's second move; her message 'backpack' cannot fool him."""
    calc = story(enter("Mateo", "office"), enter("Chloe", "office"),
                 put("Mateo", "calculator", "backpack"), leave("Chloe", "office"),
                 put("Mateo", "calculator", "box"),
                 tell("Chloe", "Mateo", ("calculator", "container_location", "backpack")))
    qs, traces, replay = traced(calc)
    q, tr = find(qs, traces, "In which container will Mateo search for the calculator?")
    line = ("Step 6: Chloe told privately to Mateo that the calculator is in the backpack. Mateo "
            "heard it. Mateo ignores it, knowing Chloe's news is out of date.")
    assert line in tr.split("\n") and check_trace(tr, replay, q) == "box"
    with pytest.raises(TraceError, match="step 6"):
        check_trace(tr.replace(" Mateo ignores it, knowing Chloe's news is out of date.", ""),
                    replay, q)
    # Chloe herself has no reason to ignore anything: claiming she did fails.
    q, tr = find(qs, traces, "In which container will Chloe search for the calculator?")
    forged = tr.replace("\nSo", "\nStep 6: Chloe told privately to Mateo that the calculator is "
                        "in the backpack. Chloe said it. Chloe ignores it, knowing Chloe's news "
                        "is out of date.\nSo")
    with pytest.raises(TraceError, match="step 6"):
        check_trace(forged, replay, q)


# Anne entered the kitchen. Carl entered the kitchen. Carl moved the apple to the box. Carl left
# the kitchen. Anne moved the apple to the basket. Carl told privately to Dave that the apple is
# in the box. Dave told privately to Anne that the apple is in the box.
BOX = ("apple", "container_location", "box")
RELAYED = (enter("Anne", "kitchen"), enter("Carl", "kitchen"), put("Carl", "apple", "box"),
           leave("Carl", "kitchen"), put("Anne", "apple", "basket"), tell("Carl", "Dave", BOX),
           tell("Dave", "Anne", BOX))
CURRENT = ("Step 7: Dave told privately to Anne that the apple is in the box. Anne heard it. Anne "
           "ignores it: Anne has been in the kitchen since step 5, so Anne would have seen any "
           "change.")


def test_a_value_known_to_be_current_is_kept_in_the_trace():
    """SEMANTICS.md 2026-11-27: the trace says why Anne keeps the basket against Dave's news."""
    st = story(*RELAYED)
    qs, traces, replay = traced(st)
    q, tr = find(qs, traces, "In which container will Anne search for the apple?")
    assert tr == (
        "Step 3: Carl moved the apple to the box. Anne saw it. Anne thinks the apple is in the "
        "box in the kitchen.\n"
        "Step 5: Anne moved the apple to the basket. Anne did it. Anne thinks the apple is in the "
        "basket in the kitchen.\n" + CURRENT + "\n"
        "So Anne thinks the apple is in the basket in the kitchen.")
    assert check_trace(tr, replay, q) == "basket"
    assert check_story(st.actions, qs, traces) == [q["answer"] for q in qs]
    kept = (" Anne ignores it: Anne has been in the kitchen since step 5, so Anne would have seen "
            "any change.")
    forged = [tr.replace(kept, ""),  # the reason left out
              tr.replace("since step 5", "since step 3"),  # the wrong sighting
              tr.replace("been in the kitchen", "been in the garden"),
              tr.replace("Anne has been", "Anne and Carl have been"),
              tr.replace(kept, " Anne ignores it, knowing Dave's news is out of date.")]
    for bad in forged:
        assert bad != tr
        with pytest.raises(TraceError, match="step 7"):
            check_trace(bad, replay, q)
    # Dave has no reason to keep anything: claiming he did fails.
    q, tr = find(qs, traces, "In which container will Dave search for the apple?")
    with pytest.raises(TraceError, match="step 7"):
        check_trace(tr.replace("\nSo", "\nStep 7: Dave told privately to Anne that the apple is "
                               "in the box. Dave said it. Dave ignores it: Dave has been in the "
                               "kitchen since step 5, so Dave would have seen any change.\nSo"),
                    replay, q)


def test_a_model_of_a_person_who_stayed_is_kept_in_the_trace():
    """Beth saw Anne stay and overheard Dave's news: both levels say why they keep the basket."""
    st = story(enter("Beth", "kitchen"), *RELAYED[:-1],
               tell("Dave", "Anne", BOX, peeking=["Beth"]))
    qs, traces, replay = traced(st, 3)
    q, tr = find(qs, traces, "In which container does Beth think that Anne will search for the "
                 "apple?")
    assert q["answer"] == "basket"
    assert tr.split("\n")[-2] == (
        "Step 8: Dave told privately to Anne that the apple is in the box. Beth overheard it, "
        "Anne heard it. Beth ignores it: Beth has been in the kitchen since step 6, so Beth "
        "would have seen any change. Beth thinks Anne ignores it: Beth and Anne have been in the "
        "kitchen since step 6, so Anne would have seen any change.")
    assert check_story(st.actions, qs, traces, 3) == [q["answer"] for q in qs]
    # Without Beth's own sentence the trace fails: each level that keeps its value says so.
    with pytest.raises(TraceError, match="step 8"):
        check_trace(tr.replace(" Beth ignores it: Beth has been in the kitchen since step 6, so "
                               "Beth would have seen any change.", ""), replay, q)


def test_the_semantics_stories_of_current_values_check():
    """Every question of the test_semantics.py stories of 2026-11-27, orders 0-4."""
    carl_saw_the_box = RELAYED[:5]
    peel = update("Beth", "apple", "is peeled", "Beth peeled the apple.", True, "<is_peeled>")
    stories = [RELAYED,
               (*carl_saw_the_box, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX)),
               (enter("Beth", "kitchen"), *carl_saw_the_box,
                enter("Erin", "kitchen", distracted=["Anne"]), tell("Carl", "Dave", BOX),
                tell("Dave", "Anne", BOX, peeking=["Beth"])),
               (enter("Dave", "garden"), put("Dave", "apple", "crate"), leave("Dave", "garden"),
                enter("Beth", "garden"), carry("Beth", "apple", "kitchen"),
                put("Beth", "apple", "box"), enter("Anne", "kitchen"), peel,
                tell("Dave", "Anne", ("apple", "room_location", "garden")),
                tell("Dave", "Anne", ("apple", "container_location", "crate"))),
               (enter("Dave", "kitchen"), put("Dave", "apple", "box"), leave("Dave", "kitchen"),
                enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Carl", "kitchen"),
                put("Anne", "apple", "basket"), tell("Dave", "Erin", BOX),
                enter("Erin", "kitchen"), announce("Erin", BOX))]
    kept = 0
    for actions in stories:
        _, checked = check_every_question(story(*actions).actions, 4)
        kept += sum("would have seen any change" in tr for _, tr in checked)
    assert kept > 50


# SEMANTICS.md 2026-11-28, the story: ... Beth entered the kitchen. Beth moved the apple to
# the garden (Anne watching). Carl told privately to Dave that the apple is in the box. Dave told
# privately to Anne that the apple is in the box.
CARRIED_OUT = (*RELAYED[:5], enter("Beth", "kitchen"), carry("Beth", "apple", "garden"),
               tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX))
GONE = ("Anne ignores it: Anne saw Beth carry the apple out of the kitchen at step 7 and has been "
        "in the kitchen since.")


def test_knowing_where_the_object_is_not_is_in_the_trace():
    """Anne saw the apple carried out of the kitchen and stayed: the trace says why she keeps
    Dave's "box" out (her own questions are not asked: she does not know where it went; the
    trace of what she thinks Dave believes passes through her own belief)."""
    st = story(*CARRIED_OUT)
    qs, traces, replay = traced(st)
    assert not [q for q in qs if q["people"] == ["Anne"] and q["thing"] == "apple"]
    q, tr = find(qs, traces, "In which container does Anne think that Dave will search for the "
                 "apple?")
    assert tr.split("\n")[-2] == (
        "Step 9: Dave told privately to Anne that the apple is in the box. Anne heard it, Dave "
        "said it. " + GONE + " Anne thinks Dave thinks the apple is in the box in the kitchen.")
    assert "Step 7: Beth moved the apple to the garden. Anne saw them leave, Dave was elsewhere. " \
           "Anne thinks the apple is being carried to another room." in tr
    assert check_trace(tr, replay, q) == "box"
    assert check_story(st.actions, qs, traces) == [q["answer"] for q in qs]
    forged = [tr.replace(" " + GONE, ""),  # the reason left out
              tr.replace("at step 7", "at step 5"),  # the wrong step
              tr.replace("saw Beth carry", "saw Carl carry"),  # the wrong carrier
              tr.replace("out of the kitchen", "out of the garden"),
              tr.replace("Anne saw Beth", "Anne and Dave saw Beth"),
              tr.replace(GONE, "Anne ignores it: Anne has been in the kitchen since step 7, so "
                               "Anne would have seen any change."),
              tr.replace(GONE, "Anne ignores it, knowing Dave's news is out of date.")]
    for bad in forged:
        assert bad != tr
        with pytest.raises(TraceError, match="step 9"):
            check_trace(bad, replay, q)
    # The direct-speaker twin: Carl's news is also out of date to her, which is said first.
    st = story(*CARRIED_OUT[:-2], tell("Carl", "Anne", BOX))
    qs, traces, replay = traced(st)
    q, tr = find(qs, traces, "In which container does Anne think that Carl will search for the "
                 "apple?")
    assert "Anne ignores it, knowing Carl's news is out of date." in tr
    assert check_story(st.actions, qs, traces) == [q["answer"] for q in qs]


def test_the_order_two_chain_that_knows_where_it_is_not_is_in_the_trace():
    """Beth watched Anne watch Erin carry the apple out, both stayed; Beth overhears Dave's news:
    each level of the trace says why it keeps it out."""
    st = story(enter("Carl", "kitchen"), put("Carl", "apple", "box"), leave("Carl", "kitchen"),
               enter("Anne", "kitchen"), enter("Beth", "kitchen"), enter("Erin", "kitchen"),
               put("Erin", "apple", "basket"), carry("Erin", "apple", "garden"),
               tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX, peeking=["Beth"]))
    qs, traces, replay = traced(st, 3)
    q, tr = find(qs, traces, "In which container does Beth think that Anne thinks that Dave will "
                 "search for the apple?")
    assert tr.split("\n")[-2] == (
        "Step 10: Dave told privately to Anne that the apple is in the box. Beth overheard it, "
        "Anne heard it, Dave said it. Beth ignores it: Beth saw Erin carry the apple out of the "
        "kitchen at step 8 and has been in the kitchen since. Beth thinks Anne ignores it: Beth "
        "and Anne saw Erin carry the apple out of the kitchen at step 8 and have been in the "
        "kitchen since. Beth thinks Anne thinks Dave thinks the apple is in the box in the "
        "kitchen.")
    assert check_story(st.actions, qs, traces, 3) == [q["answer"] for q in qs]
    with pytest.raises(TraceError, match="step 10"):
        check_trace(tr.replace(" Beth thinks Anne ignores it: Beth and Anne saw Erin carry the "
                               "apple out of the kitchen at step 8 and have been in the kitchen "
                               "since.", ""), replay, q)


def test_the_semantics_stories_of_knowing_where_it_is_not_check():
    """Every question of the test_semantics.py stories of 2026-11-28, orders 0-4."""
    from tests.exploretom import test_semantics as sem

    watched = sem.WATCHED_TOGETHER
    stories = [(*sem.CARRIED_OUT, tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX)),
               (*sem.CARRIED_OUT, tell("Carl", "Anne", BOX)),
               (*sem.CARRIED_OUT, tell("Beth", "Dave", ("apple", "room_location", "garden")),
                tell("Dave", "Anne", ("apple", "room_location", "garden")),
                tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX)),
               (*sem.CARRIED_OUT, carry("Beth", "apple", "kitchen"),
                put("Beth", "apple", "basket"), tell("Carl", "Dave", BOX),
                tell("Dave", "Anne", BOX)),
               (*sem.CARRIED_OUT, enter("Erin", "kitchen", distracted=["Anne"]),
                tell("Carl", "Dave", BOX), tell("Dave", "Anne", BOX)),
               (*watched, tell("Dave", "Anne", BOX, peeking=["Beth"])),
               (*watched, leave("Anne", "kitchen"), enter("Anne", "kitchen"),
                tell("Dave", "Anne", BOX, peeking=["Beth"])),
               (*watched, enter("Dave", "kitchen", distracted=["Anne"]), leave("Dave", "kitchen"),
                tell("Dave", "Anne", BOX, peeking=["Beth"])),
               (*watched, enter("Dave", "kitchen"), announce("Dave", BOX))]
    gone = Counter()
    for actions in stories:
        tracer, _ = check_every_question(story(*actions).actions, 4)
        for (_, chain, _), why in tracer.tracker.kept.items():
            gone[len(chain)] += why[0] == "gone"
    assert all(gone[n] for n in (1, 2, 3, 4)), gone


def message_heavy_story(seed: int, max_order: int, people: int = 4, length: int = 24):
    """A random valid story with many world-state messages, peekers and distractions (a third
    of the actions carry a modifier): what the sampler rarely makes."""
    import dataclasses

    from exploretom.sampling.lexicon import sample_context
    from exploretom.sampling.sampler import StorySampler
    from exploretom.semantics.tracker import StoryError, Tracker

    rng = random.Random(seed)
    ctx = sample_context(rng, people=people, rooms=2)
    sampler = StorySampler(Conditions("A7", people, 3, 2, length), ctx, rng)
    weights = {"enter_room": 2, "leave_room": 1, "move_object_container": 2,
               "move_object_room": 0.5, "update_object_state": 0.7, "info_private": 3,
               "info_public": 3, "chitchat_private": 0.2}
    t = Tracker(max_order)
    for _ in range(length):
        for _ in range(10):
            options = sampler.candidates(t, rng.choices(list(weights), list(weights.values()))[0])
            if not options:
                continue
            a = rng.choice(options)
            if a.type != "move_object_room" and rng.random() < 0.35:
                w = sampler.witnesses(t, a)
                who = sorted(w - {a.person}) if rng.random() < 0.5 else []
                out = sorted(set(ctx.people) - w)
                if who:
                    a = dataclasses.replace(a, distracted=(rng.choice(who),))
                elif out:
                    a = dataclasses.replace(a, peeking=(rng.choice(out),))
            try:
                t.apply(a)
                break
            except StoryError:
                continue
    return t


def test_every_question_of_message_heavy_stories_checks():
    """Values kept because they are known to be current (or news known to be stale), at orders
    1 to 4 of the chains tracked: the checker re-derives each, with its own reading of who
    stayed where."""
    kept: dict[tuple[str, int], int] = {}
    for k in range(300):
        t = message_heavy_story(k, 3)
        tracer, _ = check_every_question(t.actions, 3)
        for (_, chain, _), why in tracer.tracker.kept.items():
            kept[(why[0], len(chain))] = kept.get((why[0], len(chain)), 0) + 1
    assert all(kept.get(("current", n)) for n in (1, 2, 3, 4)), kept
    assert kept.get(("stale", 1)) and kept.get(("stale", 2)), kept
    assert kept.get(("gone", 1)), kept
