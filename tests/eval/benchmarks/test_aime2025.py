"""AIME 2025 loader: the MathArena parquet (and its JSONL twin), integer exact match."""
import json
import re
import shutil

import pytest

from eval.answers import tagged
from eval.benchmarks.aime2025 import BENCHMARK, load
from eval.benchmarks.base import BenchmarkFormatError, original_record, record_for, scripted_metrics
from eval.rows import meta


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
    metrics = _run(rows, lambda r: tagged(int(r['answer']) + 1, "w"))
    assert metrics["accuracy"] == 0.0


def test_breakdowns_by_contest_and_topic(rows):
    metrics = _run(rows, lambda r: tagged(r['answer'], "w"))
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


# ------------------------------------------- reading untagged replies as the original reads them
# eth-sri/matharena src/matharena/parser.py `extract_answer` (strict parsing, as for the AIME
# competitions): the content of the last match of `(boxed|fbox){...}` with balanced braces, boxes
# inside it unwrapped, then parsed as an integer (or a LaTeX expression); no box: no answer. The
# oracle is that reading (a regex-free scan of our own).

def oracle_box(reply):
    found, i = None, 0
    while i < len(reply):
        if reply.startswith("boxed{", i) or reply.startswith("fbox{", i):
            j = reply.index("{", i)
            depth, k = 0, j
            while k < len(reply):
                depth += {"{": 1, "}": -1}.get(reply[k], 0)
                if depth == 0:
                    break
                k += 1
            if k < len(reply):
                found = re.sub(r"\\(?:boxed|fbox)\{([^{}]*)\}", r"\1", reply[j + 1:k])
                i = k + 1
                continue
        i += 1
    return found


def compare(row, reply):
    said = oracle_box(reply)
    if said is None:
        return "original reads nothing"
    rec = original_record(row, reply, BENCHMARK)
    return "agree" if rec["extracted"] == said.strip() else f"DISAGREE {said!r} vs {rec['extracted']!r}"


def test_untagged_shapes_agree_with_the_original(rows):
    row = rows[0]
    gold = row["answer"]
    cases = {
        f"The answer is {int(gold) + 1}. Checking again, it is \\boxed{{{gold}}}.": (gold, True),
        f"First \\boxed{{1}}, then \\boxed{{\\boxed{{{gold}}}}}": (gold, True),
        "So $x = 4$ and the answer: \\boxed{x = 4}": ("x = 4", int(gold) == 4),
        f"The answer is {gold}.": (gold, True),  # no box: MathArena reads nothing; ours reads it
    }
    for reply, (extracted, correct) in cases.items():
        assert compare(row, reply) in ("agree", "original reads nothing"), reply
        rec = original_record(row, reply, BENCHMARK)
        assert (rec["extracted"], rec["correct"], rec["read"]) == (extracted, correct, "fallback")


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("aime2025", compare)


def test_chance_is_one_integer_in_a_thousand(rows):
    assert BENCHMARK.chance(rows[0]) == pytest.approx(1 / 1000)
