"""A generator and verifier named like any model of `python -m eval run`: here a local model
through the hf backend (a tiny untrained one, so its replies are unusable). Its options are the
hf backend's, checked when the config loads; it counts no HTTP usage; what it writes is logged
and nothing unusable becomes an item."""
from __future__ import annotations

import json

import pytest

from tomsynth.cli import main
from tomsynth.config import ConfigError, load_config


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    from rl.tiny_model import build_tiny_model

    texts = ["Anne put the apple in the basket and left the kitchen.",
             "Where will Anne look for the apple? In the basket."] * 20
    return build_tiny_model(texts, tmp_path_factory.mktemp("tiny") / "m", vocab_size=300,
                            hidden_size=32, num_layers=1, num_heads=2, num_kv_heads=1,
                            max_position_embeddings=8192)  # the prompts are long in its tokens


def config(tmp_path, model, extra: str = "") -> str:
    path = tmp_path / "hf.yaml"
    path.write_text(f"out_dir: {tmp_path / 'out'}\ncollections: [main]\nentries_per_unit: {{main: 2}}\n"
                    f"generator:\n  backend: hf\n  model: {model}\n  batch_size: 2\n"
                    f"  max_new_tokens: 16\n{extra}"
                    f"verifier:\n  backend: hf\n  model: {model}\n  max_new_tokens: 8\n"
                    "  temperature: 0.0\n")
    return str(path)


def test_a_local_model_generates_and_nothing_unusable_becomes_an_item(tmp_path, tiny_model, capsys):
    cfg = config(tmp_path, tiny_model)
    assert main(["generate", "--config", cfg, "--limit-units", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "2 requests, 0 already done, 2 generated now, 0 failed" in out
    assert "tokens:" not in out  # a local model counts no HTTP usage
    [log] = (tmp_path / "out" / "raw").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 2 and all(r["ok"] and r["backend"] == "hf" for r in lines)
    assert main(["filter", "--config", cfg, "--quiet"]) == 0
    assert "stage 1 kept 0" in capsys.readouterr().out


def test_an_option_the_hf_backend_does_not_take_names_its_line(tmp_path, tiny_model):
    with pytest.raises(ConfigError, match=r"hf.yaml:9: generator.concurrency: unknown key; allowed: "
                                          r"backend, model, .* or an option of the hf backend: "
                                          r"batch_size, "):
        load_config(config(tmp_path, tiny_model, "  concurrency: 4\n"))
