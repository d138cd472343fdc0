"""Hi-ToM loader: {"data": [...]} with one 'A. x, B. y, ...' choices string, accuracy per order."""
import json

import pytest

from eval.benchmarks.base import BenchmarkFormatError, scripted_metrics
from eval.benchmarks.hitom import BENCHMARK, load, parse_options
from eval.rows import SYSTEM_PROMPT, meta, user_text, validate_row


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path()


@pytest.fixture(scope="module")
def items(sample):
    return json.loads((sample / "Hi-ToM_data.json").read_text())["data"]


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows(sample)


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_item_loads(rows, items):
    assert len(rows) == len(items) == 100
    assert len({r["id"] for r in rows}) == len(rows)
    for r, item in zip(rows, items):
        validate_row(r)
        assert r["source"] == "hitom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["answer_type"] == "choice" and len(r["choices"]) == 15
        assert r["choices"][ord(r["answer"]) - ord("A")] == item["answer"]
        assert meta(r)["order"] == item["question_order"]
        user = user_text(r)
        assert item["question"] in user and "\nO. " in user and "A, B, C" in user


def test_parse_options():
    assert parse_options("A. red_box, B. blue_basket") == ["red_box", "blue_basket"]
    assert parse_options("A. x, C. y") == []  # letters must run A, B, C, ...
    assert parse_options("red_box, blue_basket") == []


def test_perfect_answerer_scores_100_by_letter_or_text(rows):
    assert run(rows, lambda r: f"<think>t</think><answer>{r['answer']}</answer>")["accuracy"] == 1.0
    by_text = run(rows, lambda r: f"<think>t</think><answer>{meta(r)['answer_text']}</answer>")
    assert by_text["accuracy"] == 1.0


@pytest.mark.parametrize("letter", "AFG")
def test_constant_answerer_scores_share_of_its_letter(rows, letter):
    metrics = run(rows, lambda r: f"<think>t</think><answer>{letter}</answer>")
    assert metrics["accuracy"] == pytest.approx(sum(r["answer"] == letter for r in rows) / len(rows))


def test_breakdown_per_order(rows):
    metrics = run(rows, lambda r: f"<think>t</think><answer>{r['answer']}</answer>")
    assert set(metrics["by_order"]) == {"0", "1", "2", "3", "4"}
    assert all(v["n"] == 20 and v["accuracy"] == 1.0 for v in metrics["by_order"].values())
    assert set(metrics["by_story_length"]) == {"1", "2", "3"}
    assert set(metrics["by_deception"]) == {"True", "False"}


def corrupt(tmp_path, items, index, change):
    broken = json.loads(json.dumps(items))
    change(broken[index])
    path = tmp_path / "Hi-ToM_data.json"
    path.write_text(json.dumps({"data": broken}, indent=4))
    with pytest.raises(BenchmarkFormatError) as e:
        load(path)
    assert "\n" not in str(e.value) and "Hi-ToM_data.json" in str(e.value)
    return str(e.value)


def test_missing_field_names_record_and_field(tmp_path, items):
    msg = corrupt(tmp_path, items, 7, lambda it: it.pop("answer"))
    assert "record 7" in msg and "'answer'" in msg


def test_answer_not_among_choices(tmp_path, items):
    msg = corrupt(tmp_path, items, 3, lambda it: it.update(answer="purple_suitcase"))
    assert "record 3" in msg and "not among the choices" in msg


def test_bad_choices_and_order(tmp_path, items):
    assert "record 0" in corrupt(tmp_path, items, 0, lambda it: it.update(choices="red, blue"))
    assert "question_order" in corrupt(tmp_path, items, 1, lambda it: it.update(question_order=7))


def test_invalid_json_names_line(tmp_path, sample):
    text = (sample / "Hi-ToM_data.json").read_text().splitlines()
    text[10] = text[10] + " ]]"
    path = tmp_path / "Hi-ToM_data.json"
    path.write_text("\n".join(text))
    with pytest.raises(BenchmarkFormatError, match=r"Hi-ToM_data\.json: line 11: invalid JSON"):
        load(path)
