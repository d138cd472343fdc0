"""The checked-derivation reward (rl.trace_reward): a right answer earns it only with a trace the
checker accepts, on a story a reader can check (the ExploreToM paper's table 11) and on every row
of a real export."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.answers import tagged
from exploretom.build import enter, leave, put
from exploretom.cli import main as cli_main
from exploretom.label import label_story
from exploretom.story import parse_story
from exploretom.trace import story_traces
from rl.config import ConfigError, GRPORun, load_config
from rl.rewards import outcome_reward, reward_functions
from rl.trace_reward import checked_derivation, trace_reward

REPO = Path(__file__).resolve().parents[2]
TABLE_11 = [enter("David", "study room"), enter("Sarah", "study room"),
            put("Sarah", "prototype model", "metal filing cabinet"), leave("David", "study room"),
            enter("Mark", "study room"), put("Mark", "prototype model", "wooden chest")]
QUESTION = "In which container will David search for the prototype model?"


def david():
    """David's container belief in table 11: his row's meta (the question and the story, as
    export writes them) and the tracker's trace."""
    qs = label_story(parse_story({"id": "t11", "actions": TABLE_11}), 2)["questions"]
    traces = story_traces(parse_story({"id": "t11", "actions": TABLE_11}).actions, qs, 2)
    [(q, trace)] = [(q, t) for q, t in zip(qs, traces) if q["question"] == QUESTION]
    return {**q, "story": {"actions": TABLE_11}}, trace


def reply(think: str, answer: str = "metal filing cabinet") -> str:
    return tagged(answer, think)


def test_a_right_answer_earns_the_reward_only_with_a_checked_derivation():
    meta, trace = david()
    assert meta["answer"] == "metal filing cabinet"
    # David saw Sarah's move, then left: he did not see Mark's.
    assert trace.splitlines()[1] == ("Step 6: Mark moved the prototype model to the wooden chest. "
                                     "David was elsewhere.")
    swapped = trace.replace("David was elsewhere.", "David saw it.")  # one observer changed
    no_step = "\n".join(line for line in trace.splitlines() if not line.startswith("Step 6"))
    completions = [reply(trace), reply("David was out, so he guesses."), reply(swapped),
                   reply(no_step), reply(trace, "wooden chest"), "metal filing cabinet"]
    n = len(completions)
    got = trace_reward()(prompts=[[]] * n, completions=completions, answer=[meta["answer"]] * n,
                         answer_type=["short"] * n, meta=[json.dumps(meta)] * n)
    assert got == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    # the outcome reward pays the guess and the wrong derivations as much as the right one
    outcome = outcome_reward(prompts=[[]] * n, completions=completions,
                             answer=[meta["answer"]] * n, answer_type=["short"] * n)
    assert outcome == [1.0, 1.0, 1.0, 1.0, 0.0, 0.0]


def test_rows_without_a_story_are_left_out():
    meta, trace = david()
    gold = "metal filing cabinet"
    assert checked_derivation(reply(trace), gold, "short", {"order": 1}) is None
    assert checked_derivation(reply(trace), gold, "short", "not json") is None
    assert checked_derivation(reply(trace), gold, "short", {**meta, "story": {"actions": "x"}}) is None
    assert trace_reward()(prompts=[[]], completions=[reply(trace)], answer=[gold],
                          answer_type=["short"]) == [None]
    assert checked_derivation(reply(trace), gold, "short", meta) == 1.0  # a dict works too


def test_every_exported_rows_own_trace_earns_it(tmp_path):
    """Every question of a real export (all orders and properties, three action sets): the row's
    own trace in meta.reasoning scores 1, a guess 0."""
    from tests.exploretom.test_export import load, run_export

    paths = []
    for action_set in ("A1", "A3", "A5"):
        path = tmp_path / f"{action_set}.jsonl"
        assert cli_main(["sample", "--action-set", action_set, "--people", "3", "--moves", "3",
                         "--rooms", "2", "--max-actions", "10", "-n", "12", "--seed", "1",
                         "--label", "-q", "-o", str(path)]) == 0
        paths.append(path)
    run_export(paths, tmp_path / "ds")
    rows = [r for split in load(tmp_path / "ds").values() for r in split]
    assert len(rows) > 300
    reward = trace_reward()
    for r in rows:
        meta = json.loads(r["meta"]) if isinstance(r["meta"], str) else r["meta"]
        good, guess = reply(meta["reasoning"], r["answer"]), reply("I guess.", r["answer"])
        assert reward(prompts=[[], []], completions=[good, guess], answer=[r["answer"]] * 2,
                      answer_type=[r["answer_type"]] * 2, meta=[r["meta"]] * 2) == [1.0, 0.0], r["id"]


def test_a_config_weight_adds_it_to_the_grpo_rewards():
    config = REPO / "configs/grpo/demo-cpu.yaml"
    funcs, weights = reward_functions(load_config(config, GRPORun, ["--reward.trace_weight", "0.5"]))
    assert [f.__name__ for f in funcs] == ["format_reward", "outcome_reward", "checked_trace"]
    assert weights == [1.0, 1.0, 0.5]
    plain = load_config(config, GRPORun, ["--reward.trace_weight", "0"])
    assert [f.__name__ for f in reward_functions(plain)[0]] == ["format_reward", "outcome_reward"]
    with pytest.raises(ConfigError, match="trace_weight"):
        load_config(config, GRPORun, ["--reward.trace_weight", "-1"])
