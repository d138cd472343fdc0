"""Hi-ToM loader: {"data": [...]} with one 'A. x, B. y, ...' choices string, accuracy per order."""
import json
import re
from pathlib import Path

import pytest

from eval import answers
from eval.answers import tagged
from eval.benchmarks.base import BenchmarkFormatError, record_for, scripted_metrics
from eval.benchmarks.hitom import BENCHMARK, load, parse_options
from eval.rows import SYSTEM_PROMPT, meta, user_text, validate_row


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def items(sample):
    return json.loads((sample / "Hi-ToM_data.json").read_text())["data"]


def run(rows, answer_of):
    return scripted_metrics(BENCHMARK, rows, answer_of)


def test_every_item_loads(sample, rows, items):
    raw = load(sample, merge=False)
    assert len(raw) == len(items) == 100
    # the sample's 10 VP records repeat a CoTP record: asked once
    assert len(rows) == 90 and sum(meta(r).get("merged", 0) for r in rows) == 10
    assert len({user_text(r) for r in rows}) == len(rows)
    for r, item in zip(raw, items):
        validate_row(r)
        assert r["source"] == "hitom" and r["prompt"][0]["content"] == SYSTEM_PROMPT
        assert r["answer_type"] == "choice" and len(r["choices"]) == 15
        assert r["choices"][ord(r["answer"]) - ord("A")] == item["answer"]
        assert meta(r)["order"] == item["question_order"]
        user = user_text(r)
        assert item["question"] in user and "\nO. " in user and "A, B, C" in user
        assert "Read the following story" not in user and "without explanations" not in user
        assert "Story:\n1 " in user


def test_parse_options():
    assert parse_options("A. red_box, B. blue_basket") == ["red_box", "blue_basket"]
    assert parse_options("A. x, C. y") == []  # letters must run A, B, C, ...
    assert parse_options("red_box, blue_basket") == []


def test_perfect_answerer_scores_100_by_option_text(rows):
    # by letter: tests/eval/test_benchmarks_all.py
    by_text = run(rows, lambda r: tagged(meta(r)['answer_text'], "t"))
    assert by_text["accuracy"] == 1.0


def test_breakdown_per_order(rows):
    metrics = run(rows, lambda r: tagged(r['answer'], "t"))
    assert set(metrics["by_order"]) == {"0", "1", "2", "3", "4"}
    assert sum(v["n"] for v in metrics["by_order"].values()) == 90
    assert all(v["accuracy"] == 1.0 for v in metrics["by_order"].values())
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
    with pytest.raises(BenchmarkFormatError, match=r"Hi-ToM_data\.json: line 11: not valid JSON"):
        load(path)


@pytest.fixture(scope="module")
def fixture_release(items, tmp_path_factory):
    """The invented items of fixtures/hitom/items.json written as a release file: VP stories get
    the release's own instruction line, read from the shared sample (release text is not kept in
    the project)."""
    instruction = next(i["story"].split("\n", 1)[0] for i in items if i["prompting_type"] == "VP")
    assert instruction.startswith("Read the following story")
    fixture = json.loads((FIXTURES / "hitom" / "items.json").read_text())
    for item in fixture["data"]:
        if item["prompting_type"] == "VP":
            item["story"] = f"{instruction}\n{item['story']}"
    folder = tmp_path_factory.mktemp("hitom")
    (folder / "Hi-ToM_data.json").write_text(json.dumps(fixture))
    return folder


def test_fixture_merged_and_raw_against_the_original_rule_by_hand(fixture_release):
    # The Hi-ToM repository (ying-hui-he/Hi-ToM_dataset) ships no scoring script; its README and
    # paper score accuracy: an answer is right when it names the option whose text is the
    # record's `answer`. The fixture, in Hi-ToM_data.json's layout, holds: B (CoTP) and its exact
    # VP copy; A (CoTP, gold blue_cupboard) and its VP copy with the gold green_bathtub, as the
    # release's record 342; C (CoTP only); D (VP only). The answerer says blue_cupboard for A,
    # the gold for B and D, a wrong container for C.
    def reply(r):
        if "melon" in user_text(r):
            return "<answer>red_bucket</answer>"
        if "eggplant" in user_text(r):
            return "<answer>blue_cupboard</answer>"
        return f"<answer>{meta(r)['answer_text']}</answer>"

    merged = scripted_metrics(BENCHMARK, load(fixture_release), reply)
    # each distinct item once with the CoTP gold: A right, B right, C wrong, D right
    assert merged["n"] == 4 and merged["accuracy"] == pytest.approx(3 / 4)
    assert merged["merged"] == 2 and merged["gold_conflicts"] == 1
    raw = scripted_metrics(BENCHMARK, BENCHMARK.load_rows(fixture_release, merge=False), reply)
    # every record scored by its own gold: A, B, B', D right; A' (green_bathtub) and C wrong
    assert raw["n"] == 6 and raw["accuracy"] == pytest.approx(4 / 6) and raw["merged"] == 0


