"""ExploreToM loader: our own exported rows (DatasetDict, split folder or JSONL), validated,
with accuracy per order, property, interesting and kind."""
import json
import re

import pytest

from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, record_for, scripted_metrics
from eval.benchmarks.exploretom import BENCHMARK, load, loader
from eval.rows import make_row, meta

STORY = "Anne put the apple in the basket. Anne left the kitchen. Bob moved the apple to the box."
QUESTIONS = [  # (question, answer, answer_type, order, property, interesting, kind)
    ("Where is the apple now?", "box", "short", 0, "location", False, "ground_truth"),
    ("Where was the apple at the beginning?", "basket", "short", 0, "location", False, "memory"),
    ("Where does Anne think the apple is?", "basket", "short", 1, "location", True, "belief"),
    ("Does Anne know that the apple is in the box?", "no", "yes_no", 1, "location", True, "belief"),
    ("Does Bob think that Anne knows where the apple is?", "no", "yes_no", 2, "location", True, "belief"),
    ("Does Anne know about the move of the apple?", "does not know about it", "knowledge", 1,
     "knowledge", True, "knowledge"),
    ("Does Bob know about the move of the apple?", "knows about it", "knowledge", 1,
     "knowledge", False, "knowledge"),
]


def _rows(split, n_stories=3):
    out = []
    for s in range(n_stories):
        for q, (question, answer, atype, order, prop, interesting, kind) in enumerate(QUESTIONS):
            out.append(make_row(
                id=f"exploretom-{split}-{s}-{q}", source="exploretom",
                user=f"{STORY}\n\n{question}", answer=answer, answer_type=atype,
                meta={"order": order, "property": prop, "interesting": interesting, "kind": kind,
                      "story": s},
            ))
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    from datasets import Dataset, DatasetDict

    root = tmp_path_factory.mktemp("exploretom")
    DatasetDict({split: Dataset.from_list(_rows(split, n)) for split, n in
                 (("train", 4), ("validation", 2), ("test", 3))}).save_to_disk(str(root / "dd"))
    return root


def _run(rows, answer_of):
    # several stories share a prompt here: the answer depends only on the prompt, as it must
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_loads_the_test_split_by_default(saved):
    rows = BENCHMARK.load_rows(saved / "dd")
    assert rows == _rows("test", 3)
    assert {r["id"].split("-")[1] for r in load(saved / "dd", split="validation")} == {"validation"}
    assert len(loader("train")(saved / "dd")) == 4 * len(QUESTIONS)


def test_single_split_folder_and_jsonl(saved, tmp_path):
    from datasets import load_from_disk

    expected = _rows("test", 3)
    assert load(saved / "dd" / "test") == expected
    f = tmp_path / "test.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in expected) + "\n")
    assert load(f) == expected
    assert load(tmp_path) == expected  # a folder of <split>.jsonl files
    assert len(load_from_disk(str(saved / "dd"))["test"]) == len(expected)


def test_perfect_answerer_scores_100(saved):
    rows = load(saved / "dd")
    metrics = _run(rows, lambda r: tagged(r['answer'], "tracking"))
    assert metrics["accuracy"] == 1.0 and metrics["n"] == len(rows)


def test_constant_answerer_scores_chance_per_order(saved):
    rows = load(saved / "dd")
    metrics = _run(rows, lambda r: tagged("no", "always"))
    hits = [r["answer"] == "no" for r in rows]  # only yes/no golds "no" can match a bare "no"
    assert metrics["accuracy"] == pytest.approx(sum(hits) / len(rows))
    for order in ("0", "1", "2"):
        mine = [h for r, h in zip(rows, hits) if str(meta(r)["order"]) == order]
        assert metrics["by_order"][order]["accuracy"] == pytest.approx(sum(mine) / len(mine))


def test_breakdowns_appear(saved):
    rows = load(saved / "dd")
    metrics = _run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_order"]) == {"0", "1", "2"}
    assert set(metrics["by_property"]) == {"location", "knowledge"}
    assert set(metrics["by_interesting"]) == {"True", "False"}
    assert set(metrics["by_kind"]) == {"ground_truth", "memory", "belief", "knowledge"}


def test_answer_type_rules_apply(saved):
    rows = load(saved / "dd")
    row = next(r for r in rows if r["answer_type"] == "knowledge" and r["answer"].startswith("does not"))
    assert record_for(row, tagged("She does not know about it", "t"), BENCHMARK)["correct"]
    assert not record_for(row, tagged("knows about it", "t"), BENCHMARK)["correct"]


def test_missing_split_names_the_splits(saved):
    with pytest.raises(BenchmarkFormatError, match=r"no split 'dev' \(splits: test, train, validation\)"):
        load(saved / "dd", split="dev")


def test_invalid_row_names_file_record_and_field(tmp_path):
    from datasets import Dataset, DatasetDict

    rows = _rows("test", 1)
    rows[3] = {**rows[3], "answer_type": "essay"}
    DatasetDict({"test": Dataset.from_list(rows)}).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(BenchmarkFormatError) as e:
        load(tmp_path / "dd")
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'dd' / 'test'}: record 4:") and "answer_type" in msg


