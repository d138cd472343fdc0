"""SimpleToM loader on our own fixture in the hub layout (`<config>/test.jsonl`): two-option
questions, accuracy per mental state / behaviour / judgment."""
import json
from pathlib import Path

import pytest

from eval.answers import tagged
from eval.benchmarks.base import scripted_metrics
from eval.benchmarks.simpletom import BENCHMARK, load
from eval.rows import SYSTEM_PROMPT, meta, user_text

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "simpletom"
CONFIGS = ("mental-state-qa", "behavior-qa", "judgment-qa")


@pytest.fixture(scope="module")
def items():
    return [
        json.loads(line)
        for config in sorted(CONFIGS)
        for line in (FIXTURE / config / "test.jsonl").read_text().splitlines()
        if line.strip()
    ]


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_fixture_question_loads(rows, items):
    assert len(rows) == len(items) == 18
    for r, item in zip(rows, items):
        assert r["source"] == "simpletom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["id"] == f"simpletom/{item['id']}"
        assert r["choices"] == item["choices"]["text"] and r["answer"] == item["answerKey"]
        user = user_text(r)
        assert item["story"] in user and f"Question: {item['question']}" in user
        assert "\nA. " in user and "\nB. " in user and "(A or B)" in user


def test_single_file_and_config_folder_load(rows):
    assert len(load(FIXTURE / "behavior-qa")) == 6
    one = load(FIXTURE / "judgment-qa" / "test.jsonl")
    assert len(one) == 6 and {meta(r)["question_kind"] for r in one} == {"judgment"}


def test_perfect_answerer_scores_100_per_question_kind(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert all(v == {"accuracy": 1.0, "n": 6} for v in metrics["by_question_kind"].values())


@pytest.mark.parametrize("letter", "AB")
def test_constant_answerer_scores_share_of_its_letter_per_question_kind(rows, letter):
    metrics = run(rows, lambda r: tagged(letter, "t"))
    for kind, v in metrics["by_question_kind"].items():
        of_kind = [r for r in rows if meta(r)["question_kind"] == kind]
        assert v["accuracy"] == pytest.approx(sum(r["answer"] == letter for r in of_kind) / len(of_kind))


def test_breakdown_keys(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_question_kind"]) == {"mental_state", "behavior", "judgment"}


def test_corrupt_line_names_file_and_line(copy, one_line_error, edit_line):
    edit_line(copy / "behavior-qa" / "test.jsonl", 4, lambda s: s[:-10])
    msg = one_line_error(copy)
    assert "behavior-qa/test.jsonl: line 4: not valid JSON" in msg


def test_bad_answer_key_and_missing_field(copy, one_line_error, edit_line):
    def set_key(s):
        d = json.loads(s)
        d["answerKey"] = "C"
        return json.dumps(d)

    edit_line(copy / "judgment-qa" / "test.jsonl", 2, set_key)
    assert "judgment-qa/test.jsonl: line 2: field 'answerKey'" in one_line_error(copy)

    def drop_story(s):
        d = json.loads(s)
        del d["story"]
        return json.dumps(d)

    edit_line(copy / "mental-state-qa" / "test.jsonl", 6, drop_story)
    assert "line 6: missing field 'story'" in one_line_error(copy / "mental-state-qa")


def test_empty_folder(tmp_path, one_line_error):
    assert "no *.jsonl file" in one_line_error(tmp_path)
