"""Config validation (one line naming file, line and field), the backends built from it, and
CLI error handling (the kill-safe append log is eval.jsonl's: tests/eval/test_jsonl.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tomsynth.cli import main
from tomsynth.config import ConfigError, load_config

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
out_dir: {out}
generator:
  backend: anthropic
  model: claude-opus-4-5
  concurrency: 4
verifier:
  backend: openai
  model: gemini-3-pro-preview
  base_url: https://example.invalid/v1
prices:
  claude-opus-4-5: {{input: 5, output: 25}}
"""


def test_shipped_configs_load():
    for path in sorted((REPO / "configs" / "tomsynth").glob("*.yaml")):
        cfg = load_config(path)
        assert cfg.generator.model and cfg.verifier.model, path


def test_good_config_and_defaults(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(GOOD.format(out=tmp_path / "o"))
    cfg = load_config(p)
    assert cfg.entries_per_unit == {"main": 4, "contrast": 12}
    assert cfg.collections == ["main", "contrast"]
    assert cfg.cache_path() == str(tmp_path / "o" / "cache.sqlite")
    assert cfg.prices["claude-opus-4-5"].output == 25


@pytest.mark.parametrize("edit, expected", [
    (("concurrency: 4", "concurrency: 0"), ":5: generator.concurrency: Input should be greater than or equal to 1"),
    (("backend: openai", "backend: bedrock"), ":7: verifier.backend: unknown backend 'bedrock'; choose one of: anthropic, hf, openai, served, vllm"),
    (("  model: claude-opus-4-5\n", "  model: claude-opus-4-5\n  temprature: 1\n"), ":5: generator.temprature: unknown key; allowed: backend, model, max_new_tokens, temperature, top_p, seed, stop, top_k, or an option of the anthropic backend: anthropic_version, api_key_env, "),
    (("{input: 5, output: 25}", "{input: -5, output: 25}"), ":11: prices.claude-opus-4-5.input: Input should be greater than or equal to 0"),
    (("  concurrency: 4\n", "  concurrency: 4\n  backoff_base: 1\n"), ":6: generator.backoff_base: unknown key; allowed: backend, model, "),
    (("  concurrency: 4\n", "  concurrency: 4\n  max_attempts: many\n"), ":6: generator.max_attempts: Input should be a valid integer, unable to parse string as an integer (got 'many')"),
    (("verifier:", "verifier: [\n"), "not valid YAML"),
    (("concurrency: 4", "timeout_s: 0"), ":5: generator.timeout_s: Input should be greater than 0"),
    (("concurrency: 4", "temperature: -1"), ":5: generator.temperature: temperature must be >= 0, got -1.0"),
    (("concurrency: 4", "top_p: 1.5"), ":5: generator.top_p: top_p must be in (0, 1], got 1.5"),
])
def test_config_errors_are_one_line(tmp_path, edit, expected):
    p = tmp_path / "c.yaml"
    p.write_text(GOOD.format(out=tmp_path / "o").replace(*edit))
    with pytest.raises(ConfigError) as e:
        load_config(p)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(p))
    assert expected.replace("Value error, ", "") in msg.replace("Value error, ", ""), msg


def test_backends_come_from_load_backend_with_tomsynth_defaults(tmp_path, monkeypatch):
    """tomsynth waits 300 s and tries 8 times where eval's HTTP backends wait 120 s and try 6;
    a value set in the file wins over both."""
    import tomsynth.config
    from eval.backends import load_backend

    calls = []

    def spy(kind, model, **options):
        calls.append((kind, model))
        return load_backend(kind, model, **options)

    monkeypatch.setattr(tomsynth.config, "load_backend", spy)
    p = tmp_path / "c.yaml"
    p.write_text(GOOD.format(out=tmp_path / "o").replace("  concurrency: 4\n", "  concurrency: 4\n  max_attempts: 3\n")
                 + "use_cache: false\n")
    cfg = load_config(p)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    gen, ver, plain = cfg.backend("generator"), cfg.backend("verifier"), load_backend("openai", "m")
    assert calls == [("anthropic", "claude-opus-4-5"), ("openai", "gemini-3-pro-preview")]
    assert (plain.options.timeout_s, plain.options.max_attempts, plain.options.concurrency) == (120, 6, 16)
    assert (gen.options.timeout_s, gen.options.max_attempts, gen.options.concurrency) == (300, 3, 4)
    assert (ver.options.timeout_s, ver.options.max_attempts, ver.options.concurrency) == (300, 8, 16)
    assert ver.options.base_url == "https://example.invalid/v1" and ver.options.cache is None

    cfg.verifier.options["timeout_s"] = 7.5
    assert cfg.backend("verifier").options.timeout_s == 7.5


def test_sampling_settings_are_a_generation_config(tmp_path):
    from eval.backends import GenerationConfig

    cfg = load_config(REPO / "configs" / "tomsynth" / "local-vllm.yaml")
    assert cfg.generator.generation() == GenerationConfig(max_new_tokens=2048, temperature=1.0, top_p=1.0, seed=0)
    assert cfg.verifier.generation() == GenerationConfig(max_new_tokens=512, temperature=0.0, top_p=1.0, seed=0)
    p = tmp_path / "c.yaml"
    p.write_text(GOOD.format(out=tmp_path / "o"))
    assert load_config(p).generator.generation() == GenerationConfig(max_new_tokens=2048, temperature=1.0)


def test_missing_generator_and_cli_errors(tmp_path, capsys, monkeypatch):
    p = tmp_path / "c.yaml"
    p.write_text("out_dir: x\nverifier: {backend: openai, model: m}\n")
    assert main(["generate", "--config", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "generator: Field required" in err and err.count("\n") == 1

    p.write_text(GOOD.format(out=tmp_path / "o"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["generate", "--config", str(p), "--limit-units", "1"]) == 2
    err = capsys.readouterr().err
    assert "environment variable ANTHROPIC_API_KEY is not set" in err and err.count("\n") == 1
    assert main(["generate", "--config", str(p), "--shard", "3/2"]) == 2
    assert "--shard 3/2" in capsys.readouterr().err
    assert main(["generate", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert "no such file" in capsys.readouterr().err
