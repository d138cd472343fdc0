"""Loading, validating and mixing row datasets for training."""
import json
import re
from collections import Counter

import pytest

from eval.answers import tagged
from rl.data import DataError, Source, load_source, mix, sft_examples, with_system_prompt

from .conftest import toy_rows, write_jsonl


def by_source(ds):
    return Counter(ds["source"])


def test_load_jsonl_and_saved_dataset_splits(toy_data):
    loc = load_source(Source(str(toy_data["location"])))
    assert len(loc) == 96 and set(loc["source"]) == {"toy-location"}
    assert load_source(Source(str(toy_data["knowledge"]), split="test")).num_rows == 16
    with pytest.raises(DataError, match=r"no split 'validation' \(has train, test\)"):
        load_source(Source(str(toy_data["knowledge"]), split="validation"))


def test_folder_of_split_jsonl_files(tmp_path):
    write_jsonl(tmp_path / "train.jsonl", toy_rows(5, "toy-location"))
    assert len(load_source(Source(str(tmp_path)))) == 5
    with pytest.raises(DataError, match="test.jsonl"):
        load_source(Source(str(tmp_path), split="test"))


def test_mix_by_weight_with_a_size(toy_data):
    sources = [Source(str(toy_data["location"]), weight=3), Source(str(toy_data["knowledge"]), weight=1)]
    ds = mix(sources, size=200, seed=1)
    # 150 location rows from 96 (one full pass repeated in part), 50 knowledge rows from 64
    assert by_source(ds) == {"toy-location": 150, "toy-knowledge": 50}
    assert len(set(ds.filter(lambda r: r["source"] == "toy-knowledge")["id"])) == 50
    again = mix(sources, size=200, seed=1)
    assert again["id"] == ds["id"]  # same config, same rows, same order
    assert mix(sources, size=200, seed=2)["id"] != ds["id"]


def test_mix_without_size_is_the_largest_exact_mix(toy_data):
    sources = [Source(str(toy_data["location"]), weight=1), Source(str(toy_data["knowledge"]), weight=1)]
    ds = mix(sources, seed=0)
    assert by_source(ds) == {"toy-location": 64, "toy-knowledge": 64}
    assert len(set(ds["id"])) == 128  # no row repeated
    capped = mix([Source(str(toy_data["location"]), max_rows=10)], seed=0)
    assert len(capped) == 10


