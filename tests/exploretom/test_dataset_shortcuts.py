"""`export --balance-shortcuts`: on the kept belief questions of every order no shortcut (last,
first or most mentioned container, true place) is right more or less often than chance; the
other questions are untouched."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from eval.shortcut_report import table_of_rows
from eval.shortcuts import SHORTCUTS
from exploretom.cli import main as cli_main
from exploretom.datasets import export
from exploretom.datasets.shortcuts import TOLERANCE, plan


def test_plan_keeps_the_most_questions_at_chance():
    last_and_true = ((1, 0, 1, 1), 2)  # gold is the last-mentioned container and the true place
    first = ((0, 1, 0, 0), 2)          # gold is the first-mentioned one
    # two containers: chance 1/2, so as many of each: 3 and 3 of 10 and 3
    assert plan({last_and_true: 10, first: 3}) == {last_and_true: 3, first: 3}
    # three containers (chance 1/3) need a third kind, right under no shortcut
    neither = ((0, 0, 0, 0), 3)
    three = {((1, 0, 1, 1), 3): 9, ((0, 1, 0, 0), 3): 9, neither: 2}
    assert plan(three) == {((1, 0, 1, 1), 3): 2, ((0, 1, 0, 0), 3): 2, neither: 2}
    # a bucket that always beats chance and nothing to offset it: nothing is kept
    assert plan({last_and_true: 5}) == {last_and_true: 0}


@pytest.fixture(scope="module")
def stories(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("stories")
    paths = []
    for action_set in ("A1", "A2"):
        path = d / f"{action_set}.jsonl"
        assert cli_main(["sample", "--action-set", action_set, "--people", "3", "--moves", "3",
                         "--rooms", "2", "--max-actions", "12", "-n", "60", "--seed", "5",
                         "--label", "-q", "-o", str(path)]) == 0
        paths.append(path)
    return paths


def run_export(inputs, out: Path, *options: str) -> dict:
    parser = argparse.ArgumentParser()
    export.add_arguments(parser)
    args = parser.parse_args([*map(str, inputs), "-o", str(out), "--splits", "1,0,0",
                              "--properties", "container_location", *options])
    assert export.run(args) == 0
    return json.loads((out / export.STATS_FILE).read_text())


def train_rows(out: Path) -> list[dict]:
    from datasets import load_from_disk
    return load_from_disk(str(out))["train"].to_list()


def test_balanced_export_leaves_no_shortcut_above_or_below_chance(stories, tmp_path):
    run_export(stories, tmp_path / "plain")
    plain = train_rows(tmp_path / "plain")
    stats = run_export(stories, tmp_path / "bal", "--balance-shortcuts")
    balanced = train_rows(tmp_path / "bal")
    before, after = table_of_rows("exploretom", plain), table_of_rows("exploretom", balanced)
    orders = [g for g in after if g.startswith("belief, order")]
    assert orders
    # before: some shortcut is far from chance on the belief questions of some order
    assert any(abs(before[g]["shortcuts"][s] - before[g]["chance"]) > 0.1
               for g in orders for s in SHORTCUTS)
    for g in orders:
        assert after[g]["n"] > 0
        for s in SHORTCUTS:
            assert abs(after[g]["shortcuts"][s] - after[g]["chance"]) <= TOLERANCE + 1e-9, (g, s)
    # reality and memory questions are all kept; belief questions only dropped
    ids = {r["id"] for r in balanced}
    for r in plain:
        if json.loads(r["meta"])["kind"] != "belief":
            assert r["id"] in ids
    assert ids <= {r["id"] for r in plain} and len(balanced) < len(plain)
    counts = stats["selection"]["shortcut_balance"]["train"]
    assert sum(c["after"] for c in counts.values()) == sum(after[g]["n"] for g in orders)
    assert stats["options"]["balance_shortcuts"] is True
    assert "--balance-shortcuts" in stats["command"]
