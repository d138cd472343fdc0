"""Frontier prompts (rl.frontier, rl.trainer): pass rates measured with the trainer's own generation
and rewards, and only the prompts the policy sometimes solves reaching the loss; on a tiny random
Llama on CPU, with a reward scripted per prompt."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from rl.config import FrontierSettings
from rl.frontier import Frontier, histogram, pass_rate_bin, weight

REPO = Path(__file__).resolve().parents[2]
GRPO_CFG = str(REPO / "configs/grpo/tiny-cpu.yaml")


def test_histogram_bins_and_weights():
    assert [pass_rate_bin(p) for p in (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0)] == \
        ["0", "0-0.25", "0-0.25", "0.25-0.5", "0.25-0.5", "0.5-0.75", "0.5-0.75", "0.75-1", "1"]
    assert histogram([0.0, 0.0, 0.5, 1.0]) == {"0": 0.5, "0-0.25": 0.0, "0.25-0.5": 0.25, "0.5-0.75": 0.0,
                                               "0.75-1": 0.0, "1": 0.25}
    assert weight(0.5, 0.1) == 1.0 and weight(0.25, 0.1) == 0.75 and weight(0.01, 0.1) == 0.1
    assert weight(0.25, 1.0) == 1.0  # floor 1: uniform


def test_frontier_keeps_only_sometimes_solved_prompts_and_draws_toward_half():
    f = Frontier(FrontierSettings(enabled=True, every_steps=5, floor=0.0), n_rows=6, seed=0)
    assert f.due(0)
    f.update({0: 0.0, 1: 1.0, 2: 0.5, 3: 0.125, 4: 0.875, 5: 0.5}, step=0, seconds=1.0)
    assert sorted(f.kept) == [2, 3, 4, 5]
    assert not f.due(4) and f.due(5)
    # one prompt per draw, many draws: p = 0.5 (weight 1) about 1 / 0.4375 = 2.3 times p = 1/8
    counts = Counter(i for _ in range(4000) for i in f.draw(1))
    assert set(counts) == {2, 3, 4, 5}
    assert 1.9 < (counts[2] + counts[5]) / (counts[3] + counts[4]) < 2.7
    # a batch wider than the frontier gets each frontier prompt once
    assert sorted(f.draw(10)) == [2, 3, 4, 5]
    m = f.metrics()
    assert m["frontier/prompts"] == 4 and m["frontier/measured"] == 6 and m["frontier/rounds"] == 1
    assert m["frontier/pass_rate/0"] == m["frontier/pass_rate/1"] == pytest.approx(1 / 6)
    assert m["frontier/pass_rate/0.25-0.5"] == pytest.approx(2 / 6)
    # bounds narrower than (0, 1)
    g = Frontier(FrontierSettings(enabled=True, low=0.2, high=0.8), n_rows=6, seed=0)
    g.update(f.rates, step=0, seconds=0.0)
    assert sorted(g.kept) == [2, 5] and g.draw(0) == []


def test_measurement_rounds_walk_through_the_training_set():
    f = Frontier(FrontierSettings(enabled=True, max_prompts=4), n_rows=10, seed=3)
    rounds = [f.next_prompts() for _ in range(3)]
    assert all(len(r) == 4 and len(set(r)) == 4 for r in rounds)
    assert set(rounds[0]) | set(rounds[1]) | set(rounds[2][:2]) == set(range(10))  # one pass, then the next
    assert Frontier(FrontierSettings(enabled=True, max_prompts=4), n_rows=10, seed=3).next_prompts() == rounds[0]
    assert sorted(Frontier(FrontierSettings(enabled=True, max_prompts=None), 7, 0).next_prompts()) == list(range(7))


def test_config_errors_are_one_line(toy_data):
    from rl.config import ConfigError, GRPORun, load_config

    base = [GRPO_CFG, "--data.train", json.dumps([{"path": str(toy_data["location"])}])]
    for extra, message in [
        (["--frontier.low", "0.6", "--frontier.high", "0.4"], "frontier.low (0.6) must be below frontier.high (0.4)"),
        (["--frontier.samples", "1"], "frontier.samples"),
        (["--frontier.every_steps", "0"], "frontier.every_steps"),
        (["--frontier.enabled", "true", "--frontier.reward", "outcome"],
         "frontier.reward: 'outcome' is not a reward of this run (format_reward, outcome_reward)"),
    ]:
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
            load_config(base[0], GRPORun, base[1:] + extra)
        assert "\n" not in str(e.value)
    cfg = load_config(base[0], GRPORun, base[1:] + ["--frontier.enabled", "true", "--reward.overlong_buffer", "8",
                                                    "--frontier.reward", "overlong_penalty"])
    assert cfg.frontier.enabled and cfg.frontier.reward == "overlong_penalty"
    assert not load_config(base[0], GRPORun, base[1:]).frontier.enabled  # off by default


# --------------------------------------------------------------------------------------------
# Inside a real GRPO run


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rl.tiny_model import build_tiny_model

    corpus = ["Sally puts the marble in the box. Where is it? <think>seen</think><answer>box</answer>"] * 40
    return build_tiny_model(corpus, tmp_path_factory.mktemp("tiny"), vocab_size=300, hidden_size=64,
                            num_layers=2, num_heads=2, num_kv_heads=1, seed=0)


KINDS = ("always", "never", "half")


def _rows(n: int) -> list[dict]:
    return [{"prompt": [{"role": "user", "content": f"{KINDS[i % 3]} question {i}"}], "source": KINDS[i % 3]}
            for i in range(n)]


def _scripted_reward():
    """An outcome reward set by the prompt: `always` prompts earn 1, `never` ones 0, and `half`
    ones 1 for every other completion (groups are even, so exactly half of each group)."""
    calls = {"n": 0}

    def outcome_reward(prompts, completions, source, **kwargs):
        out = []
        for s in source:
            calls["n"] += 1
            out.append(1.0 if s == "always" else 0.0 if s == "never" else float(calls["n"] % 2))
        return out

    return outcome_reward


def _trainer(tiny, tmp_path, steps: int = 2, dynamic: bool = False, **frontier):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    args = GRPOConfig(output_dir=str(tmp_path), use_cpu=True, bf16=False, max_steps=steps, learning_rate=1e-3,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=4,
                      logging_steps=1, report_to="none", save_strategy="no", beta=0.0, seed=0,
                      **_checkpointing_arg(False))
    settings = FrontierSettings(**{"enabled": True, "every_steps": 1, "samples": 4, **frontier})
    trainer = trainer_class(GRPOTrainer)(model=str(tiny), reward_funcs=[_scripted_reward()], args=args,
                                         train_dataset=Dataset.from_list(_rows(12)), frontier=settings,
                                         dynamic_sampling=dynamic)
    seen = []  # the prompts each loss computation saw
    inner = trainer._compute_loss

    def spy(model, inputs):
        seen.append(trainer.processing_class.batch_decode(inputs["prompt_ids"], skip_special_tokens=True))
        return inner(model, inputs)

    trainer._compute_loss = spy
    return trainer, seen


@pytest.mark.slow
def test_measured_pass_rates_follow_the_reward(tiny, tmp_path):
    from rl.frontier import measure

    trainer, _ = _trainer(tiny, tmp_path)
    trainer.model.train()
    before = (trainer.state.num_input_tokens_seen, dict(trainer._metrics["train"]))
    rates = measure(trainer, list(range(12)), samples=4, reward="outcome_reward")
    assert rates == {i: {"always": 1.0, "never": 0.0, "half": 0.5}[KINDS[i % 3]] for i in range(12)}
    # the measurement leaves the run's metrics and token count alone
    assert (trainer.state.num_input_tokens_seen, dict(trainer._metrics["train"])) == before
    assert not trainer._pending_metrics and trainer.num_generations == 4
    # samples other than the group size, and a prompt count that does not fill the last chunk
    # (chunks of 8 completions: 4 prompts of 2 samples)
    assert measure(trainer, [0, 1, 2, 3, 4], samples=2, reward="outcome_reward") == \
        {0: 1.0, 1: 0.0, 2: 0.5, 3: 1.0, 4: 0.0}


@pytest.mark.slow
@pytest.mark.parametrize("dynamic", [False, True])
def test_only_frontier_prompts_reach_the_loss(tiny, tmp_path, dynamic):
    trainer, seen = _trainer(tiny, tmp_path, steps=2, dynamic=dynamic)
    trainer.train()
    assert len(seen) == 2
    for texts in seen:  # 2 prompts x 4 completions per step, all of them `half` ones
        assert len(texts) == 8 and all("half" in t for t in texts)
    logs = [r for r in trainer.state.log_history if "frontier/prompts" in r]
    assert len(logs) == 2
    for r in logs:
        assert r["frontier/prompts"] == 4 and r["frontier/measured"] == 12
        assert r["frontier/pass_rate/0"] == r["frontier/pass_rate/1"] == r["frontier/pass_rate/0.25-0.5"] == \
            pytest.approx(1 / 3)
        assert r["frontier/batch_frac"] == 1.0 and r["frontier/measure_s"] > 0
        assert r["frac_reward_zero_std"] == 0.0  # every group trained on disagrees
    assert [r["frontier/rounds"] for r in logs] == [1.0, 2.0]  # every_steps 1: before each step
    if not dynamic:  # without the frontier, TRL's loader puts always- and never-solved prompts in
        plain, seen_plain = _trainer(tiny, tmp_path / "off", steps=2, enabled=False)
        plain.train()
        assert any("half" not in t for texts in seen_plain for t in texts)
        assert not any("frontier/prompts" in r for r in plain.state.log_history)


@pytest.mark.slow
def test_cli_run_logs_frontier_and_flat_groups_to_the_log_file(tiny, tmp_path, toy_data, monkeypatch):
    """Through rl.train: the random tiny model solves nothing, so the frontier is empty and the
    batches come from the whole training set; log.jsonl says so."""
    from rl.train import cli

    monkeypatch.setenv("WANDB_MODE", "disabled")
    out = tmp_path / "run"
    rc = cli(_cli_args(tiny, toy_data, out, "--frontier.max_prompts", "6"))
    assert rc == 0
    logs = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    train = [r for r in logs if "frontier/prompts" in r]
    assert len(train) == 2
    for r in train:
        assert r["frontier/measured"] == 6 and r["frontier/prompts"] == 0 and r["frontier/pass_rate/0"] == 1.0
        assert r["frontier/batch_frac"] == 0.0 and r["frac_reward_zero_std"] == 1.0


def _cli_args(tiny, toy_data, out: Path, *extra: str) -> list[str]:
    return [GRPO_CFG, "--model.path", str(tiny), "--train.output_dir", str(out),
            "--data.train", json.dumps([{"path": str(toy_data["location"]), "max_rows": 16}]),
            "--max_steps", "2", "--logging_steps", "1", "--save_steps", "10", "--max_completion_length", "4",
            "--per_device_train_batch_size", "8", "--num_generations", "4", "--log.report_to", "[]",
            "--frontier.enabled", "true", "--frontier.every_steps", "1", "--frontier.samples", "2", *extra]


@pytest.mark.slow
def test_frontier_under_two_processes(tiny, tmp_path, toy_data):
    """The measurement's generation and reward gather are collective: two CPU processes (gloo)
    measure 7 prompts in chunks of 4 per process (8 completions of 2 samples), the last chunk
    wrapping round, and agree on the rates."""
    import os
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "ddp"
    cmd = [str(Path(sys.executable).parent / "accelerate"), "launch", "--config_file",
           "configs/accelerate/cpu-2proc.yaml", "--main_process_port", str(port), "-m", "rl.train",
           *_cli_args(tiny, toy_data, out, "--frontier.max_prompts", "7", "--grpo.dynamic_sampling", "true",
                      "--grpo.max_generation_rounds", "2")]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "2 process(es)" in proc.stderr and "7 prompts measured at step 0" in proc.stderr
    logs = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    train = [r for r in logs if "frontier/measured" in r]
    assert len(train) == 2 and all(r["frontier/measured"] == 7 for r in train)


def _vllm_rates(model: str, out: str) -> dict:
    """Pass rates measured with colocated vLLM generation (run in its own process: the engine
    joins a torch.distributed group that must not leak into other tests), and a 2-step run."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from rl.frontier import measure
    from rl.run import _checkpointing_arg
    from rl.trainer import trainer_class

    args = GRPOConfig(output_dir=out, use_cpu=True, bf16=False, max_steps=2, learning_rate=1e-3,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=4, logging_steps=1,
                      report_to="none", save_strategy="no", beta=0.0, seed=0, use_vllm=True, vllm_mode="colocate",
                      vllm_max_model_length=256, **_checkpointing_arg(False))
    trainer = trainer_class(GRPOTrainer)(model=model, reward_funcs=[_scripted_reward()], args=args,
                                         train_dataset=Dataset.from_list(_rows(12)),
                                         frontier=FrontierSettings(enabled=True, every_steps=1, samples=2))
    trainer.model.train()
    rates = measure(trainer, list(range(12)), samples=2, reward="outcome_reward")
    trainer.train()
    logs = [r for r in trainer.state.log_history if "frontier/prompts" in r]
    return {"rates": {str(k): v for k, v in rates.items()}, "prompts": [r["frontier/prompts"] for r in logs]}


@pytest.mark.slow
def test_frontier_measures_with_vllm_colocated(tiny, tmp_path):
    import os
    import subprocess

    pytest.importorskip("vllm")
    result = tmp_path / "vllm.json"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, __file__, str(tiny), str(tmp_path / "run"), str(result)], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    got = json.loads(result.read_text())
    assert got["rates"] == {str(i): {"always": 1.0, "never": 0.0, "half": 0.5}[KINDS[i % 3]] for i in range(12)}
    assert got["prompts"] == [4.0, 4.0]


if __name__ == "__main__":
    model, out, result = sys.argv[1:4]
    Path(result).write_text(json.dumps(_vllm_rates(model, out)))
