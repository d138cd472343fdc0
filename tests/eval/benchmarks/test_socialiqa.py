"""Social IQa loader: dev.jsonl + 1-based dev-labels.lst, 3-way accuracy, question-type breakdown."""
import json
import re

import pytest

from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, default_score, record_for, scripted_metrics
from eval.benchmarks.socialiqa import BENCHMARK, load, question_type
from eval.rows import SYSTEM_PROMPT, meta


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
    metrics = _run(rows, lambda r: tagged(r['answer'], "k"))
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


# ------------------------------------------------------------------ reading replies
# AI2 released no reader of free-text replies for Social IQa (its leaderboard took one label per
# item; lm-evaluation-harness compares the options' likelihoods): the shared careful reader
# decides, with this benchmark's two guards (socialiqa.score).

def _variant(rows, choices, answer):
    return dict(rows[0], choices=choices, answer=answer)


@pytest.mark.parametrize("reply", [
    tagged("answer the phone", "t"), "answer the phone",
    "The answer is answer the phone", "Answer: answer the phone.", "A. answer the phone",
    "A", "She would answer the phone.",
])
def test_an_option_beginning_with_answer_can_be_chosen_by_its_text(rows, reply):
    # dev-468 and dev-725 of the release have an option that begins with "answer": the shared
    # reader takes that word for a lead-in ("answer: B") and read nothing, even inside the tags
    row = _variant(rows, ["answer the phone", "ignore the ringing", "leave the house"], "A")
    rec = record_for(row, reply, BENCHMARK)
    assert rec["correct"] and rec["extracted"] in ("A", "answer the phone") and rec["read"] != "none"


@pytest.mark.parametrize("reply,read", [
    ("I'm sorry, but I can't help with that.", "none"),
    ("I'm sorry, I cannot answer this question as it requires more context.", "none"),
    ("Sorry, I don't know.", "none"),
    ("As an AI, I have no feelings to say sorry with.", "none"),
    (tagged("I'm sorry, I can't tell.", "t"), "tag"),
])
def test_a_refusal_is_no_answer_even_when_an_option_is_sorry(rows, reply, read):
    # dev-923: one option is "sorry"; a refusal named it and scored right
    row = _variant(rows, ["say thank you", "sorry", "laugh at them"], "B")
    rec = record_for(row, reply, BENCHMARK)
    assert not rec["correct"] and rec["extracted"] is None and rec["read"] == read


@pytest.mark.parametrize("reply", ["sorry", "B. sorry", "Sorry.", "B", "I'm sorry to say it is B.",
                                   "They would say sorry."])
def test_the_option_sorry_is_still_read(rows, reply):
    row = _variant(rows, ["say thank you", "sorry", "laugh at them"], "B")
    assert record_for(row, reply, BENCHMARK)["correct"], reply


def test_real_replies_are_read_as_the_careful_reader_reads_them(agrees_with_original):
    # no original reader: the guard must only change refusals and exact option texts
    def compare(row, reply):
        ours = record_for(row, reply, BENCHMARK)
        shared = default_score(row, reply)
        if (ours["extracted"], ours["correct"]) == (shared["extracted"], shared["correct"]):
            return "as the shared reader"
        return "refusal" if ours["extracted"] is None else "exact option text"

    assert sum(agrees_with_original("socialiqa", compare).values()) > 0
