"""eval.shortcuts and eval.shortcut_report: the shortcut answers and question kinds of items
small enough to check by hand, and the report over eval runs of scripted readers that always
answer one shortcut (each must match that shortcut on every answer and score its baseline)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from eval import shortcut_report as report
from eval import shortcuts as S
from eval.answers import tagged
from eval.backends.base import ScriptedBackend
from eval.benchmarks import get_benchmark
from eval.benchmarks._common import LETTERS
from eval.rows import make_row, user_text
from eval.runner import Task, run_tasks

SHARED = Path(__file__).resolve().parents[3] / "shared" / "benchmarks"

TOMI_STORY = """1 Sally entered the kitchen.
2 Anne entered the kitchen.
3 The ball is in the basket.
4 Sally exited the kitchen.
5 Anne moved the ball to the box.
6 Sally likes the garden
"""


def tomi_rows(tmp_path: Path) -> list[dict]:
    questions = [("Where will Sally look for the ball?", "basket", "first_order_0_tom"),
                 ("Where is the ball really?", "box", "reality"),
                 ("Where does Anne think that Sally searches for the ball?", "basket",
                  "second_order_1_tom"),
                 ("Where will Anne look for the ball?", "box", "first_order_1_no_tom")]
    txt = "".join(f"{TOMI_STORY}7 {q}\t{a}\t1\n" for q, a, _ in questions)
    (tmp_path / "t_test.txt").write_text(txt)
    (tmp_path / "t_test.trace").write_text(
        "".join(f"enter_agent_0,{qt},false_belief\n" for _, _, qt in questions))
    return get_benchmark("tomi").load(tmp_path / "t_test.txt")


def test_tomi_items_false_and_true_beliefs_reality(tmp_path):
    items = [S.item("tomi", r) for r in tomi_rows(tmp_path)]
    fb1, real, fb2, tb1 = items
    # two containers, named once each: the tie for most named goes to the later mention
    assert fb1.candidates == ["basket", "box"] and fb1.chance == 0.5
    assert fb1.answers == {"last": "box", "first": "basket", "most_named": "box",
                           "true_place": "box"}
    assert (fb1.kind, fb1.order, fb1.gold, fb1.group) == ("false_belief", 1, "basket",
                                                          "false belief, order 1")
    assert (real.kind, real.order, real.group) == ("reality", 0, "reality")
    assert (fb2.kind, fb2.order) == ("false_belief", 2)
    assert (tb1.kind, tb1.order, tb1.gold) == ("true_belief", 1, "box")


def hitom_row(tmp_path: Path) -> dict:
    story = ("1 Amelia and Noah entered the den.\n2 The apple is in the red_box.\n"
             "3 Amelia moved the apple to the green_box.\n4 Amelia exited the den.\n"
             "5 Noah moved the apple to the blue_box.\n6 Noah exited the den.\n"
             "7 Amelia likes the red_box.\n"
             "8 Noah privately told Amelia that the apple is in the green_box.\n")
    item = {"prompting_type": "CoTP", "deception": True, "story_length": 1,
            "question_order": 1, "sample_id": 7, "story": story,
            "question": "Where does Amelia really think the apple is?",
            "choices": "A. red_box, B. green_box, C. blue_box, D. yellow_box",
            "answer": "green_box"}
    (tmp_path / "h.json").write_text(json.dumps({"data": [item]}))
    return get_benchmark("hitom").load(tmp_path / "h.json")[0]


def test_hitom_item_counts_asides_and_claims_as_mentions_not_as_placements(tmp_path):
    it = S.item("hitom", hitom_row(tmp_path))
    # yellow_box is an option the story never names: not a candidate
    assert it.candidates == ["red_box", "green_box", "blue_box"]
    assert it.chance == pytest.approx(1 / 3)
    # red_box and green_box are named twice each (the aside, the claim): the later one wins
    assert it.answers == {"last": "green_box", "first": "red_box", "most_named": "green_box",
                          "true_place": "blue_box"}  # what Noah told is a claim
    assert (it.kind, it.order, it.gold) == ("false_belief", 1, "green_box")


def exploretom_row(options: list[str] | None = None) -> dict:
    story = ("Ann entered the hall.\n"
             "Ann moved the apple to the drawer, which is also located in the hall.\n"
             "Ann left the hall.\n"
             "Bob moved the apple to the key drawer, which is also located in the hall.")
    q = {"question": "In which container will Ann search for the apple?",
         "answer_type": "short", "property": "container_location"}
    meta = {"kind": "belief", "order": 1, "false_belief": True, "property": "container_location",
            "thing": "apple", "people": ["Ann"], "candidates": ["bag", "drawer", "key drawer"],
            "story": {"actions": [
                {"type": "move_object_container", "object": "apple", "container": "drawer"},
                {"type": "move_object_container", "object": "apple", "container": "key drawer"}]}}
    from eval.benchmarks.exploretom import choice_prompt, user_prompt
    if options is None:
        return make_row(id="s-q1", source="exploretom", user=user_prompt(story, q),
                        answer="drawer", answer_type="short", meta=meta)
    return make_row(id="s-q1", source="exploretom", user=choice_prompt(story, q, options),
                    answer=LETTERS[1], answer_type="choice", choices=options, meta=meta)


def test_exploretom_item_matches_the_longest_container_name():
    it = S.item("exploretom", exploretom_row())
    # "key drawer" is not also a mention of "drawer"; "bag" is never named
    assert it.candidates == ["drawer", "key drawer"]
    assert it.answers == {"last": "key drawer", "first": "drawer", "most_named": "key drawer",
                          "true_place": "key drawer"}
    assert (it.kind, it.order, it.gold) == ("false_belief", 1, "drawer")


def test_an_option_written_as_a_sentence_reads_as_its_place():
    options = ["Ann will search for the apple in the key drawer.",
               "Ann will search for the apple in the drawer."]
    row = exploretom_row(options)
    it = S.item("exploretom", row)
    assert it.gold == "drawer"
    line = {"answer_type": "choice", "choices": options, "chosen": "A"}
    assert S.answered_place(line, it.candidates) == "key drawer"
    assert S.answered_place({"answer_type": "short", "extracted": "The Key_Drawer."},
                            it.candidates) == "key drawer"
    assert S.answered_place({"answer_type": "short", "extracted": "cupboard"},
                            it.candidates) == "cupboard"
    assert S.answered_place({"answer_type": "short", "extracted": None}, it.candidates) is None


def test_shared_tomi_sample_is_read_whole_and_its_kinds_follow_the_tom_flag():
    rows = get_benchmark("tomi").load(SHARED / "tomi")
    items = [S.item("tomi", r) for r in rows]
    assert all(items)
    for r, it in zip(rows, items):
        qtype = json.loads(r["meta"])["question_type"]
        if "order" in qtype:  # ToMi's `_tom` questions are exactly the false beliefs here
            assert (it.kind == "false_belief") == (not qtype.endswith("no_tom"))
    table = report.table_of_rows("tomi", rows)
    # ToMi's true beliefs are always the last container, its false beliefs the first
    assert table["true belief, order 1"]["shortcuts"]["last"] == 1.0
    assert table["false belief, order 2"]["shortcuts"]["first"] == 1.0
    assert table["all"]["n"] == 99


def shortcut_replier(rows_of: dict[str, list[dict]], shortcut: str) -> ScriptedBackend:
    """A backend that always answers `shortcut`'s answer (a name, or its option's letter)."""
    key = {}
    for name, rows in rows_of.items():
        for r in rows:
            place = S.item(name, r).answers[shortcut]
            if r["answer_type"] == "choice":
                place = LETTERS[r["choices"].index(place)]
            key[user_text(r)] = tagged(place, "x")
    return ScriptedBackend(lambda conv: key[conv[-1]["content"]], model=f"always-{shortcut}")


def write_run(out: Path, label: str, shortcut: str, rows_of: dict[str, list[dict]]) -> Path:
    tasks = [Task(get_benchmark(name), rows) for name, rows in rows_of.items()]
    run_tasks(tasks, shortcut_replier(rows_of, shortcut), out, label=label,
              log=lambda m: None, progress=False, report=False)
    return out


@pytest.fixture(scope="module")
def shared_rows():
    return {"tomi": get_benchmark("tomi").load(SHARED / "tomi"),
            "hitom": get_benchmark("hitom").load(SHARED / "hitom")}


def test_a_reader_of_one_shortcut_scores_its_baseline_and_matches_it_everywhere(
        tmp_path, shared_rows):
    run = write_run(tmp_path / "last", "last", "last", shared_rows)
    label, samples = report.run_samples(run)
    tables = report.table_of_runs({label: samples})
    for name in ("tomi", "hitom"):
        for group, e in tables[name].items():
            f = e["models"]["last"]
            assert f["equals"]["last"] == 1.0, (name, group)
            assert f["accuracy"] == pytest.approx(e["shortcuts"]["last"]), (name, group)
            assert f["unanswered"] == 0.0
    # ToMi: always the last container is right on every true belief, never on a false one
    assert tables["tomi"]["true belief, order 1"]["models"]["last"]["accuracy"] == 1.0
    assert tables["tomi"]["false belief, order 1"]["models"]["last"]["accuracy"] == 0.0
    md = report.markdown(tables, ["last"])
    assert "| false belief, order 1 | 11 | 50 | 0 | 100 | 0 | 0 | 0 | 100 / 0 / 100 / 100 |" in md


def test_cli_writes_markdown_and_json(tmp_path, shared_rows, capsys):
    run = write_run(tmp_path / "first", "first", "first", {"tomi": shared_rows["tomi"]})
    assert report.main([str(run), "-o", str(tmp_path / "r.md"),
                        "--json", str(tmp_path / "r.json")]) == 0
    figures = json.loads((tmp_path / "r.json").read_text())["runs"]["tomi"]
    assert figures["memory"]["models"]["first"]["accuracy"] == 1.0
    assert "## ToMi" in (tmp_path / "r.md").read_text()
    assert report.main([str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_transfer_report_puts_the_shortcuts_beside_each_benchmark(tmp_path, shared_rows):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "launch"))
    import transfer_report

    write_run(tmp_path / "eval" / "base", "base", "first", shared_rows)
    write_run(tmp_path / "eval" / "sft", "sft", "last", shared_rows)
    s = transfer_report.build(tmp_path, ("base", "sft"))
    fb = s["benchmarks"]["tomi"]["shortcuts"]["false belief, order 2"]
    assert fb["models"]["base"]["accuracy"] == 1.0 and fb["models"]["sft"]["accuracy"] == 0.0
    assert fb["models"]["sft"]["equals"]["last"] == 1.0
    assert "shortcuts" in json.loads((tmp_path / "report" / "summary.json").read_text())[
        "benchmarks"]["hitom"]
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Question kinds and shortcut baselines" in md and "### Hi-ToM" in md


def test_names_tells_a_reader_of_minds_from_a_habit_of_the_same_accuracy(tmp_path):
    """Sally-Anne: Sally's belief and Anne's belief about it are `basket` (the first container),
    the reality and Anne's own belief `box` (the last). A reader of minds names the box exactly
    where it is the answer; always answering the box names it everywhere (and scores half)."""
    items = [S.item("tomi", r) for r in tomi_rows(tmp_path)]
    assert [it.gold for it in items] == ["basket", "box", "basket", "box"]
    mind = [(it, it.gold) for it in items]
    habit = [(it, "box") for it in items]
    assert report.names_shortcut(mind, "last") == {"right": 1.0, "n_right": 2,
                                                   "wrong": 0.0, "n_wrong": 2}
    assert report.names_shortcut(habit, "last") == {"right": 1.0, "n_right": 2,
                                                    "wrong": 1.0, "n_wrong": 2}
    assert report.names_shortcut(mind, "first")["wrong"] == 0.0


def test_transfer_report_says_where_a_habit_names_the_last_container(tmp_path, shared_rows):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "launch"))
    import transfer_report

    write_run(tmp_path / "eval" / "base", "base", "first", shared_rows)
    write_run(tmp_path / "eval" / "sft", "sft", "last", shared_rows)
    s = transfer_report.build(tmp_path, ("base", "sft"))
    names = s["benchmarks"]["tomi"]["shortcuts"]["all"]["models"]["sft"]["names"]["last"]
    # the shared ToMi sample: the last container is the answer to 55 questions, not to 44
    assert names == {"right": 1.0, "n_right": 55, "wrong": 1.0, "n_wrong": 44}
    md = (tmp_path / "report" / "report.md").read_text()
    assert ("Names, where it is the answer / where it is not (%): the last container named: "
            "base 0.0 / 0.0, sft 100.0 / 100.0; the first: base 100.0 / 100.0, sft 0.0 / 0.0.") in md


def test_an_answer_the_story_never_names_is_counted_and_reported(tmp_path):
    """A model that answers "cupboard" to Sally-Anne names no container of the story: a word it
    favours, not one it read. The base names the story's containers only."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "launch"))
    import transfer_report

    items = [S.item("tomi", r) for r in tomi_rows(tmp_path)]
    base = [(it, {"answer_type": "short", "extracted": it.gold, "correct": True}) for it in items]
    sft = [(it, {"answer_type": "short", "extracted": "the Cupboard." if i % 2 else it.gold,
                 "correct": not i % 2}) for i, it in enumerate(items)]
    figures = {"base": report.answers_of(base), "sft": report.answers_of(sft)}
    assert (figures["base"]["off_story"], figures["sft"]["off_story"]) == (0.0, 0.5)
    assert figures["sft"]["unanswered"] == 0.0
    line = transfer_report.habit_line({"all": {"models": figures}}, ["base", "sft"])
    assert line.endswith("Answers naming no container of the story (a room, a person, an option "
                         "the story never mentions; not read from it) (%): base 0.0, sft 50.0.")
