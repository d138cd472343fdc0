"""The `python -m exploretom` commands: label, sample, stats (contracts other tools rely on)."""
import json
import subprocess
import sys

import pytest

from exploretom.cli import main
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.semantics.build import enter, leave, put

SALLY = {"id": "sally-anne", "actions": [
    enter("Sally", "kitchen"), enter("Anne", "kitchen"), put("Sally", "marble", "basket"),
    leave("Sally", "kitchen"), put("Anne", "marble", "box")]}


def read(path):
    return [json.loads(line) for line in open(path)]


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_label_writes_text_and_questions_and_keeps_unknown_keys(tmp_path):
    src = write_lines(tmp_path / "in.jsonl", [json.dumps({**SALLY, "source": "mine"})])
    assert main(["label", str(src), "-o", str(tmp_path / "out.jsonl")]) == 0
    [out] = read(tmp_path / "out.jsonl")
    assert out["id"] == "sally-anne" and out["source"] == "mine"
    assert out["text"].startswith("Sally entered the kitchen.")
    q = next(q for q in out["questions"]
             if q["question"] == "In which container will Sally search for the marble?")
    assert q["answer"] == "basket" and q["false_belief"] is True


def test_label_invalid_and_malformed_lines_become_errors_and_the_run_continues(tmp_path, capsys):
    bad_precondition = {"id": 7, "actions": [put("Anne", "apple", "box")]}
    unknown_type = {"id": "u", "actions": [{"type": "dance", "person": "Anne"}]}
    missing_field = {"id": "m", "actions": [{"type": "enter_room", "person": "Anne"}]}
    src = write_lines(tmp_path / "in.jsonl", [
        json.dumps(SALLY), json.dumps(bad_precondition), "{not json", json.dumps(unknown_type),
        json.dumps(missing_field), json.dumps(SALLY | {"id": "again"})])
    assert main(["label", str(src), "-o", str(tmp_path / "out.jsonl")]) == 0
    out = read(tmp_path / "out.jsonl")
    assert [o["id"] for o in out] == ["sally-anne", 7, None, "u", "m", "again"]
    errors = {o["id"]: o["error"] for o in out if "error" in o}
    assert errors[7] == ("line 2: action 1 (move_object_container): Anne is not in any room")
    assert errors[None].startswith("line 3: not valid JSON")
    assert errors["u"] == "line 4: action 1: unknown action type 'dance'"
    assert errors["m"] == "line 5: action 1 (enter_room): field 'room' must be a non-empty string"
    assert all("\n" not in e for e in errors.values())
    err = capsys.readouterr().err
    assert "labelled 2 of 6 stories" in err and "4 errors" in err
    assert main(["label", str(src), "-o", str(tmp_path / "o2.jsonl"), "--strict"]) == 1


def test_label_missing_file_is_one_line_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "exploretom", "label", str(tmp_path / "nope.jsonl"),
                           "-o", str(tmp_path / "o.jsonl")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {tmp_path / 'nope.jsonl'}: no such file"


def test_label_max_order_four(tmp_path):
    src = write_lines(tmp_path / "in.jsonl", [json.dumps(SALLY)])
    main(["label", str(src), "-o", str(tmp_path / "o.jsonl"), "--max-order", "4"])
    [out] = read(tmp_path / "o.jsonl")
    assert {q["order"] for q in out["questions"]} == {0, 1, 2, 3, 4}


SAMPLE = ["sample", "--action-set", "A7", "--asymmetric", "--people", "3", "--moves", "3",
          "--rooms", "2", "--max-actions", "12", "--seed", "5", "-q"]


