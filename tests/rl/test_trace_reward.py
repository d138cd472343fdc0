"""The checked-derivation reward (rl.trace_reward): a right answer earns it only with a trace the
checker accepts (exploretom.semantics.derived; tests/exploretom/test_derived.py checks it on every
row of a real export), and a config weight adds it to GRPO's rewards."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rl.config import ConfigError, GRPORun, load_config
from rl.rewards import outcome_reward, reward_functions
from rl.trace_reward import trace_reward
from tests.exploretom.test_derived import david, reply

REPO = Path(__file__).resolve().parents[2]


def test_a_right_answer_earns_the_reward_only_with_a_checked_derivation():
    meta, trace = david()
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
    # rows without meta (other sources) are left out of the sum
    assert trace_reward()(prompts=[[]], completions=[reply(trace)], answer=[meta["answer"]],
                          answer_type=["short"]) == [None]


def test_a_config_weight_adds_it_to_the_grpo_rewards():
    config = REPO / "configs/grpo/demo-cpu.yaml"
    funcs, weights = reward_functions(load_config(config, GRPORun, ["--reward.trace_weight", "0.5"]))
    assert [f.__name__ for f in funcs] == ["format_reward", "outcome_reward", "checked_trace"]
    assert weights == [1.0, 1.0, 0.5]
    plain = load_config(config, GRPORun, ["--reward.trace_weight", "0"])
    assert [f.__name__ for f in reward_functions(plain)[0]] == ["format_reward", "outcome_reward"]
    with pytest.raises(ConfigError, match="trace_weight"):
        load_config(config, GRPORun, ["--reward.trace_weight", "-1"])
