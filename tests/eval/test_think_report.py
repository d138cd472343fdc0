"""eval.think_report: collapse, loops and the truth of a think's presence claims on ToMi.

The story is ToMi's shape; the claims below can be checked by reading it: Hunter was in the
bathroom for the move at line 4 and left at line 5, Mia never came.
"""
from __future__ import annotations

import json

from eval.results import SCHEMA_VERSION
from eval.think_report import main, presence_claims, think_table

STORY = ("Jayden entered the bathroom.\nHunter entered the bathroom.\n"
         "The banana is in the red_bathtub.\nJayden moved the banana to the green_bathtub.\n"
         "Hunter exited the bathroom.\nMia likes the garden")


def line(think: str | None, correct: bool, id_: str = "tomi/1", closed: bool = True) -> dict:
    head = f"<think>{think}</think>" if think is not None else ""
    return {"id": id_, "correct": correct,
            "prompt": [{"role": "user", "content": f"Read.\n\nStory:\n{STORY}\n\nQuestion: Where?"}],
            "response": head + ("<answer>green_bathtub</answer>" if closed else "<answer>green")}


RIGHT = ("Step 3: The banana is in the red_bathtub. Hunter saw it, Jayden saw it.\n"
         "Step 4: Jayden moved the banana to the green_bathtub. Hunter saw it, Jayden did it.\n"
         "Step 5: Hunter exited the bathroom. Hunter left, Jayden saw it.\n"
         "So Hunter thinks Jayden thinks the banana is in the green_bathtub.")


def test_true_presence_claims_are_right():
    claims, steps, made_up, noise = presence_claims(RIGHT, STORY)
    assert steps == 3 and made_up == 0 and noise == 0
    assert claims == [("saw it", True), ("saw it", True), ("saw it", True), ("did it", True),
                      ("left", True), ("saw it", True)]


def test_wrong_made_up_and_noise_steps_are_told_apart():
    think = ("Step 2: Hunter entered the bathroom. Jayden was elsewhere.\n"  # Jayden was there
             "Step 4: Jayden moved the banana to the green_bathtub. Mia saw it.\n"  # Mia never came
             "Step 4: Hunter moved the banana to the green_bathtub. Hunter did it.\n"  # made up
             "Step 6: Mia likes the garden. Hunter was elsewhere.\n"  # a story line, no event
             "So Hunter thinks the banana is in the red_bathtub.")
    claims, steps, made_up, noise = presence_claims(think, STORY)
    assert claims == [("was elsewhere", False), ("saw it", False)]
    assert (steps, made_up, noise) == (4, 1, 1)


def test_think_table_measures_collapse_and_loops():
    lines = [line(RIGHT, True, "tomi/1"), line(RIGHT, True, "tomi/1#shift1"),  # one item twice
             line("Same words.", False, "tomi/2"), line("Same words.", True, "tomi/3"),
             line(None, False, "tomi/4"), line("", False, "tomi/5", closed=False)]
    t = think_table(lines, "tomi")
    assert t["n"] == 6 and t["think"] == round(100 * 4 / 6, 1) and t["empty"] == round(100 * 2 / 6, 1)
    assert t["repeated"] == round(100 * 2 / 6, 1)  # tomi/2 and tomi/3, not tomi/1's two orders
    assert t["unclosed"] == round(100 / 6, 1)
    assert t["accuracy_with_think"] == 75.0 and t["accuracy_without_think"] == 0.0
    assert t["presence_claims"] == 12 and t["presence_right"] == 100.0
    assert t["presence_right_by_part"]["saw it"] == {"n": 8, "right": 100.0}
    assert "presence_claims" not in think_table(lines, "hitom")


def test_main_reads_eval_runs(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "samples").mkdir(parents=True)
    (run / "samples" / "tomi.jsonl").write_text(json.dumps(line(RIGHT, True)) + "\n")
    (run / "results.json").write_text(json.dumps({
        "schema_version": SCHEMA_VERSION, "label": "m",
        "benchmarks": {"tomi": {"metrics": {}, "score": 100.0}}}))
    assert main([str(run)]) == 0
    out = capsys.readouterr().out
    assert "| m | tomi | 1 | 100 | 0 | 0 | 0 | 100 | - |" in out
    assert "| m | 3 | 0 | 0 | 6 | 100 |" in out
    assert main([str(tmp_path / "nothing")]) == 2
    assert "no such file" in capsys.readouterr().err
