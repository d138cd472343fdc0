"""Rows and splits of the built datasets, without a server."""
from __future__ import annotations

import json

from eval.rows import meta, validate_row
from tomsynth.build import dataset_dict, in_test, item_row
from tomsynth.cli import main
from tomsynth.items import balance, check_reply
from tomsynth.units import units

STORY = ("Karen put the budget binder on the shelf by the window before the meeting and went to print the "
         "agenda. While she was gone, Paul moved it into his own drawer so the visitors would not see it.")
OPTIONS = {"A": "Near the window where she put it", "B": "In Paul's drawer", "C": "On the printer tray",
           "D": "In the visitors' folder"}


def _rows(n_units: int) -> list[dict]:
    reply = json.dumps({"narrative": STORY, "question": "Where will Karen look first?", "options": OPTIONS,
                        "answer": "A", "analysis": "She did not see the move."})
    narrative = [u for u in units("main") if u.format.key == "narrative"][:n_units]
    return [item_row(balance(check_reply(reply, u, k)), "gen", "ver") for u in narrative for k in range(4)]


def test_rows_follow_the_contract():
    row = _rows(1)[2]
    validate_row(row)
    m = meta(row)
    assert row["answer_type"] == "choice" and row["choices"][" ABCD".index(row["answer"]) - 1] == OPTIONS["A"]
    assert row["prompt"][0]["role"] == "system" and "Question: Where will Karen look first?" in row["prompt"][1]["content"]
    assert "\nA. " in row["prompt"][1]["content"] and m["entry"] == 2 and m["generator"] == "gen"
    assert m["dimension"] == "Emotions" and m["format"] == "Narrative" and m["original_answer"] == "A"


def test_test_split_holds_out_whole_units():
    rows = _rows(40)
    dd = dataset_dict(rows, 0.3)
    train_units = {meta(r)["unit"] for r in dd["train"]}
    test_units = {meta(r)["unit"] for r in dd["test"]}
    assert not train_units & test_units and len(dd["train"]) + len(dd["test"]) == 160
    assert 4 <= len(test_units) <= 20 and all(in_test(u, 0.3) for u in test_units)
    assert list(dd["train"]["id"]) == sorted(dd["train"]["id"])
    assert set(dataset_dict(rows, 0.0)) == {"train"}


def test_build_before_filter_is_a_clear_error(tmp_path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"out_dir: {tmp_path / 'o'}\ngenerator: {{backend: openai, model: g, api_key_env: ''}}\n"
                   "verifier: {backend: openai, model: v, api_key_env: ''}\n")
    assert main(["build", "-c", str(cfg)]) == 2
    assert "run `python -m tomsynth generate` and `filter` first" in capsys.readouterr().err
    assert main(["filter", "-c", str(cfg), "--quiet"]) == 0  # nothing generated: empty reports
    assert main(["build", "-c", str(cfg)]) == 2
    assert "nothing to build" in capsys.readouterr().err
