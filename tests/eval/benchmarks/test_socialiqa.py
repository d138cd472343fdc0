"""Social IQa loader: dev.jsonl + 1-based dev-labels.lst, 3-way accuracy, question-type breakdown."""
import json
import re
import shutil

import pytest

from eval.benchmarks.base import BenchmarkFormatError, scripted_metrics
from eval.benchmarks.socialiqa import BENCHMARK, load, question_type
from eval.rows import SYSTEM_PROMPT, meta


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path()


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows(sample)


def _run(rows, answer_of):
    assert len({json.dumps(r["prompt"]) for r in rows}) == len(rows)
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_sample_item_loads(sample, rows):
    items = [line for line in (sample / "dev.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == len(items)
    for r in rows:
        assert r["source"] == "socialiqa" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert len(r["choices"]) == 3 and "question_type" in meta(r)


def test_labels_are_one_based(sample, rows):
    labels = (sample / "dev-labels.lst").read_text().split()
    items = [json.loads(line) for line in (sample / "dev.jsonl").read_text().splitlines()]
    for row, label, item in zip(rows, labels, items):
        assert row["answer"] == "ABC"[int(label) - 1]
        assert row["choices"][int(label) - 1] == item[f"answer{row['answer']}"]
        user = row["prompt"][-1]["content"]
        assert item["context"] in user and "\nC. " + item["answerC"] in user


def test_breakdown_by_question_type(rows):
    metrics = _run(rows, lambda r: f"<think>k</think><answer>{r['answer']}</answer>")
    types = metrics["by_question_type"]
    assert {"wants", "reactions", "motivations", "needs", "effects", "descriptions"} <= set(types)
    assert sum(v["n"] for v in types.values()) == len(rows)
    assert types.get("other", {"n": 0})["n"] <= 2


def test_question_type_patterns():
    assert question_type("What will Kendall want to do next?") == "wants"
    assert question_type("How would Others feel as a result?") == "reactions"
    assert question_type("Why did Jan do this?") == "motivations"
    assert question_type("What does Bailey need to do before this?") == "needs"
    assert question_type("What will happen to Austin?") == "effects"
    assert question_type("How would you describe Skylar?") == "descriptions"


@pytest.fixture
def copy(sample, tmp_path):
    dst = tmp_path / "socialiqa"
    shutil.copytree(sample, dst)
    return dst


def test_corrupt_line_names_file_and_line(copy):
    f = copy / "dev.jsonl"
    lines = f.read_text().splitlines()
    lines[9] = lines[9].replace('"question"', '"question', 1)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 10: not valid JSON")):
        load(copy)


def test_missing_answer_field(copy):
    f = copy / "dev.jsonl"
    lines = f.read_text().splitlines()
    obj = json.loads(lines[4])
    del obj["answerB"]
    lines[4] = json.dumps(obj)
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 5: field 'answerB': missing")):
        load(copy)


def test_bad_label_and_count_mismatch(copy):
    f = copy / "dev-labels.lst"
    labels = f.read_text().split()
    f.write_text("\n".join(labels[:3] + ["0"] + labels[4:]) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 4: label '0'")):
        load(copy)
    f.write_text("\n".join(labels[:-1]) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(str(f))):
        load(copy)


def test_missing_labels_file(copy):
    (copy / "dev-labels.lst").unlink()
    with pytest.raises(BenchmarkFormatError, match="dev-labels.lst: no such file"):
        load(copy)
