"""Beyond TRL (rl.trainer, rl.rewards): DAPO's dynamic sampling and soft overlong penalty, and greedy
evaluation during training, on a tiny random Llama on CPU."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from eval.answers import tagged
from rl.rewards import overlong_reward
from rl.trainer import _concat, accuracy_by_group

REPO = Path(__file__).resolve().parents[2]
GRPO_CFG = str(REPO / "configs/grpo/tiny-cpu.yaml")


def test_soft_overlong_penalty_follows_dapo():
    # max 20, buffer 8: free up to 12 tokens, then -1/8 per token, -1 at the limit
    fn = overlong_reward(20, 8)
    lengths = (0, 12, 13, 16, 19, 20, 25)
    assert fn(prompts=["p"] * 7, completions=["c"] * 7, completion_ids=[[1] * n for n in lengths]) == \
        [0.0, 0.0, -0.125, -0.5, -0.875, -1.0, -1.0]
    assert fn(prompts=["p"] * 3, completions=["a", "b", "c"], completion_ids=[[1] * 5, [1] * 14, [1] * 20]) == \
        [0.0, -0.25, -1.0]
    assert fn.__name__ == "overlong_penalty"  # its metrics' name, as TRL logs them
    for buffer in (0, 21):  # TRL's takes both; a run's config refuses them
        with pytest.raises(ValueError, match="overlong buffer"):
            overlong_reward(20, buffer)


def test_concat_pads_prompts_left_and_completions_right():
    a = {"prompt_ids": torch.tensor([[5, 6]]), "prompt_mask": torch.tensor([[1, 1]]),
         "completion_ids": torch.tensor([[7]]), "completion_mask": torch.tensor([[1]]),
         "advantages": torch.tensor([0.5])}
    b = {"prompt_ids": torch.tensor([[4, 5, 6]]), "prompt_mask": torch.tensor([[1, 1, 1]]),
         "completion_ids": torch.tensor([[7, 8, 9]]), "completion_mask": torch.tensor([[1, 1, 1]]),
         "advantages": torch.tensor([-0.5])}
    out = _concat([a, b], pad_token_id=0)
    assert out["prompt_ids"].tolist() == [[0, 5, 6], [4, 5, 6]]
    assert out["prompt_mask"].tolist() == [[0, 1, 1], [1, 1, 1]]
    assert out["completion_ids"].tolist() == [[7, 0, 0], [7, 8, 9]]
    assert out["completion_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    assert out["advantages"].tolist() == [0.5, -0.5]


def test_accuracy_by_group_scores_per_source_and_order_and_skips_failures():
    rows = [{"answer": "box", "answer_type": "short", "source": "s1", "meta": json.dumps({"order": 1})},
            {"answer": "yes", "answer_type": "yes_no", "source": "s2", "meta": {"order": 0}},
            {"answer": "no", "answer_type": "yes_no", "source": "s2", "meta": None},
            {"answer": "no", "answer_type": "yes_no", "source": "s2", "meta": None}]
    texts = [tagged("box", "x"), "<answer>yes</answer>",  # second: no think block
             tagged("no", "y"), None]  # last: generation failed
    m = accuracy_by_group(rows, texts)
    assert m["errors"] == 1.0
    assert m["accuracy"] == pytest.approx(2 / 3) and m["format"] == pytest.approx(2 / 3)
    assert m["accuracy/source/s1"] == 1.0 and m["accuracy/source/s2"] == 0.5
    assert m["accuracy/order/1"] == 1.0 and m["accuracy/order/0"] == 0.0


# --------------------------------------------------------------------------------------------
# Dynamic sampling inside a real GRPO step


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rl.tiny_model import build_tiny_model

    corpus = ["Sally puts the marble in the box. Where is it? <think>seen</think><answer>box</answer>"] * 40
    return build_tiny_model(corpus, tmp_path_factory.mktemp("tiny"), vocab_size=300, hidden_size=64,
                            num_layers=2, num_heads=2, num_kv_heads=1, seed=0)


def _rows(n: int, every: int = 2) -> list[dict]:
    # "varied" prompts (one in `every`; none for 0) get reward variance, "flat" ones never do
    kinds = ["varied" if every and i % every == 0 else "flat" for i in range(n)]
    return [{"prompt": [{"role": "user", "content": f"{k} question {i}"}], "source": k} for i, k in enumerate(kinds)]


def _varied_reward():
    """1 for every other completion of a `varied` prompt, 0 for `flat` prompts: within a group of a
    varied prompt the rewards always differ, within a flat one they never do."""
    calls = {"n": 0}

    def reward(prompts, completions, source, **kwargs):
        out = []
        for s in source:
            calls["n"] += 1
            out.append(float(calls["n"] % 2) if s == "varied" else 0.0)
        return out

    return reward


def _trainer(tiny, tmp_path, dynamic: bool, rounds: int = 8, steps: int = 2, every: int = 2):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, max_steps=steps, learning_rate=1e-3,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=6,
                      logging_steps=1, report_to="none", save_strategy="no", beta=0.0, seed=0,
                      **_checkpointing_arg(False))
    trainer = trainer_class(GRPOTrainer)(model=str(tiny), reward_funcs=[_varied_reward()], args=args,
                                         train_dataset=Dataset.from_list(_rows(40, every)), dynamic_sampling=dynamic,
                                         max_generation_rounds=rounds)
    seen = []  # what each loss computation saw: (prompt texts, advantages)
    inner = trainer._compute_loss

    def spy(model, inputs):
        texts = trainer.processing_class.batch_decode(inputs["prompt_ids"], skip_special_tokens=True)
        seen.append((texts, inputs["advantages"].clone()))
        return inner(model, inputs)

    trainer._compute_loss = spy
    return trainer, seen


@pytest.mark.slow
def test_dynamic_sampling_trains_only_on_informative_groups(tiny, tmp_path):
    trainer, seen = _trainer(tiny, tmp_path / "on", dynamic=True)
    before = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    assert len(seen) == 2
    for texts, adv in seen:
        assert len(texts) == 8 and all("varied" in t for t in texts)  # no flat prompt reached the loss
        assert (adv.view(-1, 4).std(dim=1) > 0).all()  # every group carries signal
    logs = [r for r in trainer.state.log_history if "dynamic_sampling/dropped_frac" in r]
    assert len(logs) == 2
    # half of the prompts are flat: a batch that drew some drops them and refills with varied ones
    assert all(r["dynamic_sampling/filler_frac"] == 0 for r in logs)
    refilled = [r for r in logs if r["dynamic_sampling/dropped_frac"] > 0]
    assert refilled and all(r["dynamic_sampling/rounds"] >= 2 for r in refilled)
    assert all(r["dynamic_sampling/rounds"] == 1 for r in logs if r not in refilled)
    assert any(not torch.equal(before[k], v) for k, v in trainer.model.state_dict().items())

    # without it the same data puts flat (zero-advantage) groups into the loss
    plain, seen_plain = _trainer(tiny, tmp_path / "off", dynamic=False)
    plain.train()
    assert any("flat" in t for texts, _ in seen_plain for t in texts)


@pytest.mark.slow
def test_dynamic_sampling_fills_with_dropped_groups_when_rounds_run_out(tiny, tmp_path):
    # no prompt ever has reward variance: two rounds, everything dropped, the batch is filler
    trainer, seen = _trainer(tiny, tmp_path, dynamic=True, rounds=2, steps=1, every=0)
    trainer.train()
    texts, adv = seen[0]
    assert len(texts) == 8 and all("flat" in t for t in texts) and torch.all(adv == 0)
    log = next(r for r in trainer.state.log_history if "dynamic_sampling/filler_frac" in r)
    assert log["dynamic_sampling/filler_frac"] == 1.0 and log["dynamic_sampling/dropped_frac"] == 1.0
    assert log["dynamic_sampling/rounds"] == 2.0


def test_dynamic_sampling_refuses_groups_split_over_processes(tiny, tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    from rl.config import ConfigError
    from rl.trainer import trainer_class

    # 6 completions per process with groups of 4: TRL accepts it when the global batch divides
    # (e.g. 2 processes), our dynamic sampling cannot keep groups whole
    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, per_device_train_batch_size=6,
                      num_generations=2, report_to="none")
    args.num_generations = 4
    with pytest.raises(ConfigError, match="whole groups on each process"):
        trainer_class(GRPOTrainer)(model=str(tiny), reward_funcs=[_varied_reward()], args=args,
                                   train_dataset=None, dynamic_sampling=True)


# --------------------------------------------------------------------------------------------
# All three through the command line, with greedy evaluation logged to the log file and wandb


@pytest.mark.slow
def test_cli_run_logs_greedy_eval_dynamic_sampling_and_overlong_penalty(tiny, tmp_path, toy_data, monkeypatch):
    from rl.train import cli

    monkeypatch.setenv("WANDB_MODE", "offline")
    out = tmp_path / "run"
    data = json.dumps([{"path": str(toy_data["location"])}])
    held_out = json.dumps([{"path": str(toy_data["knowledge"]), "split": "test"},
                           {"path": str(toy_data["location"]), "max_rows": 8}])
    rc = cli([GRPO_CFG, "--model.path", str(tiny), "--train.output_dir", str(out), "--data.train", data,
              "--data.eval", held_out, "--max_steps", "2", "--logging_steps", "1", "--save_steps", "10",
              "--max_completion_length", "12", "--per_device_train_batch_size", "8", "--num_generations", "4",
              "--grpo.dynamic_sampling", "true", "--grpo.max_generation_rounds", "2",
              "--reward.overlong_buffer", "4", "--greedy_eval.steps", "1", "--greedy_eval.max_new_tokens", "8",
              "--log.report_to", "[wandb]"])
    assert rc == 0
    logs = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    evals = [r for r in logs if "greedy_eval/accuracy" in r]
    assert [r["step"] for r in evals] == [1, 2]
    for r in evals:
        # the mix: 8 rows of each source
        assert r["greedy_eval/rows"] == 16.0 and r["greedy_eval/errors"] == 0.0
        assert {"greedy_eval/accuracy/source/toy-location", "greedy_eval/accuracy/source/toy-knowledge",
                "greedy_eval/accuracy/order/0", "greedy_eval/accuracy/order/1", "greedy_eval/format"} <= r.keys()
    train = [r for r in logs if "dynamic_sampling/dropped_frac" in r]
    assert len(train) == 2 and all("rewards/overlong_penalty/mean" in r for r in train)
    for r in train:  # (the exact fractions depend on the random model's completion lengths)
        assert 0 <= r["dynamic_sampling/filler_frac"] <= r["dynamic_sampling/dropped_frac"] <= 1
        assert r["dynamic_sampling/rounds"] in (1.0, 2.0) and -1 <= r["rewards/overlong_penalty/mean"] <= 0
    assert not any(k.startswith("eval_") for r in logs for k in r)  # TRL's sampled eval is off
    runs = list((out / "wandb").glob("offline-run-*/run-*.wandb"))
    assert len(runs) == 1
    # wandb's own service process writes the file; on a loaded machine its last records can land
    # a moment after wandb.finish() has returned.
    deadline = time.monotonic() + 60
    while b"greedy_eval/accuracy/source/toy-knowledge" not in runs[0].read_bytes():
        assert time.monotonic() < deadline, "the greedy-eval metrics never reached the wandb file"
        time.sleep(0.5)


def test_config_checks_the_extras(toy_data):
    from rl.config import ConfigError, GRPORun, load_config

    base = [GRPO_CFG, "--data.train", json.dumps([{"path": str(toy_data["location"])}])]
    with pytest.raises(ConfigError, match="reward.overlong_buffer: 65 tokens is longer than grpo.max_completion_length"):
        load_config(base[0], GRPORun, base[1:] + ["--reward.overlong_buffer", "65"])
    with pytest.raises(ConfigError, match="greedy_eval.steps: needs held-out rows in data.eval"):
        load_config(base[0], GRPORun, base[1:] + ["--greedy_eval.steps", "5"])
    cfg = load_config(base[0], GRPORun, base[1:] + ["--reward.overlong_buffer", "16", "--overlong_weight", "0.5"])
    from rl.rewards import reward_functions

    funcs, weights = reward_functions(cfg)
    assert [f.__name__ for f in funcs] == ["format_reward", "outcome_reward", "overlong_penalty"]
    assert weights == [1.0, 1.0, 0.5]


@pytest.mark.slow
def test_dynamic_sampling_and_greedy_eval_under_two_processes(tiny, tmp_path, toy_data):
    """Refill rounds and the evaluation's gathers are collective: two CPU processes (gloo) must
    agree on the number of rounds and see every held-out row once."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "ddp"
    cmd = [str(Path(sys.executable).parent / "accelerate"), "launch", "--config_file",
           "configs/accelerate/cpu-2proc.yaml", "--main_process_port", str(port), "-m", "rl.train", GRPO_CFG,
           "--model.path", str(tiny), "--train.output_dir", str(out),
           "--data.train", json.dumps([{"path": str(toy_data["location"])}]),
           "--data.eval", json.dumps([{"path": str(toy_data["knowledge"]), "split": "test", "max_rows": 7}]),
           "--max_steps", "2", "--logging_steps", "1", "--save_steps", "10", "--max_completion_length", "8",
           "--per_device_train_batch_size", "8", "--num_generations", "4",
           "--grpo.dynamic_sampling", "true", "--grpo.max_generation_rounds", "2", "--greedy_eval.steps", "1"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 process(es)" in proc.stderr
    logs = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    evals = [r for r in logs if "greedy_eval/accuracy" in r]
    assert [r["step"] for r in evals] == [1, 2] and all(r["greedy_eval/rows"] == 7.0 for r in evals)
    train = [r for r in logs if "dynamic_sampling/rounds" in r]
    assert len(train) == 2 and all(r["dynamic_sampling/rounds"] in (1.0, 2.0) for r in train)