def test_merged_row_keeps_the_cotp_gold_and_names_the_other(fixture_release):
    rows = {meta(r)["sample_id"]: r for r in load(fixture_release)}
    assert set(rows) == {0, 20, 40, 301}  # the VP copies 300 and 340 are folded in
    a = meta(rows[40])
    assert a["prompting_type"] == "CoTP" and a["answer_text"] == "blue_cupboard"
    assert a["merged"] == 1 and a["merged_golds"] == ["green_bathtub"] and a["merged_records"] == [4]
    assert "merged_golds" not in meta(rows[0]) and meta(rows[0])["merged"] == 1
    d = user_text(rows[301])
    assert "Story:\n1 Owen and Ava entered the garden." in d and "without explanations" not in d


def test_a_separator_line_after_the_story_does_not_split_an_item(fixture_release, tmp_path):
    # Release records 42, 60, 61, 62, 80 and 81 (CoTP) end their story in a `***` line that their
    # VP copies (342, 360, 361, 362, 380, 381) lack; record 42 says blue_cupboard where 342 says
    # green_bathtub. The line is no part of the story: the two records are one item, asked once
    # with the CoTP gold, and the separator is not shown to the model.
    release = json.loads((fixture_release / "Hi-ToM_data.json").read_text())
    for item in release["data"]:
        if item["prompting_type"] == "CoTP":
            item["story"] = item["story"].rstrip("\n") + "\n\n***"
    path = tmp_path / "Hi-ToM_data.json"
    path.write_text(json.dumps(release))
    rows = load(path)
    assert len(rows) == 4 and all("***" not in user_text(r) for r in rows)
    a = meta(next(r for r in rows if meta(r)["sample_id"] == 40))
    assert a["answer_text"] == "blue_cupboard" and a["merged_golds"] == ["green_bathtub"]
    assert all("***" not in user_text(r) for r in load(path, merge=False))



# ------------------------------------------- reading untagged replies
# ying-hui-he/Hi-ToM_dataset ships no scorer; its API_responses/ show the models' replies opening
# with the option ("L. blue_pantry\n\nExplanation: ..."), read by hand for the paper. The oracle
# is that opening label; ours reads it too, the label winning over the text after it (SmolLM2
# often writes "A. red_crate" where red_crate is another option: read as A).

def oracle(reply):
    m = re.match(r"\s*\(?([A-O])[.)]", reply)
    return m.group(1) if m else None


def compare(row, reply):
    said = oracle(reply)
    if said is None:
        return "original reads nothing"
    ours = answers.chosen_option(record_for(row, reply, BENCHMARK)["extracted"], row["choices"])
    if ours == said:
        return "agree"
    first = reply.split("\n", 1)[0].split(" ", 1)[-1].strip().rstrip(".").lower()
    if ours is None and first in [c.lower() for c in row["choices"]] \
            and first != row["choices"][ord(said) - 65].lower():
        # "A. red_crate" where red_crate is option F: two options named, no answer (Hi-ToM has
        # no scorer of its own to decide otherwise; inside the tags it is two options too)
        return "a label and another option's text"
    if re.search(r"(?i)answer is:? \(?" + (ours or "#"), reply):
        return "a later answer statement"  # "A. x ... The correct answer is D. x": ours reads D
    return f"DISAGREE {said} vs {ours}: {reply[:60]!r}"


def test_untagged_shapes(rows):
    row = rows[0]
    a, f = row["choices"][0], row["choices"][5]
    cases = [(f"A. {a}", "agree"), (f"A. {f}", "a label and another option's text"),
             (f"F. {f}\n\nThe correct answer is F. {f}.", "agree"),
             (f"L. {row['choices'][11]}\n\nExplanation:\n1. She moved it.", "agree"),
             (f"A. {f}\n\nThe correct answer is F. {f}.", "a later answer statement"),
             (f, "original reads nothing")]
    for reply, verdict in cases:
        assert compare(row, reply) == verdict, reply
    assert record_for(row, f, BENCHMARK)["extracted"] in ("F", f)


def test_real_replies_agree_with_the_original(agrees_with_original):
    agrees_with_original("hitom", compare)