def test_sample_is_deterministic_meets_conditions_and_labels(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(SAMPLE + ["-n", "20", "--label", "-o", str(a)]) == 0
    assert main(SAMPLE + ["-n", "20", "--label", "-o", str(b)]) == 0
    assert a.read_text() == b.read_text()
    cond = Conditions("A7", 3, 3, 2, 12, asymmetric=True)
    from exploretom.semantics.story import parse_story
    for s in read(a):
        assert cond.is_desired(parse_story(s).actions)
        assert s["questions"] and s["text"] and s["context"]["setting"]
        assert s["action_set"] == "A7" and s["asymmetric"] is True


def test_sample_shards_union_equals_the_whole_and_resume_loses_nothing(tmp_path):
    whole = tmp_path / "whole.jsonl"
    main(SAMPLE + ["-n", "12", "-o", str(whole)])
    shards = []
    for i in range(3):
        p = tmp_path / f"shard{i}.jsonl"
        main(SAMPLE + ["-n", "12", "--shard", f"{i}/3", "-o", str(p)])
        shards += read(p)
    assert sorted(s["id"] for s in shards) == sorted(s["id"] for s in read(whole))
    # A run killed mid-line: a complete first line and half of the second.
    part = tmp_path / "part.jsonl"
    lines = whole.read_text().splitlines(keepends=True)
    part.write_text(lines[0] + lines[1][: len(lines[1]) // 2])
    main(SAMPLE + ["-n", "12", "-o", str(part)])
    assert sorted(part.read_text().splitlines()) == sorted(whole.read_text().splitlines())


@pytest.mark.parametrize("aset", sorted(ACTION_SETS))
@pytest.mark.parametrize("asym", [False, True])
def test_every_action_set_samples_with_and_without_asymmetry(tmp_path, aset, asym):
    out = tmp_path / "s.jsonl"
    args = ["sample", "--action-set", aset, "--people", "2", "--moves", "2", "--rooms", "2",
            "--max-actions", "10", "-n", "5", "--seed", "1", "-q", "--label", "-o", str(out)]
    assert main(args + (["--asymmetric"] if asym else [])) == 0
    stories = read(out)
    assert len(stories) == 5
    assert all(any(a.get("peeking") or a.get("distracted") for a in s["actions"]) == asym
               for s in stories)


def test_sample_rejects_impossible_conditions_in_one_line(capsys):
    assert main(["sample", "--action-set", "A1", "--people", "2", "--moves", "5", "--rooms", "1",
                 "--max-actions", "3", "-n", "1", "-o", "/dev/null"]) == 2
    assert capsys.readouterr().err.strip() == "error: moves (5) cannot exceed max_actions (3)"
    assert main(["sample", "--action-set", "A4", "--people", "2", "--moves", "2", "--rooms", "1",
                 "--max-actions", "9", "-n", "1", "-o", "/dev/null"]) == 2
    assert capsys.readouterr().err.strip() == ("error: action set A4 needs move_object_room, so "
                                               "at least 2 rooms")


def test_stats_prints_counts(tmp_path, capsys):
    out = tmp_path / "s.jsonl"
    main(SAMPLE + ["-n", "10", "--label", "-o", str(out)])
    capsys.readouterr()
    assert main(["stats", str(out)]) == 0
    text = capsys.readouterr().out
    assert "stories: 10" in text and "A7+asym" in text and "order 2" in text
    assert "interesting" in text and "false belief" in text


def test_sample_refuses_to_append_to_a_file_it_did_not_write(tmp_path, capsys):
    foreign = tmp_path / "notes.jsonl"
    foreign.write_bytes(b"\x00\x01 my binary notes")
    assert main(SAMPLE + ["-n", "2", "-o", str(foreign)]) == 2
    assert "refusing to append" in capsys.readouterr().err
    assert foreign.read_bytes() == b"\x00\x01 my binary notes"  # untouched


@pytest.mark.parametrize("story, error", [
    ({"id": "u", "actions": [{"type": "dance", "person": "Anne"}]},
     "line 2: not a valid story: action 1: unknown action type 'dance'"),
    ({"id": "e", "actions": []}, "line 2: not a valid story: field 'actions' must be a non-empty list"),
    ({"id": 7, "actions": [put("Anne", "apple", "box")]},
     "line 2: not a valid story: action 1 (move_object_container): Anne is not in any room"),
])
def test_stats_rejects_what_label_rejects_in_one_line(tmp_path, capsys, story, error):
    src = write_lines(tmp_path / "in.jsonl", [json.dumps(SALLY), json.dumps(story)])
    assert main(["stats", str(src)]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{src}: {error}")
    assert main(["label", str(src), "-o", str(tmp_path / "o.jsonl")]) == 0
    assert "error" in read(tmp_path / "o.jsonl")[1]  # label rejects the same story
    # label's output (the story written as an error record) is what stats counts as invalid
    assert main(["stats", str(tmp_path / "o.jsonl")]) == 0
    assert "(invalid: 1" in capsys.readouterr().out


def test_stats_reports_interesting_and_false_belief_per_order_and_property(tmp_path, capsys):
    src = write_lines(tmp_path / "in.jsonl", [json.dumps(SALLY)])
    main(["label", str(src), "-o", str(tmp_path / "o.jsonl")])
    capsys.readouterr()
    assert main(["stats", str(tmp_path / "o.jsonl")]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Sally-Anne: two first-order container questions (Sally, Anne); Sally has the false belief.
    row = next(line.split() for line in lines if line.startswith("  order 1 container_location"))
    assert row[3:] == ["2", "100.0%", "50.0%"]
    assert "with an interesting order-1 or order-2 belief question: 100.0%" in lines[0]
