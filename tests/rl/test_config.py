"""Run configs: the shipped files validate; bad fields fail with one line; overrides; CLI errors."""
import json
from pathlib import Path

import pytest
import yaml

from rl.config import ConfigError, GRPORun, SFTRun, load_config
from rl.sft import cli as sft_cli
from rl.train import cli as train_cli, grpo_args

REPO = Path(__file__).resolve().parents[2]
GRPO_TINY = REPO / "configs/grpo/tiny-cpu.yaml"


@pytest.mark.parametrize("path", sorted((REPO / "configs/grpo").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_grpo_configs_validate(path):
    cfg = load_config(path, GRPORun)
    assert path.read_text().startswith("#") and "rl.train" in path.read_text().split("\nmodel:")[0]
    if "tomsynth" in path.name:  # the paper's settings (ToM-Synth appendix C.1)
        g, t = cfg.grpo, cfg.train
        assert (g.max_completion_length, cfg.data.max_prompt_tokens) == (768, 1280)
        assert (t.learning_rate, g.beta, g.temperature, g.num_generations) == (3e-7, 0.001, 1.0, 8)
        assert cfg.vllm.enabled and t.precision == "bf16"


@pytest.mark.parametrize("path", sorted((REPO / "configs/sft").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_sft_configs_validate(path):
    cfg = load_config(path, SFTRun)
    assert "rl.sft" in path.read_text().split("\nmodel:")[0]
    if path.name == "exploretom-8b.yaml":  # the ExploreToM paper's recipe
        t = cfg.train
        assert (t.learning_rate, t.warmup_steps, cfg.sft.loss) == (1e-6, 100, "completion_only")
        assert t.per_device_train_batch_size * 8 * t.gradient_accumulation_steps == 40


def test_paper_batch_is_prompts_times_generations():
    for name, gpus, prompts in (("llama3.1-8b", 8, 64), ("qwen2.5-7b", 8, 64), ("qwen2.5-32b", 32, 64),
                                ("qwen2.5-72b", 64, 128)):
        t = load_config(REPO / f"configs/grpo/{name}-tomsynth.yaml", GRPORun).train
        assert t.per_device_train_batch_size * gpus * t.gradient_accumulation_steps == prompts * 8


def test_accelerate_and_deepspeed_configs_exist_and_parse():
    names = {p.stem for p in (REPO / "configs/accelerate").glob("*.yaml")}
    assert {"cpu", "cpu-2proc", "single-gpu", "multi-gpu", "deepspeed-zero2", "deepspeed-zero3",
            "deepspeed-zero3-offload"} <= names
    for p in (REPO / "configs/accelerate").glob("deepspeed-*.yaml"):
        ds = yaml.safe_load(p.read_text())["deepspeed_config"]["deepspeed_config_file"]
        stage = json.loads((REPO / ds).read_text())["zero_optimization"]["stage"]
        assert stage == (2 if "zero2" in p.name else 3)


def test_overrides(tmp_path):
    cfg = load_config(GRPO_TINY, GRPORun, ["--max_steps", "5", "--grpo.beta", "0", "--model.lora",
                                           "{r: 4}", "--log.report_to=tensorboard"])
    assert cfg.train.max_steps == 5 and cfg.grpo.beta == 0 and cfg.model.lora.r == 4
    assert cfg.log.report_to == ["tensorboard"]
    with pytest.raises(ConfigError, match=r"--seed: sections data, train define\(s\) it"):
        load_config(GRPO_TINY, GRPORun, ["--seed", "1"])


@pytest.mark.parametrize("override, message", [
    (["--grpo.loss_typ", "dapo"], "grpo.loss_typ: unknown field; allowed: num_generations, "),
    (["--grpo.loss_type", "ppo"], "grpo.loss_type: Input should be 'grpo', 'dr_grpo', 'dapo'"),
    (["--train.learning_rate", "-1"], "train.learning_rate: Input should be greater than 0 (got -1)"),
    (["--train.precision", "int8"], "train.precision: Input should be 'auto', 'fp32', 'bf16' or 'fp16'"),
    (["--trl.num_genrations", "4"], "trl.num_genrations: not a field of trl.GRPOConfig (did you mean num_generations"),
    (["--trl.beta", "0.1"], "trl.beta: set it in its own section, not under trl"),
    (["--model.path", "null"], "model.path: Input should be a valid string"),
    (["--data.train", "[{path: x, answer_types: [yesno]}]"],
     "data.train.0.answer_types.0: Input should be 'choice', 'yes_no', 'short'"),
])
def test_invalid_fields_fail_with_one_line(override, message):
    with pytest.raises(ConfigError) as e:
        load_config(GRPO_TINY, GRPORun, override)
    text = str(e.value)
    assert "\n" not in text and text.startswith(f"{GRPO_TINY}: ") and message in text


def test_sft_only_sections_are_rejected_in_grpo_and_back(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(GRPO_TINY.read_text() + "sft:\n  max_length: 10\n")
    with pytest.raises(ConfigError, match="sft: unknown field; allowed: model, data, train, log, trl, grpo"):
        load_config(bad, GRPORun)
    broken = tmp_path / "broken.yaml"
    broken.write_text("model: [\n")
    with pytest.raises(ConfigError, match=r"broken.yaml:\d+: not valid YAML"):
        load_config(broken, SFTRun)


def test_shared_prompt_takes_a_bare_on_or_off(tmp_path):
    """PyYAML reads a bare off as false: `--grpo.shared_prompt off` and `shared_prompt: off` in a
    file must still mean TRL's step."""
    for value in ("off", "on", "auto"):
        assert load_config(GRPO_TINY, GRPORun, ["--grpo.shared_prompt", value]).grpo.shared_prompt == value
    data = yaml.safe_load(GRPO_TINY.read_text())
    data.setdefault("grpo", {})["shared_prompt"] = "VALUE"
    config = tmp_path / "off.yaml"
    config.write_text(yaml.safe_dump(data).replace("VALUE", "off"))
    assert "shared_prompt: off" in config.read_text()
    assert load_config(config, GRPORun).grpo.shared_prompt == "off"


def test_trl_arguments_follow_the_config():
    cfg = load_config(GRPO_TINY, GRPORun, ["--trl.max_tool_calling_iterations", "2"])
    args = grpo_args(cfg, has_eval=False)
    assert (args.beta, args.loss_type, args.scale_rewards, args.num_generations) == (0.001, "dapo", "group", 8)
    assert args.reward_weights == [1.0, 1.0] and args.use_cpu and not args.bf16
    assert args.max_tool_calling_iterations == 2 and args.use_vllm is False


def test_grpo_section_passes_through_only_trl_fields():
    import dataclasses

    from trl import GRPOConfig

    from rl.config import GRPOSettings

    trl_fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    ours = GRPOSettings.OURS
    assert ours <= set(GRPOSettings.model_fields) and not ours & trl_fields
    assert set(GRPOSettings.model_fields) - ours <= trl_fields


@pytest.mark.parametrize("path", sorted((REPO / "configs/grpo").glob("*.yaml")), ids=lambda p: p.name)
def test_grpo_args_match_the_snapshot_of_the_hand_written_builder(path, monkeypatch):
    """grpo_args.to_dict() for every shipped config equals what the builder that copied each grpo
    field by hand produced (tests/rl/grpo_args_snapshot.json, taken at f3b9ffc with TRL 1.16.0 and
    transformers 5.24.0, as planned for 8 processes on a machine without a GPU whose CPU trains in
    fp32: `precision: auto` picks bf16 on an AMX CPU, which the snapshot did not have)."""
    import torch

    from eval import cpu_precision

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(cpu_precision, "cpu_precision", lambda: ("fp32", "test"))
    snapshot = json.loads((REPO / "tests/rl/grpo_args_snapshot.json").read_text())[path.name]
    built = grpo_args(load_config(path, GRPORun), has_eval=True, world_size=8).to_dict()
    assert json.loads(json.dumps(built, default=str)) == snapshot


@pytest.mark.parametrize("loss, completion_only, assistant_only", [
    ("completion_only", True, False), ("assistant_only", False, True), ("full", False, False)])
def test_sft_loss_masking_follows_the_config(loss, completion_only, assistant_only):
    from rl.sft import sft_args

    cfg = load_config(REPO / "configs/sft/tiny-cpu.yaml", SFTRun, ["--sft.loss", loss])
    args = sft_args(cfg, has_eval=False)
    assert (args.completion_only_loss, args.assistant_only_loss) == (completion_only, assistant_only)


def test_command_line_errors_are_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    (out / "checkpoint-3").mkdir(parents=True)
    assert train_cli([str(GRPO_TINY), "--train.output_dir", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: train.output_dir: {out} already holds checkpoint-3; "
        "pass --resume to continue it or choose another output_dir")
    assert sft_cli([str(REPO / "configs/sft/tiny-cpu.yaml"), "--train.output_dir", str(tmp_path / "new"),
                    "--resume"]) == 2
    assert capsys.readouterr().err.strip() == (f"error: --resume: no whole checkpoint-* folder in {tmp_path / 'new'} "
                                                "(one with its trainer_state.json)")
    assert train_cli([str(GRPO_TINY), "--vllm.enabled", "true", "--train.output_dir", str(tmp_path / "v")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: vllm.enabled: vLLM is not installed") and "\n" not in err
    assert train_cli([str(GRPO_TINY), "--model.path", str(tmp_path / "no-model"),
                      "--train.output_dir", str(tmp_path / "m")]) == 2
    assert capsys.readouterr().err.strip().startswith("error: model.path: cannot load a tokenizer")


def test_timing_summary_splits_step_time(tmp_path, capsys):
    from rl.timing import main as timing_main, summarize

    log = [{"step": s, "step_time": 2.0, "num_tokens": 1000.0 * s, "timing/generation_s": 0.5,
            "timing/generated_tokens_per_s": 300.0, "completions/mean_length": 20} for s in range(1, 6)]
    s = summarize(log, skip=1)
    assert s["steps"] == 3 and s["step_s"] == 2.0 and s["tokens_per_s"] == 500.0
    assert (s["generation_s"], s["training_s"], s["generation_share"]) == (0.5, 1.5, 0.25)
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in log))
    assert timing_main([str(path)]) == 0
    assert "| 3 | 2.000 | 0.500 | 1.500 | 25% | 500 | 300 | 20.0 |" in capsys.readouterr().out
    path.write_text(json.dumps(log[0]) + "\n")
    assert timing_main([str(path)]) == 2
    assert capsys.readouterr().err.startswith("error: need at least 3 logged training steps")


# --------------------------------------------------------------------------------------------
# --check: TRL's real config for a planned process count; pinned paper choices; versions

def check_argv(config, model, toy_data, out, *extra):
    rows = [{"path": str(toy_data["location"])}, {"path": str(toy_data["knowledge"]), "split": "train"}]
    return [str(config), "--check", "--model.path", str(model), "--train.output_dir", str(out),
            "--data.train", json.dumps(rows), *extra]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory, toy_data):
    """A model folder to point model.path at (only its tokenizer is read under --check)."""
    from rl.tiny_model import build_tiny_model, read_corpus

    root = tmp_path_factory.mktemp("check")
    return build_tiny_model(list(read_corpus([toy_data["location"]])), root / "tiny", hidden_size=32,
                            num_layers=1, num_heads=2, num_kv_heads=1, intermediate_size=64)


def test_check_refuses_what_trl_refuses_and_writes_nothing(tokenizer_dir, toy_data, tmp_path, capsys):
    out = tmp_path / "never"
    argv = check_argv(GRPO_TINY, tokenizer_dir, toy_data, out, "--per_device_train_batch_size", "3",
                      "--log.report_to", "[wandb]")
    assert train_cli(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("error: train/grpo settings rejected by TRL: generation_batch_size (3) must be "
                   "divisible by num_generations (8).")
    assert not out.exists()


@pytest.mark.parametrize("config, extra, expected", [
    ("qwen2.5-72b", ["--num-processes", "64", "--num-machines", "8"], [
        "processes: 64 on 8 machine(s) (8 per machine)",
        "per optimizer step: 4 per device x 64 processes x 4 accumulation = 1024 completions = 128 prompts x 8",
        "per generation: 1024 completions (128 prompts) every 4 micro-steps, used 1 time(s): "
        "1 optimizer step(s) per generation",
        "steps per epoch: 128 rows / 128 prompts = 1; the run: 1 optimizer steps",
        "vLLM colocate: 8 engine(s) of tensor-parallel size 8, 128 sequences per engine per generation",
        "check passed"]),
    # the documented server-mode split: 4 training GPUs, accumulation 16 keeps 64 prompts per step
    ("qwen2.5-7b", ["--num-processes", "4", "--vllm.mode", "server", "--gradient_accumulation_steps", "16"], [
        "per optimizer step: 8 per device x 4 processes x 16 accumulation = 512 completions = 64 prompts x 8",
        "vLLM server: 512 sequences per generation, shared by the server's data-parallel engines",
        "check passed"]),
])
def test_check_prints_the_batch_arithmetic(config, extra, expected, tokenizer_dir, toy_data, tmp_path, capsys):
    out = tmp_path / "never"
    argv = check_argv(REPO / f"configs/grpo/{config}-tomsynth.yaml", tokenizer_dir, toy_data, out, *extra)
    assert train_cli(argv) == 0
    err = capsys.readouterr().err
    for line in expected:
        assert f"[rl.train] {line}\n" in err
    # this machine has neither the GPUs nor vLLM: warnings, not errors
    assert "warning: vllm.enabled but vLLM is not installed here" in err
    assert not out.exists()


@pytest.mark.parametrize("extra, message", [
    # six training GPUs cannot make 64 prompts (the old server-mode example trained on 48)
    (["--num-processes", "6"], "grpo.prompts_per_step: 8 per device x 6 processes x 8 accumulation = 384 "
     "completions = 48 prompts per step, not 64; no gradient_accumulation_steps gives it"),
    (["--num-processes", "16", "--num-machines", "2"],
     "grpo.prompts_per_step: 8 per device x 16 processes x 8 accumulation = 1024 completions = 128 prompts "
     "per step, not 64; use --gradient_accumulation_steps 4"),
    (["--num-processes", "12", "--num-machines", "2", "--vllm.tensor_parallel_size", "8",
      "--grpo.prompts_per_step", "null", "--gradient_accumulation_steps", "1"],
     "vllm.tensor_parallel_size 8 does not divide 12 processes (TRL refuses it)"),
    (["--num-processes", "16", "--num-machines", "4", "--vllm.tensor_parallel_size", "8",
      "--gradient_accumulation_steps", "4"],
     "vllm.tensor_parallel_size 8 does not divide the 4 processes per machine"),
])
def test_check_fails_on_a_batch_the_paper_did_not_use(extra, message, tokenizer_dir, toy_data, tmp_path, capsys):
    argv = check_argv(REPO / "configs/grpo/qwen2.5-7b-tomsynth.yaml", tokenizer_dir, toy_data, tmp_path / "o",
                      *extra)
    assert train_cli(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and message in err


def test_num_processes_only_with_check(capsys):
    assert train_cli([str(GRPO_TINY), "--num-processes", "4"]) == 2
    assert capsys.readouterr().err.strip() == ("error: --num-processes/--num-machines: only with --check "
                                               "(a real run takes them from accelerate launch)")


def test_paper_configs_pin_what_trl_would_decide_silently():
    for path in sorted((REPO / "configs/grpo").glob("*-tomsynth.yaml")):
        cfg = load_config(path, GRPORun)
        assert cfg.trl == {"vllm_importance_sampling_correction": True, "use_bias_correction_kl": False}
        assert cfg.grpo.prompts_per_step == (128 if "72b" in path.name else 64)
        header = path.read_text().split("\nmodel:")[0]
        assert "verl clamps k3 to [-10, 10]" in header and "mini-batches: assumed one optimizer step" in header
        gpus = 64 if "72b" in path.name else 32 if "32b" in path.name else 8
        args = grpo_args(cfg, has_eval=False, world_size=gpus)
        assert (args.use_bias_correction_kl, args.vllm_importance_sampling_correction) == (False, True)
        assert args.num_completions_to_print == 8 and args.log_completions
        assert args.per_device_train_batch_size * args.world_size * args.gradient_accumulation_steps == \
            cfg.grpo.prompts_per_step * 8


def test_versions_outside_the_supported_range_fail_with_one_line(monkeypatch, capsys):
    from rl import versions

    versions.check_versions()  # the environment the tests run in is supported
    real = versions.installed
    monkeypatch.setattr(versions, "installed", lambda name: "0.23.0" if name == "trl" else real(name))
    with pytest.raises(versions.VersionError, match=r"^trl 0.23.0 is installed but this project supports "
                                                     r"trl>=1.16,<1.17; reinstall with"):
        versions.check_versions()
    monkeypatch.setattr(versions, "installed", lambda name: "0.11.0" if name == "vllm" else real(name))
    assert train_cli([str(GRPO_TINY)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: vllm 0.11.0 is installed but this project supports vllm>=0.22,<0.32") and "\n" not in err


@pytest.mark.parametrize("module, run_cls", [("rl.sft", "SFTRun"), ("rl.train", "GRPORun")])
def test_help_lists_every_setting_with_the_help_declared_on_its_field(module, run_cls, capsys):
    # issue 33: each setting declared once, with its help, and --help generated from it
    import importlib

    import rl.config as config

    cls = getattr(config, run_cls)
    with pytest.raises(SystemExit):
        importlib.import_module(module).cli(["--help"])
    out = capsys.readouterr().out
    for section, info in cls.model_fields.items():
        fields = getattr(info.annotation, "model_fields", {})
        for name, field in fields.items():
            assert field.description, f"{section}.{name} has no help"
            assert f"--{section}.{name} " in out
    assert "--train.learning_rate (required): peak learning rate" in out