def test_answer_types_keep_only_those_rows(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", toy_rows(20, "toy-location") + toy_rows(10, "toy-yes"))
    ds = mix([Source(str(path), answer_types=["yes_no"])])
    assert len(ds) == 10 and set(ds["answer_type"]) == {"yes_no"}
    with pytest.raises(DataError, match=r"mixed.jsonl \[train\]: no rows of answer type\(s\) number"):
        mix([Source(str(path), answer_types=["number"])])


def test_bad_rows_name_the_file_line_and_field(tmp_path):
    rows = toy_rows(3, "toy-location")
    rows[1]["answer_type"] = "essay"
    path = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(DataError) as e:
        load_source(Source(str(path)))
    msg = str(e.value)
    assert f"{path}: line 2" in msg and "answer_type 'essay'" in msg and "\n" not in msg
    path.write_text(json.dumps(toy_rows(1, "toy-location")[0]) + "\n{not json\n")
    with pytest.raises(DataError, match=re.escape(f"{path}: line 2: not valid JSON")):
        load_source(Source(str(path)))
    with pytest.raises(DataError, match="no such file"):
        load_source(Source(str(tmp_path / "missing.jsonl")))
    from datasets import Dataset

    rows[1]["answer_type"] = "short"
    Dataset.from_list([{k: v for k, v in r.items() if k != "choices"} for r in rows]).save_to_disk(
        str(tmp_path / "nochoices"))
    with pytest.raises(DataError, match="missing column"):
        load_source(Source(str(tmp_path / "nochoices")))


def test_weights_must_be_positive(toy_data):
    with pytest.raises(DataError, match="weight must be > 0"):
        mix([Source(str(toy_data["location"]), weight=0)])


def test_system_prompt_override_and_sft_targets():
    from datasets import Dataset

    rows = toy_rows(2, "toy-knowledge")
    rows[0]["meta"] = json.dumps({"order": 1, "reasoning": "Sally left before the move."})
    ds = Dataset.from_list(rows)
    swapped = with_system_prompt(ds, "Be brief.")
    assert [m["role"] for m in swapped[0]["prompt"]] == ["system", "user"]
    assert swapped[0]["prompt"][0]["content"] == "Be brief."
    ex = sft_examples(ds)
    assert ex.column_names == ["prompt", "completion"]
    reply0, reply1 = (ex[i]["completion"][0]["content"] for i in range(2))
    assert reply0 == tagged(rows[0]['answer'], "Sally left before the move.")
    assert reply1.startswith("<think>") and reply1.endswith(f"</think><answer>{rows[1]['answer']}</answer>")
    plain = sft_examples(ds, target="answer")
    assert plain[1]["completion"] == [{"role": "assistant", "content": rows[1]["answer"]}]


def test_sft_think_default_replaces_the_templates_but_not_a_trace():
    from rl.targets import target_text

    row = {"answer": "box", "answer_type": "short", "meta": "{}"}
    assert target_text(row, default="I track who saw what.") == \
        tagged("box", "I track who saw what.")
    traced = {**row, "meta": '{"reasoning": "Sally left before the move."}'}
    assert target_text(traced, default="x") == \
        tagged("box", "Sally left before the move.")


def test_choice_answer_names_the_gold_option_by_letter_text_or_both():
    """A fifteen-option row's gold "C" is the option "blue_crate": answered by its letter (the
    default), by its text (which the choice scorer reads as option C), or thought as text and
    then answered by letter. Rows of other kinds answer as before."""
    from eval.answers import score
    from rl.targets import target_text

    choices = ["red_box", "green_box", "blue_crate"] + [f"bin_{i}" for i in range(12)]
    row = {"answer": "C", "answer_type": "choice", "choices": choices, "meta": "{}"}
    assert target_text(row, default="") == tagged("C", "")
    assert target_text(row, default="", choice_answer="text") == tagged("blue_crate", "")
    assert target_text(row, default="", choice_answer="text_then_letter") == \
        tagged("C", "blue_crate")
    for how in ("letter", "text", "text_then_letter"):
        verdict = score(target_text(row, default="", choice_answer=how), "C", "choice", choices)
        assert verdict.correct and verdict.format_ok
        wrong = score(target_text(row, default="", choice_answer=how), "B", "choice", choices)
        assert not wrong.correct
    short = {"answer": "box", "answer_type": "short", "meta": "{}"}
    assert target_text(short, default="", choice_answer="text") == tagged("box", "")
    # a gold that names no option is left as it is
    odd = {**row, "answer": "Q"}
    assert target_text(odd, default="", choice_answer="text") == tagged("Q", "")
    # sentence options are answered by letter: a small model copies a sentence badly
    said = ["Noor believes the pitcher holds oat milk.", "Noor believes the pitcher holds almond milk."]
    sentences = {**row, "answer": "B", "choices": said}
    assert target_text(sentences, default="", choice_answer="text") == tagged("B", "")
    # sft.choice_answer reaches the examples
    from datasets import Dataset

    ds = Dataset.from_list([{**row, "prompt": [{"role": "user", "content": "Where?"}]}])
    ex = sft_examples(ds, think="template", think_default="", choice_answer="text_then_letter")
    assert ex[0]["completion"] == [{"role": "assistant", "content": tagged("C", "blue_crate")}]


def test_meta_filter_keeps_rows_with_the_listed_values(tmp_path):
    """A source can keep the rows of some meta values only, e.g. ExploreToM's belief questions
    (order 1) weighted above order 0 by listing the file twice."""
    rows = toy_rows(40, "toy-location")
    path = write_jsonl(tmp_path / "loc.jsonl", rows)
    order1 = sum(json.loads(r["meta"])["order"] == 1 for r in rows)
    assert 0 < order1 < 40
    ds = mix([Source(str(path), meta={"order": [1]})])
    assert len(ds) == order1 and {json.loads(m)["order"] for m in ds["meta"]} == {1}
    both = mix([Source(str(path), meta={"order": [0]}, weight=1),
                Source(str(path), meta={"order": [1]}, weight=3)], size=40, seed=0)
    orders = Counter(json.loads(m)["order"] for m in both["meta"])
    assert orders == {0: 10, 1: 30}
    with pytest.raises(DataError, match=r"loc.jsonl \[train\]: no rows whose meta has order in \[7\]"):
        mix([Source(str(path), meta={"order": [7]})])
