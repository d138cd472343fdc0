"""Full fine-tuning in bf16 without DeepSpeed keeps no fp32 master weights: refused at start.
fp32 parameters with `train.precision: bf16` train under bf16 autocast (fp32 masters) instead.

Why it matters (issue 18): at the paper's lr 3e-7, ten AdamW steps on bf16 tensors change about
0.5% of the weights, because most updates are below bf16's resolution; the first test shows the
rounding itself on one tensor.
"""
import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from rl.sft import cli as sft_cli
from rl.tiny_model import build_tiny_model, read_corpus
from rl.train import cli as train_cli

REPO = Path(__file__).resolve().parents[2]


def test_bf16_weights_lose_small_adamw_updates():
    """The failure the guard prevents: the same AdamW steps on a bf16 copy and on an fp32 copy."""
    torch.manual_seed(0)
    w32 = torch.nn.Parameter(torch.randn(4096))
    w16 = torch.nn.Parameter(w32.detach().to(torch.bfloat16))
    start32, start16 = w32.detach().clone(), w16.detach().clone()
    for w in (w32, w16):
        opt = torch.optim.AdamW([w], lr=3e-7, weight_decay=0.0)
        for _ in range(10):
            w.grad = torch.ones_like(w)
            opt.step()
    assert (w32 != start32).float().mean() > 0.99
    assert (w16 != start16).float().mean() < 0.05


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, toy_data):
    root = tmp_path_factory.mktemp("precision")
    texts = list(read_corpus([toy_data["location"]]))
    return build_tiny_model(texts, root / "tiny", hidden_size=64, num_layers=1, num_heads=2, num_kv_heads=1,
                            intermediate_size=128)


def argv(config: str, tiny: Path, toy_data, out: Path, *extra: str) -> list[str]:
    return [str(REPO / config), "--model.path", str(tiny), "--train.output_dir", str(out),
            "--data.train", json.dumps([{"path": str(toy_data["location"])}]),
            "--max_steps", "2", "--save_steps", "10", "--logging_steps", "1", *extra]


@pytest.mark.parametrize("cli, config, extra", [
    (sft_cli, "configs/sft/tiny-cpu.yaml", []),
    (train_cli, "configs/grpo/tiny-cpu.yaml", ["--max_completion_length", "8"]),
])
def test_full_fine_tuning_of_bf16_parameters_without_deepspeed_is_refused(cli, config, extra, tiny, toy_data,
                                                                          tmp_path, capsys):
    out = tmp_path / "run"
    assert cli(argv(config, tiny, toy_data, out, "--model.dtype", "bfloat16", "--train.precision", "bf16",
                    *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("error: model.dtype: the trained parameters are bfloat16 and no DeepSpeed config keeps fp32 "
                   "master weights, so small updates round away; set model.dtype: float32 (train.precision bf16 "
                   "still computes in bf16), launch with a DeepSpeed config, or train a LoRA adapter")
    assert not list(out.glob("checkpoint-*")) and not (out / "model.safetensors").exists()


def test_bf16_autocast_over_fp32_parameters_trains(tiny, toy_data, tmp_path):
    """The remedy the message names: fp32 parameters, bf16 compute. Updates land in fp32."""
    out = tmp_path / "sft"
    assert sft_cli(argv("configs/sft/tiny-cpu.yaml", tiny, toy_data, out, "--model.dtype", "float32",
                        "--train.precision", "bf16", "--train.learning_rate", "1e-5")) == 0
    before, after = load_file(str(tiny / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert all(t.dtype == torch.float32 for t in after.values())
    changed = sum((before[k] != after[k]).sum().item() for k in before)
    assert changed > 0.9 * sum(t.numel() for t in before.values())


def test_lora_over_bf16_parameters_is_allowed(tiny, toy_data, tmp_path):
    """PEFT keeps the adapter in fp32 over a bf16 base: nothing trained is half precision."""
    out = tmp_path / "lora"
    lora = json.dumps({"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]})
    assert sft_cli(argv("configs/sft/tiny-cpu.yaml", tiny, toy_data, out, "--model.dtype", "bfloat16",
                        "--train.precision", "bf16", "--model.lora", lora, "--max_steps", "1")) == 0
    assert (out / "adapter_model.safetensors").is_file()
