"""`python -m exploretom export`: labelled stories -> DatasetDict in the row contract."""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from eval.rows import SYSTEM_PROMPT, meta as row_meta, user_text, validate_row
from exploretom.cli import main as cli_main
from exploretom.datasets import export
from exploretom.datasets.split import SPLITS
from eval.jsonl import InputError

SETS = (("A1", True), ("A2", False), ("A8", False))


@pytest.fixture(scope="module")
def stories(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("stories")
    paths = []
    for action_set, asym in SETS:
        path = d / f"{action_set}.jsonl"
        argv = ["sample", "--action-set", action_set, "--people", "3", "--moves", "3",
                "--rooms", "2", "--max-actions", "12", "-n", "30", "--seed", "3", "--label",
                "-q", "-o", str(path)] + (["--asymmetric"] if asym else [])
        assert cli_main(argv) == 0
        paths.append(path)
    return paths


def records(paths) -> list[dict]:
    return [json.loads(line) for p in paths for line in Path(p).read_text().splitlines() if line]


def run_export(inputs, out: Path, *options: str) -> dict:
    parser = argparse.ArgumentParser()
    export.add_arguments(parser)
    args = parser.parse_args([*map(str, inputs), "-o", str(out), *options])
    assert export.run(args) == 0
    return json.loads((out / export.STATS_FILE).read_text())


def load(out: Path) -> dict[str, list[dict]]:
    """The exported DatasetDict (checked to load with datasets), as plain rows per split."""
    from datasets import DatasetDict, load_from_disk

    ds = load_from_disk(str(out))
    assert isinstance(ds, DatasetDict)
    return {split: d.to_list() for split, d in ds.items()}


@pytest.fixture(scope="module")
def default_export(stories, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "ds"
    stats = run_export(stories, out)
    return out, stats, load(out)


def test_rows_follow_the_contract_and_split_by_story(stories, default_export):
    out, stats, ds = default_export
    assert set(ds) == {"train", "validation", "test"}
    by_id = {r["id"]: r for r in records(stories)}
    ids_per_split = {}
    for split, d in ds.items():
        ids_per_split[split] = set()
        for row in d:
            validate_row(row)
            m = row_meta(row)
            assert row["source"] == "exploretom" and row["choices"] == []
            assert row["prompt"][0] == {"role": "system", "content": SYSTEM_PROMPT}
            story = by_id[m["story_id"]]
            q = story["questions"][m["question_index"]]
            assert (row["answer"], row["answer_type"]) == (q["answer"], q["answer_type"])
            text = user_text(row)
            assert story["text"] in text and q["question"] in text and "short answer" in text
            for key in ("order", "kind", "property", "people", "thing", "state_value",
                        "before_action", "interesting", "false_belief"):
                assert m[key] == q[key], key
            assert (m["action_set"], m["asymmetric"]) == (story["action_set"], story["asymmetric"])
            assert m["text_source"] == "structure"
            assert m["story"]["actions"] == story["actions"]
            assert "state_updates" not in m["story"]["context"]  # kept compact
            ids_per_split[split].add(m["story_id"])
    train, val, test = ids_per_split["train"], ids_per_split["validation"], ids_per_split["test"]
    assert not (train & val) and not (train & test) and not (val & test)
    assert train | val | test == set(by_id)
    # 90 stories at 0.8/0.1/0.1, stratified per setting: 24/3/3 of each of the three sets
    assert (len(train), len(val), len(test)) == (72, 9, 9)
    for split, ids in ids_per_split.items():
        per_set = Counter(by_id[i]["action_set"] for i in ids)
        assert set(per_set.values()) == {len(ids) // 3}, (split, per_set)
    assert sorted(p.name for p in out.parent.iterdir()) == ["ds"]  # no build cache left behind
    all_rows = [r["id"] for d in ds.values() for r in d]
    assert len(all_rows) == len(set(all_rows)) == sum(len(s["questions"]) for s in by_id.values())


def test_split_is_deterministic_for_a_seed(stories, default_export, tmp_path):
    _, _, ds = default_export

    def assignment(d):
        return {split: sorted({row_meta(r)["story_id"] for r in rows}) for split, rows in d.items()}

    reordered = tmp_path / "reordered.jsonl"  # input order must not matter
    reordered.write_text("".join(json.dumps(r) + "\n" for r in reversed(records(stories))))
    run_export([reordered], tmp_path / "same")
    assert assignment(load(tmp_path / "same")) == assignment(ds)
    run_export(stories, tmp_path / "other", "--seed", "1")
    assert assignment(load(tmp_path / "other"))["test"] != assignment(ds)["test"]


def test_orders_filter_and_question_cap(stories, tmp_path):
    recs = records(stories)
    run_export(stories, tmp_path / "o1", "--orders", "1")
    ds = load(tmp_path / "o1")
    orders = Counter(row_meta(r)["order"] for d in ds.values() for r in d)
    assert orders == {1: sum(q["order"] == 1 for s in recs for q in s["questions"])}

    run_export(stories, tmp_path / "cap", "--orders", "0,2", "--max-questions-per-story", "3")
    ds = load(tmp_path / "cap")
    per_story = Counter(row_meta(r)["story_id"] for d in ds.values() for r in d)
    expected = {s["id"]: min(3, sum(q["order"] in (0, 2) for q in s["questions"])) for s in recs}
    assert per_story == {k: v for k, v in expected.items() if v}
    assert {row_meta(r)["order"] for d in ds.values() for r in d} == {0, 2}



def test_properties_filter_keeps_exactly_those_questions(stories, tmp_path):
    recs = records(stories)
    out = tmp_path / "containers"
    stats = run_export(stories, out, "--properties", "container_location", "--orders", "1,2")
    ds = load(out)
    kept = Counter((row_meta(r)["property"], row_meta(r)["order"]) for d in ds.values() for r in d)
    expected = Counter((q["property"], q["order"]) for s in recs for q in s["questions"]
                       if q["property"] == "container_location" and q["order"] in (1, 2))
    assert kept == expected and expected
    assert stats["options"]["properties"] == ["container_location"]
    assert "--properties container_location" in stats["command"]
    with pytest.raises(SystemExit):  # an unknown property is a usage error, not an empty dataset
        run_export(stories, tmp_path / "bad", "--properties", "colour")

@pytest.mark.parametrize("ratio", [0.2, 0.75])
def test_interesting_ratio_is_reached_per_split(stories, default_export, tmp_path, ratio):
    _, _, full = default_export
    stats = run_export(stories, tmp_path / "r", "--interesting-ratio", str(ratio))
    ds = load(tmp_path / "r")
    assert stats["selection"]["ratio_reached"]
    for split, d in ds.items():
        flags = [row_meta(r)["interesting"] for r in d]
        assert abs(sum(flags) / len(flags) - ratio) <= max(0.01, 1 / len(flags)), split
        natural = [row_meta(r)["interesting"] for r in full[split]]
        # only the over-represented kind is subsampled: the other is kept whole
        if sum(natural) / len(natural) < ratio:
            assert sum(flags) == sum(natural)
        else:
            assert len(flags) - sum(flags) == len(natural) - sum(natural)
        assert stats["splits"][split]["interesting"] == sum(flags)


def test_balance_equalises_question_types(stories, tmp_path):
    stats = run_export(stories, tmp_path / "b", "--balance")
    ds = load(tmp_path / "b")
    for split, d in ds.items():
        groups = Counter((m["kind"], m["property"], m["order"]) for m in map(row_meta, d))
        assert len(set(groups.values())) == 1, (split, groups)
        assert len(groups) >= 8  # ground truth, memory, beliefs of several properties
    # balanced and a requested share together, on belief questions only
    stats = run_export(stories, tmp_path / "bi", "--balance", "--orders", "1,2",
                       "--interesting-ratio", "0.5", "--seed", "4")
    ds = load(tmp_path / "bi")
    for split, d in ds.items():
        metas = [row_meta(r) for r in d]
        groups = Counter((m["kind"], m["property"], m["order"]) for m in metas)
        assert len(set(groups.values())) == 1, (split, groups)
        share = sum(m["interesting"] for m in metas) / len(metas)
        assert share == pytest.approx(stats["splits"][split]["interesting_share"])
        assert stats["selection"]["ratio_reached"]
        assert abs(share - 0.5) <= max(0.01, 1 / len(metas))


def test_infilled_text_mode(stories, tmp_path):
    path = tmp_path / "infilled.jsonl"
    lines, ok, failed, missing = [], set(), 0, 0
    for i, rec in enumerate(records(stories)):
        if i % 3 == 0:
            missing += 1
        else:
            good = i % 3 == 1
            rec["infilled"] = {"text": f"Narrated story number {i}. " + rec["text"].replace("\n", " "),
                               "ok": good, "steps": [], "model": "fake", "judge_model": "fake"}
            if good:
                ok.add(rec["id"])
            else:
                failed += 1
        lines.append(json.dumps(rec))
    lines.append(json.dumps({"id": "broken", "error": "line 7: action 2 (leave_room): not in room"}))
    path.write_text("\n".join(lines) + "\n")

    stats = run_export([path], tmp_path / "inf", "--text", "infilled")
    sel = stats["selection"]
    assert (sel["infilled_failed"], sel["not_infilled"], sel["errors"], sel["stories"]) == \
        (failed, missing, 1, len(ok))
    ds = load(tmp_path / "inf")
    seen = set()
    for d in ds.values():
        for row in d:
            m = row_meta(row)
            seen.add(m["story_id"])
            assert m["text_source"] == "infilled" and "infilled_text" not in m
            assert "Narrated story number" in user_text(row)
    assert seen == ok
    # structure mode keeps every story and carries the accepted infilled text in meta
    run_export([path], tmp_path / "struct")
    metas = [row_meta(r) for d in load(tmp_path / "struct").values() for r in d]
    assert {m["story_id"] for m in metas if "infilled_text" in m} == ok
    assert len({m["story_id"] for m in metas}) == len(records(stories))


def test_dataset_card_matches_the_data(default_export):
    out, stats, ds = default_export
    card = (out / "README.md").read_text()
    assert card.startswith("---\n")
    header = yaml.safe_load(card.split("---\n")[1])
    assert {s["name"]: s["num_examples"] for s in header["dataset_info"]["splits"]} == \
        {split: len(d) for split, d in ds.items()}
    assert "python -m exploretom export" in card and "--seed 0" in card
    for split, d in ds.items():
        metas = [row_meta(r) for r in d]
        n, n_st = len(metas), len({m["story_id"] for m in metas})
        share = sum(m["interesting"] for m in metas) / n
        fb = sum(m["false_belief"] for m in metas) / n
        assert f"| {split} | {n} | {n_st} | {share:.1%} | {fb:.1%} |" in card
        s = stats["splits"][split]
        assert (s["rows"], s["stories"]) == (n, n_st)
        assert s["by_order"] == {str(k): v for k, v in Counter(m["order"] for m in metas).items()}
        assert s["answers"]["yes_no"] == dict(Counter(r["answer"] for r in d
                                                      if r["answer_type"] == "yes_no"))
    per_order = Counter(row_meta(r)["order"] for d in ds.values() for r in d)
    for order, total in per_order.items():
        cells = [str(Counter(row_meta(r)["order"] for r in ds[s])[order]) for s in SPLITS]
        assert f"| {order} | {' | '.join(cells)} | {total} |" in card
    assert "| A1+asym |" in card and "| A8 |" in card
    assert "`knowledge`:" in card and "does not know about it" in card


def test_eval_loader_reads_the_export(default_export):
    from eval.benchmarks import exploretom as bench

    out, _, ds = default_export
    rows = bench.load(out)
    assert [r["id"] for r in rows] == [r["id"] for r in ds["test"]]
    assert len(bench.loader("train")(out)) == len(ds["train"])


def test_bad_input_gives_one_line_errors(stories, tmp_path, capsys):
    def error(*argv) -> str:
        with pytest.raises(InputError) as e:
            run_export(*argv)
        msg = str(e.value)
        assert "\n" not in msg
        return msg

    def usage_error(*options: str) -> str:
        with pytest.raises(SystemExit) as e:
            run_export(stories[:1], tmp_path / "o", *options)
        assert e.value.code == 2
        return capsys.readouterr().err.strip().splitlines()[-1]

    assert "no such file" in error([tmp_path / "missing.jsonl"], tmp_path / "o")
    good = stories[0].read_text().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([good[0], good[1][:50], good[2]]) + "\n")
    assert f"{bad}: line 2: not valid JSON" in error([bad], tmp_path / "o")
    unlabelled = json.loads(good[0])
    del unlabelled["questions"]
    bad.write_text(good[1] + "\n" + json.dumps(unlabelled) + "\n")
    msg = error([bad], tmp_path / "o")
    assert f"{bad}: line 2" in msg and "'questions'" in msg and "label" in msg
    broken_q = json.loads(good[0])
    del broken_q["questions"][2]["answer"]
    bad.write_text(json.dumps(broken_q) + "\n")
    assert "questions[2]: missing field 'answer'" in error([bad], tmp_path / "o")
    assert "already read" in error([stories[0], stories[0]], tmp_path / "o")
    assert "argument --splits: expected train,validation,test" in usage_error("--splits", "0.5,0.2")
    assert "argument --orders: expected comma-separated" in usage_error("--orders", "one")
    assert "argument --interesting-ratio" in usage_error("--interesting-ratio", "2")
    assert "argument --max-questions-per-story" in usage_error("--max-questions-per-story", "0")
    assert not (tmp_path / "o").exists()  # nothing half-written
    only_errors = tmp_path / "errors.jsonl"
    only_errors.write_text(json.dumps({"id": 1, "error": "line 1: bad"}) + "\n")
    assert "no usable stories" in error([only_errors], tmp_path / "o")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("keep me")
    assert "--overwrite" in error(stories[:1], tmp_path / "busy")


def test_cli_prints_one_line(stories, tmp_path, capsys):
    assert cli_main(["export", str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "o")]) != 0
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "nope.jsonl" in err and "\n" not in err


def test_a_split_too_small_for_a_story_is_written_empty_and_named(stories, tmp_path, capsys):
    """One story cannot fill three splits: the export keeps it in train, writes the other two
    empty (with the row schema) and names them, rather than failing inside `datasets`."""
    one = tmp_path / "one.jsonl"
    one.write_text(Path(stories[0]).read_text().splitlines()[0] + "\n")
    stats = run_export([one], tmp_path / "ds")
    rows = load(tmp_path / "ds")
    assert len(rows["train"]) == stats["splits"]["train"]["rows"] > 0
    assert rows["validation"] == rows["test"] == []
    assert "warning: split(s) validation, test got no rows" in capsys.readouterr().err


def test_location_rows_carry_their_candidates_and_a_share_is_asked_as_multiple_choice(stories,
                                                                                       tmp_path):
    # issue 29: multiple-choice rows of our own data (the benchmarks a real model is tested on
    # are mostly multiple choice) and the candidates an untagged short answer is read against
    from eval.answers import score

    run_export(stories[:1], tmp_path / "plain")
    plain = load(tmp_path / "plain")
    stats = run_export(stories[:1], tmp_path / "mc", "--choice-share", "0.5")
    assert stats["options"]["choice_share"] == 0.5 and "--choice-share 0.5" in stats["command"]
    mixed = load(tmp_path / "mc")
    rows = [r for split in mixed.values() for r in split]
    before = {r["id"]: r for split in plain.values() for r in split}
    assert [r["id"] for r in rows] == [r["id"] for split in plain.values() for r in split]
    choice = [r for r in rows if r["answer_type"] == "choice"]
    located = [r for r in rows if row_meta(r).get("property") in ("container_location", "room_location")
               and len(row_meta(r)["candidates"]) > 1]
    assert 0.35 < len(choice) / len(located) < 0.65
    for r in choice:
        validate_row(r)
        m, old = row_meta(r), before[r["id"]]
        assert sorted(r["choices"]) == sorted(m["candidates"])
        assert r["choices"][ord(r["answer"]) - 65] == old["answer"]
        assert all(f"{chr(65 + i)}. {c}" in user_text(r) for i, c in enumerate(r["choices"]))
    for r in rows:  # a reply naming the gold in a sentence is read against the candidates
        m = row_meta(r)
        if r["answer_type"] == "short" and len(m.get("candidates", [])) > 1:
            other = next(c for c in m["candidates"] if c != r["answer"])
            assert score(f"It is in the {r['answer']}.", r["answer"], "short",
                         candidates=m["candidates"]).correct
            assert not score(f"It is in the {other}.", r["answer"], "short",
                             candidates=m["candidates"]).correct
    again = run_export(stories[:1], tmp_path / "mc2", "--choice-share", "0.5")
    assert again["splits"] == stats["splits"] and load(tmp_path / "mc2") == mixed  # seeded


def test_a_share_of_multiple_choice_options_are_sentences_stating_each_answer(stories, tmp_path):
    # BigToM and ToMATO list sentences, not names: --choice-sentences writes a share of ours so,
    # each option the question's answer in words, the gold still the same letter
    from exploretom.datasets.rows import as_sentences

    run_export(stories[:1], tmp_path / "names", "--choice-share", "1")
    stats = run_export(stories[:1], tmp_path / "said", "--choice-share", "1",
                       "--choice-sentences", "0.5")
    assert "--choice-sentences 0.5" in stats["command"]
    names = {r["id"]: r for rows in load(tmp_path / "names").values() for r in rows}
    said = [r for rows in load(tmp_path / "said").values() for r in rows if r["answer_type"] == "choice"]
    sentences = [r for r in said if r["choices"] != names[r["id"]]["choices"]]
    assert 0.25 < len(sentences) / len(said) < 0.75
    for r in sentences:
        old = names[r["id"]]
        assert r["answer"] == old["answer"] and len(r["choices"]) == len(old["choices"])
        assert all(c.endswith(".") and o in c for c, o in zip(r["choices"], old["choices"]))
        assert all(f"{chr(65 + i)}. {c}" in user_text(r) for i, c in enumerate(r["choices"]))
    belief = {"kind": "belief", "thing": "phone", "people": ["Ruth", "Miriam"]}
    assert as_sentences(belief, ["bag", "box"]) == [
        "Ruth thinks that Miriam will search for the phone in the bag.",
        "Ruth thinks that Miriam will search for the phone in the box."]
    assert as_sentences({"kind": "ground_truth", "thing": "phone"}, ["bag"]) == \
        ["The phone is now in the bag."]


def test_multiple_choice_options_are_padded_with_places_of_other_stories(stories, tmp_path):
    # Hi-ToM lists fifteen containers for a story that names four: --choice-options pads ours
    run_export(stories[:1], tmp_path / "pad", "--choice-share", "1", "--choice-options", "8")
    data = load(tmp_path / "pad")
    sizes = set()
    for split, rows in data.items():
        places = {c for r in rows for c in row_meta(r).get("candidates", [])}
        for r in rows:
            if r["answer_type"] != "choice":
                continue
            own = row_meta(r)["candidates"]
            assert set(own) <= set(r["choices"]) <= places  # distractors from the same split
            assert len(r["choices"]) <= 8 and len(set(r["choices"])) == len(r["choices"])
            sizes.add(len(r["choices"]) - len(own))
    assert len(sizes) > 2  # a seeded number of distractors, not always the same
    with pytest.raises(SystemExit):
        run_export(stories[:1], tmp_path / "bad", "--choice-options", "40")
