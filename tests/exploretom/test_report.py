"""`python -m exploretom report`: the paper's tables 1 and 6 and figure 6 from search runs."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from exploretom.cli import main as cli_main
from exploretom.report import command as report
from eval.jsonl import InputError

TARGET = "reasoner:world"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> dict:
    """One labelled story whose structure the hand-made search records reuse."""
    path = tmp_path_factory.mktemp("base") / "a1.jsonl"
    assert cli_main(["sample", "--action-set", "A1", "--people", "2", "--moves", "4", "--rooms",
                     "1", "--max-actions", "12", "-n", "1", "--seed", "0", "--label", "-q",
                     "-o", str(path)]) == 0
    story = json.loads(path.read_text().splitlines()[0])
    assert len(story["actions"]) >= 6
    return story


def record(base: dict, sid: str, method: str, asym: bool, n_actions: int, marks: str,
           evaluations: int = 50, target: str = TARGET, found: bool = True) -> dict:
    """A search-run line: `marks` lists questions as order + i/n (interesting or not) + T/F
    (correct), e.g. "1iT 1nF 2iT"."""
    questions = []
    template = base["questions"][0]
    for m in marks.split():
        questions.append({**template, "order": int(m[0]), "interesting": m[1] == "i",
                          "response": "the kitchen", "correct": m[2] == "T"})
    scored = [q for q in questions if q["order"] == 1]
    return {
        **{k: v for k, v in base.items() if k != "questions"},
        "id": sid, "actions": base["actions"][:n_actions], "questions": questions,
        "method": method, "target": target, "seed": 0, "evaluations": evaluations,
        "found": found, "accuracy": sum(q["correct"] for q in scored) / len(scored),
        "setting": {"action_set": "A1", "asymmetric": asym, "people": 2, "moves": 4,
                    "rooms": 1, "max_actions": 12},
    }


def hand_made(base: dict) -> list[dict]:
    return [
        # A*: without asymmetry 3/4 first-order correct (interesting 1/2, not 2/2);
        # with asymmetry 0/2. Other orders are left out of the tables.
        record(base, "a-sym", "astar", False, 2, "1iT 1iF 1nT 1nT 2iF 0nT", evaluations=50),
        record(base, "a-asym", "astar", True, 4, "1iF 1nF", evaluations=30, found=False),
        # baseline: 4/4 and 1/2 on the same two settings
        record(base, "b-sym", "baseline", False, 4, "1iT 1nT 1nT 1nT 2nF"),
        record(base, "b-asym", "baseline", True, 6, "1iT 1nF"),
    ]


def write(path: Path, recs: list[dict], extra_lines: tuple[str, ...] = ()) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + "".join(extra_lines))
    return path


def run_report(inputs, out: Path, *options: str) -> tuple[str, dict]:
    parser = argparse.ArgumentParser()
    report.add_arguments(parser)
    assert report.run(parser.parse_args([*map(str, inputs), "-o", str(out), *options])) == 0
    return (out / "report.md").read_text(), json.loads((out / "report.json").read_text())


def test_tables_hold_the_right_numbers(base, tmp_path):
    run = write(tmp_path / "run.jsonl", hand_made(base),
                (json.dumps({"id": "x", "error": "line 9: bad story"}) + "\n",))
    md, data = run_report([run], tmp_path / "rep")
    # counts
    assert "| A* | reasoner:world | 2 | 1 (50%) | 80 | 40.0 | 3.0 | 6 | 0.500 | 0.500 | 0.375 |" in md
    assert ("| baseline (overgenerate and filter) | reasoner:world | 2 | 2 (100%) | 100 | 50.0 "
            "| 5.0 | 6 | 0.833 | 0.714 | 0.750 |") in md
    assert "error lines skipped: 1" in md
    # table 1: rows = action sets, columns = target x asymmetry, lowest in bold
    assert "| action set | reasoner:world \u2717 | reasoner:world \u2713 |" in md
    assert "| A1: containers (ToMi-like) | 0.75 (4) | **0.00 (2)** |" in md
    assert "| A1: containers (ToMi-like) | **1.00 (4)** | 0.50 (2) |" not in md
    assert "| A1: containers (ToMi-like) | 1.00 (4) | **0.50 (2)** |" in md
    # table 6: interesting / not interesting / share, and the total row
    assert "| A1 | \u2717 | 0.50 | 1.00 | 50% |" in md
    assert "| A1 | \u2713 | 0.00 | 0.00 | 50% |" in md
    assert "| total | \u2013 | 0.33 | 0.67 | 50% |" in md  # A*: 1/3 and 2/3 over 6 questions
    assert "| total | \u2013 | 1.00 | 0.75 | 33% |" in md  # baseline: 2/2 and 3/4
    # A* vs baseline per setting: -25 and -50 points; mean story length per method
    assert "| reasoner:world | 2 | -37.5 | -37.5 | 2 | 0 | 3.0 | 5.0 |" in md
    diffs = sorted(p["diff_points"] for p in data["comparison"][0]["pairs"])
    assert diffs == pytest.approx([-50.0, -25.0])
    for name in ("table1_accuracy.png", "fig6_astar_vs_baseline.png"):
        png = (tmp_path / "rep" / name).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
        assert f"]({name})" in md


def test_orders_option_changes_what_is_counted(base, tmp_path):
    run = write(tmp_path / "run.jsonl", hand_made(base))
    md, data = run_report([run], tmp_path / "rep", "--orders", "all")
    a1 = {(r["method"], r["asymmetric"]): (r["correct"], r["questions"]) for r in data["table1"]}
    assert a1[("astar", False)] == (4, 6) and a1[("baseline", False)] == (4, 5)
    assert "pooled over all questions" in md


def test_one_method_and_several_targets(base, tmp_path):
    recs = [r for r in hand_made(base) if r["method"] == "astar"]
    other = [{**r, "id": r["id"] + "-gpt", "target": "openai:gpt-4o"} for r in recs]
    md, data = run_report([write(tmp_path / "a.jsonl", recs), write(tmp_path / "b.jsonl", other)],
                          tmp_path / "rep")
    assert data["methods"] == ["astar"] and data["comparison"] == []
    assert "Needs runs of both `astar` and `baseline`" in md
    assert "baseline" not in md.split("## A* vs baseline")[0]
    assert "| action set | openai:gpt-4o \u2717 | openai:gpt-4o \u2713 | reasoner:world \u2717 | " \
           "reasoner:world \u2713 |" in md
    assert (tmp_path / "rep" / "table1_accuracy.png").is_file()
    assert not (tmp_path / "rep" / "fig6_astar_vs_baseline.png").exists()


def test_bad_input_gives_one_line_errors(base, tmp_path):
    def error(path: Path) -> str:
        with pytest.raises(InputError) as e:
            run_report([path], tmp_path / "rep")
        assert "\n" not in str(e.value)
        return str(e.value)

    recs = hand_made(base)
    assert "no such file" in error(tmp_path / "missing.jsonl")
    bad = write(tmp_path / "bad.jsonl", recs[:1], ('{"id": "cut", "method": "ast\n',))
    assert f"{bad}: line 2: not valid JSON" in error(bad)
    del recs[1]["questions"][0]["correct"]
    assert f"{bad}: line 2: questions[0]: missing field 'correct'" in error(write(bad, recs[:2]))
    recs = hand_made(base)
    del recs[0]["method"]
    assert "line 1: missing field 'method'" in error(write(bad, recs))
    assert "already read at" in error(write(bad, hand_made(base) + hand_made(base)[:1]))
    assert "no search results" in error(write(bad, [], ('{"id": 3, "error": "x"}\n',)))


def test_bad_orders_is_a_usage_error(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    report.add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["run.jsonl", "-o", str(tmp_path), "--orders", "first"])
    assert "argument --orders" in capsys.readouterr().err


def test_cli_prints_one_line(tmp_path, capsys):
    assert cli_main(["report", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "nope.jsonl" in err and "\n" not in err
