"""Real training on CPU: SFT warm start, then GRPO (plain, LoRA, resumed, two processes, DeepSpeed).

The tiny model is built from the toy rows, fine-tuned for 40 SFT steps (enough for it to write
the tags, so GRPO sees reward variance) and then trained with GRPO. The shipped tiny-cpu configs
are used, with paths and sizes overridden on the command line as a user would.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rl.sft import cli as sft_cli
from rl.tiny_model import build_tiny_model, read_corpus
from rl.train import cli as train_cli

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SFT_CFG = str(REPO / "configs/sft/tiny-cpu.yaml")
GRPO_CFG = str(REPO / "configs/grpo/tiny-cpu.yaml")
ACCELERATE = str(Path(sys.executable).parent / "accelerate")


def data_override(toy_data) -> list[str]:
    return ["--data.train", json.dumps([{"path": str(toy_data["location"])},
                                        {"path": str(toy_data["knowledge"]), "split": "train"}])]


def grpo_argv(model: Path, out: Path, toy_data, steps: int, *extra: str) -> list[str]:
    return [GRPO_CFG, "--model.path", str(model), "--train.output_dir", str(out), *data_override(toy_data),
            "--max_steps", str(steps), "--save_steps", "2", "--logging_steps", "1",
            "--max_completion_length", "40", *extra]


def weights(path: Path, name: str = "model.safetensors") -> dict[str, torch.Tensor]:
    return load_file(str(path / name))


def changed(a: dict, b: dict) -> int:
    """How many tensors differ between two state dicts. (DeepSpeed saves the tied output head
    as its own tensor, so only the names both hold are compared.)"""
    common = a.keys() & b.keys()
    assert len(common) >= len(a) - 1
    return sum(not torch.equal(a[k], b[k]) for k in common)


def logged(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def warm(tmp_path_factory, toy_data):
    """The tiny model and its SFT warm start (the SFT test)."""
    root = tmp_path_factory.mktemp("train")
    texts = list(read_corpus([toy_data["location"], toy_data["knowledge"]]))
    tiny = build_tiny_model(texts, root / "tiny", hidden_size=128, num_layers=2)
    sft = root / "sft"
    rc = sft_cli([SFT_CFG, "--model.path", str(tiny), "--train.output_dir", str(sft), *data_override(toy_data),
                  "--max_steps", "40", "--save_steps", "40", "--logging_steps", "10"])
    assert rc == 0
    return {"root": root, "tiny": tiny, "sft": sft}


def test_sft_changes_the_model_and_lowers_the_loss(warm):
    assert changed(weights(warm["tiny"]), weights(warm["sft"])) > 0
    losses = [r["loss"] for r in logged(warm["sft"]) if "loss" in r]
    assert len(losses) == 4 and losses[-1] < losses[0] / 4
    assert (warm["sft"] / "checkpoint-40").is_dir() and (warm["sft"] / "run_config.yaml").is_file()


def test_sft_stopped_at_a_step_holds_the_full_runs_weights_there(warm, toy_data, capsys):
    """train.stop_at_step ends the run at that step of the full schedule (the demo's SFT stops
    halfway): its weights and learning rate there are the uninterrupted run's, bit for bit, and
    resuming it is refused since the run is over."""
    full, half = warm["root"] / "sft-full", warm["root"] / "sft-half"
    argv = [SFT_CFG, "--model.path", str(warm["tiny"]), *data_override(toy_data),
            "--max_steps", "40", "--save_steps", "20", "--logging_steps", "10"]
    assert sft_cli([*argv, "--train.output_dir", str(full)]) == 0
    assert sft_cli([*argv, "--train.output_dir", str(half), "--train.stop_at_step", "20"]) == 0
    assert changed(weights(full / "checkpoint-20"), weights(half)) == 0
    assert changed(weights(full), weights(half)) > 0
    rate = {out: {r["step"]: r["learning_rate"] for r in logged(out) if "learning_rate" in r}
            for out in (full, half)}
    assert sorted(rate[half]) == [10, 20] and rate[half][20] == rate[full][20] > rate[full][40]
    assert {p.name for p in half.glob("checkpoint-*")} == {"checkpoint-20"}
    # the checkpoint records where the run ends (launch/demo.py finishes a killed stage by it)
    assert json.loads((half / "checkpoint-20" / "trainer_state.json").read_text())["max_steps"] == 20
    capsys.readouterr()
    assert sft_cli([*argv, "--train.output_dir", str(half), "--train.stop_at_step", "20", "--resume"]) == 2
    assert "already at train.stop_at_step 20" in capsys.readouterr().err


@pytest.fixture(scope="module")
def grpo_run(warm, toy_data):
    out = warm["root"] / "grpo"
    assert train_cli(grpo_argv(warm["sft"], out, toy_data, 4)) == 0
    return out


def test_grpo_trains_and_logs_reward_metrics(warm, grpo_run):
    assert changed(weights(warm["sft"]), weights(grpo_run)) > 0
    rows = [r for r in logged(grpo_run) if "reward" in r]
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    keys = set().union(*rows)
    assert {"rewards/format_reward/mean", "rewards/outcome_reward/mean", "kl", "timing/generation_s"} <= keys
    assert {"accuracy/source/toy-location", "accuracy/source/toy-knowledge"} <= keys
    assert {"accuracy/order/0", "accuracy/order/1"} <= keys
    # the warm start writes the format, so rewards vary and the total stays in [-1, 1]
    assert max(r["rewards/format_reward/mean"] for r in rows) > -1
    assert all(-1 <= r["reward"] <= 1 for r in rows)
    assert {p.name for p in grpo_run.glob("checkpoint-*")} == {"checkpoint-2", "checkpoint-4"}


def test_resume_continues_with_the_same_data_order(warm, grpo_run, toy_data, capsys):
    """Steps 3-4 resumed from checkpoint-2 give bit-identical weights to the uninterrupted run."""
    out = warm["root"] / "grpo-resumed"
    out.mkdir()
    shutil.copytree(grpo_run / "checkpoint-2", out / "checkpoint-2")
    assert train_cli(grpo_argv(warm["sft"], out, toy_data, 4)) == 2  # refuses without --resume
    assert "pass --resume" in capsys.readouterr().err
    assert train_cli(grpo_argv(warm["sft"], out, toy_data, 4, "--resume")) == 0
    assert [r["step"] for r in logged(out) if "reward" in r] == [3, 4]
    assert changed(weights(grpo_run), weights(out)) == 0


def test_grpo_with_lora_trains_only_the_adapter(warm, toy_data, monkeypatch):
    """LoRA by config; also logs to wandb (offline) and TensorBoard."""
    out = warm["root"] / "grpo-lora"
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(out))
    lora = json.dumps({"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]})
    assert train_cli(grpo_argv(warm["sft"], out, toy_data, 2, "--model.lora", lora,
                               "--train.learning_rate", "1e-2", "--log.report_to", "[wandb, tensorboard]")) == 0
    assert list(out.glob("wandb/offline-run-*/run-*.wandb"))
    assert list(out.glob("runs/*/events.out.tfevents.*"))
    adapter = weights(out, "adapter_model.safetensors")
    lora_b = [v for k, v in adapter.items() if "lora_B" in k]
    assert len(lora_b) == 2 * 2 and any(v.abs().sum() > 0 for v in lora_b)  # B starts at zero
    assert json.loads((out / "adapter_config.json").read_text())["r"] == 4
    assert not (out / "model.safetensors").exists()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(accelerate_args: list[str], argv: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "WANDB_MODE": "disabled"}
    cmd = [ACCELERATE, "launch", *accelerate_args, "--main_process_port", str(free_port()),
           "-m", "rl.train", *argv]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_grpo_under_accelerate_with_two_cpu_processes(warm, toy_data):
    out = warm["root"] / "grpo-ddp"
    proc = launch(["--config_file", "configs/accelerate/cpu-2proc.yaml"],
                  grpo_argv(warm["sft"], out, toy_data, 3, "--per_device_train_batch_size", "8"))
    assert "2 process(es), distributed type MULTI_CPU" in proc.stderr
    assert changed(weights(warm["sft"]), weights(out)) > 0
    assert "accuracy/source/toy-location" in set().union(*logged(out))


def test_grpo_under_deepspeed_zero2_on_cpu(warm, toy_data):
    """Two processes, ZeRO-2 (the first run on a machine JIT-compiles DeepSpeed's CPU comm op)."""
    out = warm["root"] / "grpo-zero2"
    proc = launch(["--config_file", "configs/accelerate/deepspeed-zero2.yaml", "--num_processes", "2"],
                  grpo_argv(warm["sft"], out, toy_data, 3, "--per_device_train_batch_size", "8"))
    assert "2 process(es), distributed type DEEPSPEED" in proc.stderr
    assert changed(weights(warm["sft"]), weights(out)) > 0
    assert "rewards/outcome_reward/mean" in set().union(*logged(out))