def test_corrupt_jsonl_line(tmp_path):
    f = tmp_path / "test.jsonl"
    lines = [json.dumps(r) for r in _rows("test", 1)]
    lines[2] = lines[2][:-5]
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match="^" + re.escape(f"{f}: line 3: not valid JSON")):
        load(f)
    obj = json.loads(lines[1])
    del obj["choices"]
    lines[1], lines[2] = json.dumps(obj), json.dumps(_rows("test", 1)[2])
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line 2: ") + ".*choices"):
        load(f)


def test_duplicate_ids(tmp_path):
    rows = _rows("test", 1)
    f = tmp_path / "test.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows + rows[:1]) + "\n")
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{f}: line {len(rows) + 1}: duplicate item id")):
        load(f)


def test_not_a_dataset(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(BenchmarkFormatError, match="neither a saved dataset"):
        load(tmp_path)


# ---------------------------------------------------------------------------------------------
# The authors' released data (hub facebook/ExploreToM, ExploreToM-data-sample.csv): a fixture in
# its exact columns (tests/eval/fixtures/exploretom), two stories, six questions.

RELEASE = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "exploretom"


def test_release_csv_loads_with_its_question_types():
    rows = load(RELEASE)  # the folder's one .csv
    assert [r["id"] for r in rows] == [f"exploretom-release-{n}" for n in range(1, 7)]
    assert [r["answer_type"] for r in rows] == ["short", "short", "short", "yes_no", "short", "knowledge"]
    m = [meta(r) for r in rows]
    assert [x["order"] for x in m] == [0, 1, 2, 1, 1, 1] and m[0]["nth_order"] == -1
    assert m[2]["people"] == ["Omar", "Nadia"] and m[2]["thing"] == "brush"
    assert m[0]["property"] == "container_location" and m[5]["property"] == "knowledge"
    assert m[0]["interesting"] is True and m[4]["interesting"] is False
    assert m[0]["false_belief"] is True and m[0]["story"] == 3 and m[0]["story_type"] == "tomi"
    user = rows[0]["prompt"][-1]["content"]
    assert "Omar slipped the brush into the clay bin." in user and "Where is the brush now?" in user
    structure = load(RELEASE / "ExploreToM-data-sample.csv", text="structure")
    assert "Omar moved the brush to the clay bin" in structure[0]["prompt"][-1]["content"]


def test_release_accuracy_by_hand():
    # The release ships data only (no scorer); the paper scores the short answer against
    # `expected_answer`. Here each row is scored by the shared parser under the answer type its
    # expected answer has, and the figures below are counted by hand.
    replies = {
        "exploretom-release-1": "clay bin",          # right
        "exploretom-release-2": "the clay bin",      # gold blue jar: wrong
        "exploretom-release-3": "blue jar",          # right
        "exploretom-release-4": "No.",               # right
        "exploretom-release-5": "in the tin box",    # right
        "exploretom-release-6": "He does not know.",  # gold 'knows about it': wrong
    }
    m = _run(load(RELEASE), lambda r: tagged(replies[r['id']], "t"))
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert {k: v["accuracy"] for k, v in m["by_order"].items()} == pytest.approx({"0": 1.0, "1": 0.5, "2": 1.0})
    assert {k: v["accuracy"] for k, v in m["by_story_type"].items()} == pytest.approx({"tomi": 0.75, "allbutfantom": 0.5})
    perfect = _run(load(RELEASE), lambda r: tagged(r['answer'], "t"))
    assert perfect["accuracy"] == 1.0


def test_release_errors_name_the_line_a_record_starts_on(tmp_path):
    import csv

    with (RELEASE / "ExploreToM-data-sample.csv").open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        recs, columns = list(reader), reader.fieldnames
    recs[1]["qprop=nth_order"] = "one"
    broken = tmp_path / "ExploreToM-data-sample.csv"
    with broken.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(recs)
    # record 2 starts on line 6: record 1's infilled story spans lines 2-5
    with pytest.raises(BenchmarkFormatError, match=re.escape(f"{broken}: line 6: field 'qprop=nth_order'")):
        load(broken)
    recs[1].pop("expected_answer")
    with broken.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[c for c in columns if c != "expected_answer"])
        writer.writeheader()
        writer.writerows({k: v for k, v in r.items() if k != "expected_answer"} for r in recs)
    with pytest.raises(BenchmarkFormatError, match="line 2: missing column"):
        load(broken)


def test_release_saved_from_the_hub_loads_its_train_split(tmp_path):
    import csv

    from datasets import Dataset, DatasetDict

    with (RELEASE / "ExploreToM-data-sample.csv").open(encoding="utf-8", newline="") as f:
        recs = list(csv.DictReader(f))
    typed = [{**r, "qprop=nth_order": int(r["qprop=nth_order"]),
              "qprop=non_unique_mental_state": r["qprop=non_unique_mental_state"] == "True",
              "sprop=global_idx": int(r["sprop=global_idx"])} for r in recs]
    DatasetDict({"train": Dataset.from_list(typed)}).save_to_disk(str(tmp_path / "hub"))
    rows = load(tmp_path / "hub")
    assert [r["answer"] for r in rows] == [r["answer"] for r in load(RELEASE)]
    assert meta(rows[0])["interesting"] is True and meta(rows[0])["order"] == 0
