"""ToMATO loader: JSON list with a0..a3 and a_idx, accuracy per mental state and order."""
import json
import re

import pytest

from eval import answers
from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, original_record, record_for, scripted_metrics
from eval.benchmarks.tomato import BENCHMARK, load
from eval.rows import SYSTEM_PROMPT, meta, user_text


@pytest.fixture(scope="module")
def items(sample):
    return json.loads((sample / "tomato_fb.json").read_text())


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_question_loads(rows, items):
    assert len(rows) == len(items) == 100
    for r, item in zip(rows, items):
        assert r["source"] == "tomato" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["choices"] == [item[f"a{k}"].strip() for k in range(4)]
        assert r["choices"][ord(r["answer"]) - 65] == item["a_str"].strip()
        assert item["q"] in user_text(r) and item["conversation"].strip() in user_text(r)
        assert meta(r)["mental_state"] == item["mental_state"]


def test_breakdowns(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_mental_state"]) == {"belief", "desire", "emotion", "intention", "knowledge"}
    assert set(metrics["by_order"]) == {"2"} and set(metrics["by_false_belief"]) == {"True"}
    assert sum(v["n"] for v in metrics["by_mental_state"].values()) == 100


def corrupt(tmp_path, items, index, change):
    broken = json.loads(json.dumps(items))
    change(broken[index])
    path = tmp_path / "tomato_fb.json"
    path.write_text(json.dumps(broken, indent=4))
    with pytest.raises(BenchmarkFormatError) as e:
        load(tmp_path)
    assert "\n" not in str(e.value) and "tomato_fb.json" in str(e.value)
    return str(e.value)


def test_corrupt_records_name_record_and_field(tmp_path, items):
    assert "record 5: field 'a_idx' must be 0-3" in corrupt(tmp_path, items, 5, lambda d: d.update(a_idx=4))
    assert "record 9: missing field 'q'" in corrupt(tmp_path, items, 9, lambda d: d.pop("q"))
    assert "record 2: field 'mental_state'" in corrupt(
        tmp_path, items, 2, lambda d: d.update(mental_state="hunger"))
    assert "record 0: field 'a_str'" in corrupt(tmp_path, items, 0, lambda d: d.update(a_str="nope"))


def test_duplicate_question_in_one_file(tmp_path, items):
    path = tmp_path / "tomato_fb.json"
    path.write_text(json.dumps(items + items[:1]))
    with pytest.raises(BenchmarkFormatError, match=r"record 100: duplicate field 'q_id'"):
        load(path)


def test_full_file_and_subset_are_asked_once(tmp_path, items):
    (tmp_path / "tomato.json").write_text(json.dumps(items))
    (tmp_path / "tomato_fb.json").write_text(json.dumps(items[:30]))
    assert len(load(tmp_path)) == 100


# ------------------------------------------- reading untagged replies as the original reads them
# nttmdlab-nlp/ToMATO code/run_gpt.py `extract_answer_from_response` (run_local_llm.py the same):
# the options are shown as "[A] ..." and the answer is the letter of the first match of the
# character class `\[[A,B,C,D]\]` in the reply ("[,]" matches too, and gives ","), else "" (wrong).

def oracle(reply):
    m = re.search(r"\[[A,B,C,D]\]", reply)
    return m.group(0)[1] if m else None


def compare(row, reply):
    said = oracle(reply)
    if said is None:
        return "original reads nothing"
    ours = answers.chosen_option(original_record(row, reply, BENCHMARK)["extracted"], row["choices"])
    if said == ",":
        return "original reads [,]"  # a reply writing "[,]" before any letter: wrong there
    return "agree" if ours == said else f"DISAGREE {said} vs {ours}: {reply[:80]!r}"


SHAPES = [  # (reply, our letter); SmolLM2 writes "A" or "A. <option text>" (runs/real)
    ("[C]", "C"),
    ("I think the answer is [B] because he hesitates.", "B"),
    ("[A] He thinks so. Or maybe [D].", "A"),  # the original takes the first bracketed letter
    ("A. He thinks that she will be hesitant to destroy the object.", "A"),  # original: nothing
    ("A", "A"),
]


def test_untagged_shapes_agree_with_the_original(rows):
    row = rows[0]
    for reply, letter in SHAPES:
        assert answers.chosen_option(original_record(row, reply, BENCHMARK)["extracted"],
                                     row["choices"]) == letter, reply
        assert compare(row, reply) in ("agree", "original reads nothing"), reply


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("tomato", compare)
