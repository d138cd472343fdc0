"""AIME 2025 loader: the MathArena parquet (and its JSONL twin), integer exact match."""
import json
import re
import shutil

import pytest

from eval.benchmarks.aime2025 import BENCHMARK, load
from eval.benchmarks.base import BenchmarkFormatError, scripted_metrics
from eval.rows import meta


@pytest.fixture(scope="module")
def sample():
    return BENCHMARK.default_path()


@pytest.fixture(scope="module")
def rows(sample):
    return BENCHMARK.load_rows(sample)


def _run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def _jsonl(sample):
    return [json.loads(line) for line in (sample / "data" / "train.jsonl").read_text().splitlines() if line.strip()]


def test_every_problem_loads_from_parquet_and_jsonl_alike(sample, rows):
    records = _jsonl(sample)
    assert len(rows) == len(records)
    from_jsonl = load(sample / "data" / "train.jsonl")
    assert from_jsonl == rows  # the two release forms give identical rows
    for r, rec in zip(rows, records):
        assert r["answer_type"] == "number" and r["answer"] == str(rec["answer"])
        assert r["answer"].isdigit() and 0 <= int(r["answer"]) <= 999
        assert rec["problem"].strip() in r["prompt"][-1]["content"]
        m = meta(r)
        assert m["contest"] == ("I" if rec["problem_idx"] <= 15 else "II")
        assert m["problem_type"] == rec["problem_type"]


def test_equivalent_integer_forms_count(rows):
    metrics = _run(rows, lambda r: f"<think>w</think><answer>\\boxed{{{r['answer']}}}</answer>")
    assert metrics["accuracy"] == 1.0
    metrics = _run(rows, lambda r: f"<think>w</think><answer>{int(r['answer']) + 1}</answer>")
    assert metrics["accuracy"] == 0.0


def test_breakdowns_by_contest_and_topic(rows):
    metrics = _run(rows, lambda r: f"<think>w</think><answer>{r['answer']}</answer>")
    assert set(metrics["by_contest"]) == {"I", "II"}
    topics = metrics["by_problem_type"]
    assert {"Algebra", "Geometry", "Number Theory", "Combinatorics"} <= set(topics)
    # a problem tagged Algebra and Geometry counts under both
    assert sum(t["n"] for t in topics.values()) == sum(len(meta(r)["problem_type"]) for r in rows)


def test_corrupt_jsonl_line(sample, tmp_path):
    f = tmp_path / "train.jsonl"
    lines = (sample / "data" / "train.jsonl").read_text().splitlines()
    lines[5] = lines[5][:40]
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 6: not valid JSON")):
        load(tmp_path)


def test_non_integer_answer(sample, tmp_path):
    f = tmp_path / "train.jsonl"
    recs = _jsonl(sample)
    recs[2]["answer"] = "twelve"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 3: field 'answer'")):
        load(f)


def test_broken_parquet(sample, tmp_path):
    dst = tmp_path / "aime"
    shutil.copytree(sample, dst)
    pq = dst / "data" / "train-00000-of-00001.parquet"
    pq.write_bytes(pq.read_bytes()[:200])
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{pq}: not a readable Parquet file")):
        load(dst)


def test_parquet_missing_column(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "train.parquet"
    pq.write_table(pa.table({"problem_idx": [1, 2], "problem": ["p1", "p2"], "answer": [3, None]}), f)
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: record 2: field 'answer': missing")):
        load(tmp_path)
