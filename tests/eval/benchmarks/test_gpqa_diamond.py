"""GPQA Diamond loader: the official CSV, 4 options in a seeded per-item order."""
import csv
import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from eval import answers
from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, original_record, record_for, scripted_metrics
from eval.benchmarks.gpqa_diamond import BENCHMARK, load
from eval.rows import meta


@pytest.fixture(scope="module")
def records(sample):
    with (sample / "gpqa_diamond.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_record_loads(rows, records):
    assert len(rows) == len(records)
    for r, rec in zip(rows, records):
        assert len(r["choices"]) == 4
        assert r["choices"][ord(r["answer"]) - ord("A")] == rec["Correct Answer"].strip()
        assert sorted(r["choices"]) == sorted(rec[c].strip() for c in (
            "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"))
        assert meta(r)["domain"] == rec["High-level domain"]


def test_shuffle_is_deterministic_across_processes(sample, rows):
    code = ("import json, sys; from eval.benchmarks.gpqa_diamond import load; "
            "print(json.dumps([(r['answer'], r['choices']) for r in load(sys.argv[1])]))")
    # a fresh interpreter with another hash seed must produce the same order
    out = subprocess.run([sys.executable, "-c", code, str(sample)], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "12345", "PATH": ""}).stdout
    assert json.loads(out) == [[r["answer"], r["choices"]] for r in rows]


def test_order_depends_on_the_item_not_on_its_neighbours(sample, tmp_path, rows):
    header, body = _header_body(sample)
    f = tmp_path / "gpqa_diamond.csv"
    _write(f, header, list(reversed(body[:10])))
    subset = {r["id"]: r for r in load(f)}
    for r in rows[:10]:
        assert subset[r["id"]]["choices"] == r["choices"]


def test_another_seed_gives_another_order(sample, rows):
    other = load(sample, seed=1)
    assert [r["choices"] for r in other] != [r["choices"] for r in rows]
    assert {r["id"] for r in other} == {r["id"] for r in rows}


def test_gold_letter_is_spread_over_a_to_d(rows):
    counts = Counter(r["answer"] for r in rows)
    assert set(counts) == set("ABCD")
    expected = len(rows) / 4
    chi2 = sum((counts[k] - expected) ** 2 / expected for k in "ABCD")
    assert chi2 < 11.34  # chi-square, 3 degrees of freedom, p = 0.01
    assert min(counts.values()) >= len(rows) / 10


def test_breakdown_by_domain(rows, records):
    metrics = _run(rows, lambda r: tagged(r['answer'], "k"))
    assert set(metrics["by_domain"]) == {rec["High-level domain"] for rec in records}
    assert "by_subdomain" in metrics


def _write(path, header, body):
    with path.open("w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(header)
        w.writerows(body)


def _header_body(sample):
    with (sample / "gpqa_diamond.csv").open(encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        return next(reader), list(reader)


def test_empty_field_names_record_line(sample, tmp_path):
    header, body = _header_body(sample)
    body = body[:5]
    body[3][header.index("Incorrect Answer 2")] = "  "
    f = tmp_path / "gpqa_diamond.csv"
    _write(f, header, body)
    # the record's first line: multi-line fields push it past line 5
    with f.open(encoding="utf-8", newline="") as fh:
        reader = csv.reader(fh)
        next(reader)
        starts = []
        for _ in reader:
            starts.append(reader.line_num)
    start_of_4th = starts[2] + 1
    with pytest.raises(BenchmarkFormatError,
                       match=re.escape(f"{f}: line {start_of_4th}: field 'Incorrect Answer 2': empty")):
        load(f)


def test_missing_column_and_short_record(sample, tmp_path):
    header, body = _header_body(sample)
    f = tmp_path / "gpqa_diamond.csv"
    i = header.index("Correct Answer")
    _write(f, header[:i] + header[i + 1:], [row[:i] + row[i + 1:] for row in body[:3]])
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 1: header lacks column(s) 'Correct Answer'")):
        load(tmp_path)
    _write(f, header, [body[0], body[1][:10]])
    with pytest.raises(BenchmarkFormatError, match=re.escape(str(f)) + ": line [0-9]+: expected 78 fields"):
        load(f)


# ------------------------------------------- reading untagged replies as the original reads them
# idavidrein/gpqa baselines/utils.py `parse_sampled_answer` (its prompts label the options "(A)"
# ...): tries "answer is (X)", "Answer: (X)", "answer: (X)", "answer (X)" and a bare "(X)" in that
# order, each at its first occurrence in the reply, and returns X when it is A-D; else nothing
# (the reply is scored wrong). The oracle is that rule; "agree" wherever it reads a letter.

def original_letter_of(reply):
    """The original's letter: for each pattern in turn its first match, kept when the bracketed
    character is A-D (a first match on another character moves on to the next pattern)."""
    for lead in ("answer is (", "Answer: (", "answer: (", "answer (", "("):
        at = reply.find(lead)
        while at >= 0:
            end = at + len(lead)
            if end + 1 < len(reply) and reply[end + 1] == ")":
                break
            at = reply.find(lead, at + 1)
        if at >= 0 and reply[at + len(lead)] in "ABCD":
            return reply[at + len(lead)]
    return None


def our_letter(row, reply):
    return answers.chosen_option(original_record(row, reply, BENCHMARK)["extracted"], row["choices"])


def compare(row, reply):
    letter = original_letter_of(reply)
    if letter is None:
        return "original reads nothing"
    ours = our_letter(row, reply)
    return "agree" if ours == letter else f"DISAGREE {letter} vs {ours}: {reply[:80]!r}"


def test_untagged_shapes_agree_with_the_original(rows):
    row = next(r for r in rows if r["id"].endswith("rec9GugrngvsQR99A"))
    a, b, c, d = row["choices"]  # B is "A = benzoquinone, B = methyl 2-hydroxypropanoate"
    assert b.startswith("A = benzoquinone, B = ")
    shapes = {
        f"(B) {b} because the first reaction forms the quinone.": "B",
        f"(C) {c}": "C",
        "The answer is (D).": "D",
        f"(A) {a}\n\nThe answer is (B).": "B",  # "answer is (X)" comes before a bare "(X)"
        "Answer: (C)\nI first thought (A).": "C",
        "I would say (B) or (C).": "B",  # the original takes the first bracketed letter
        "(E) none of these, so (C).": None,  # the first "(X)" is no option: nothing is read
        f"B. {b}": None,  # no bracketed letter: the original reads nothing; ours reads B
    }
    for reply, letter in shapes.items():
        assert original_letter_of(reply) == letter, reply
        assert compare(row, reply) in ("agree", "original reads nothing"), compare(row, reply)
    assert our_letter(row, f"B. {b}") == "B"


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("gpqa_diamond", compare)
