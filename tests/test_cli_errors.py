"""Every user-facing command fails cleanly on bad input (issue 7).

Each case runs one command as a user would (`python -m ...` from the repository root) with one
bad input: a missing file, a corrupt one (binary garbage, JSON or YAML cut short, valid JSON or
YAML of the wrong shape) or a config with one invalid field. The command must exit non-zero and
print exactly one line, `error: ...`, on stderr, naming the file (or the field), and no traceback.
Argument values that argparse itself rejects keep argparse's form (the usage, then one
`PROG: error: ...` line).
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}

# Invalid UTF-8 from the first byte, with NULs and newlines inside (so line readers see lines).
BINARY = (bytes([0xFF, 0xFE, 0x00, 0x81, 0x9F, 0x0A]) * 40) + bytes(range(256))
TRUNCATED = {
    "jsonl": '{"id": "s1", "actions": [{"type": "enter_room", "person": "Anne", "ro',
    "json": '{"schema_version": 1, "label": "base", "benchmarks": {"tomi": {"sco',
    "yaml": 'model:\n  path: runs/tiny-model\ndata:\n  train: [{path: "runs/data/explo',
}
WRONG_SCHEMA = {
    "jsonl": '{"colour": "blue", "size": 3}\n{"colour": "red", "size": 5}\n',
    "json": '{"colour": "blue", "size": 3}\n',
    "yaml": "colour: blue\nsize: [3, 4]\n",
}
CORRUPT = ("binary", "truncated", "wrong-schema")
FILE_CASES = ("missing", "directory", *CORRUPT)

# Talks to nothing: invalid input must be reported before any request is made.
OFFLINE_LLM = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "-O", "api_key_env=''"]


def write_bad(path: Path, case: str, kind: str) -> Path:
    """`path` holding the bad content of `case` for a file of `kind` (jsonl, json, yaml)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if case == "binary":
        path.write_bytes(BINARY)
    elif case == "truncated":
        path.write_text(TRUNCATED[kind], encoding="utf-8")
    elif case == "wrong-schema":
        path.write_text(WRONG_SCHEMA[kind], encoding="utf-8")
    elif case == "directory":  # a folder where a file is expected
        path.mkdir()
    elif case != "missing":
        raise ValueError(case)
    return path


def config_with(src: str, path: Path, **changes) -> Path:
    """A copy of the repository config `src` with dotted keys set (`a__b=1` sets a.b)."""
    data = yaml.safe_load((ROOT / src).read_text(encoding="utf-8"))
    for key, value in changes.items():
        *parents, last = key.split("__")
        node = data
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


class Case:
    """One command and one bad input. `make(tmp)` writes the input and returns (argv after the
    interpreter, texts the error line must contain)."""

    def __init__(self, id: str, make: Callable[[Path], tuple[list[str], list[str]]],
                 usage_error: bool = False) -> None:
        self.id, self.make, self.usage_error = id, make, usage_error

    def param(self):
        return pytest.param(self, id=self.id)


def file_cases(name: str, kind: str, argv: Callable[[Path, Path], list[str]],
               filename: str | None = None, cases=FILE_CASES) -> list[Case]:
    """One case per bad-file kind for a command taking the file `argv(file, tmp)`."""
    filename = filename or f"input.{kind}"

    def maker(case: str):
        def make(tmp: Path):
            bad = write_bad(tmp / "in" / filename, case, kind)
            return argv(bad, tmp), [str(bad)]
        return make

    return [Case(f"{name}-{case}", maker(case)) for case in cases]


def invalid_field(name: str, src: str, field: str, value, argv: Callable[[Path, Path], list[str]],
                  **more) -> Case:
    def make(tmp: Path):
        cfg = config_with(src, tmp / "in" / "config.yaml", **{field: value}, **more)
        return argv(cfg, tmp), [str(cfg), field.split("__")[-1]]
    return Case(f"{name}-invalid-field", make)


def bad_args(name: str, argv: list[str], usage_error: bool = False, expect: tuple[str, ...] = ()) -> Case:
    return Case(name, lambda tmp: (argv, list(expect)), usage_error=usage_error)


def _empty(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    return path


# ------------------------------------------------------------------------------ the commands
ET = ["-m", "exploretom"]
SAMPLE = [*ET, "sample", "--action-set", "A1", "--people", "2", "--moves", "2", "--rooms", "1",
          "--max-actions", "8", "-n", "2"]

EXPLORETOM = [
    *file_cases("exploretom-label", "jsonl", lambda f, t: [*ET, "label", str(f), "-o", str(t / "o.jsonl")]),
    *file_cases("exploretom-stats", "jsonl", lambda f, t: [*ET, "stats", str(f)]),
    *file_cases("exploretom-sample-contexts", "jsonl",
                lambda f, t: [*SAMPLE, "--contexts", str(f), "-o", str(t / "o.jsonl")]),
    *file_cases("exploretom-search", "yaml",
                lambda f, t: [*ET, "search", "--config", str(f), "-o", str(t / "o.jsonl"), "-q"]),
    invalid_field("exploretom-search", "configs/exploretom/paper-grid.yaml", "stories_per_setting", 0,
                  lambda f, t: [*ET, "search", "--config", str(f), "-o", str(t / "o.jsonl"), "-q"]),
    *file_cases("exploretom-export", "jsonl", lambda f, t: [*ET, "export", str(f), "-o", str(t / "ds")]),
    *file_cases("exploretom-report", "jsonl", lambda f, t: [*ET, "report", str(f), "-o", str(t / "rep")]),
    *file_cases("exploretom-infill", "jsonl",
                lambda f, t: [*ET, "infill", str(f), "-o", str(t / "o.jsonl"), "-q", *OFFLINE_LLM]),
    # contexts reads no input file but its pools file (kept beside the output) and a local model
    *file_cases("exploretom-contexts-pools", "json",
                lambda f, t: [*ET, "contexts", "-n", "1", "--people", "2", "--pool", "llm", "-q",
                              "-o", str(f)[:-len(".pools.json")], *OFFLINE_LLM],
                filename="contexts.jsonl.pools.json", cases=CORRUPT),
    *file_cases("exploretom-contexts-model", "dir",
                lambda f, t: [*ET, "contexts", "-n", "1", "--people", "2", "-o", str(t / "c.jsonl"),
                              "--backend", "hf", "--model", str(f)],
                filename="model", cases=("missing",)),
    bad_args("exploretom-bench-search-settings", [*ET, "bench-search", "--settings", "0", "-q"],
             usage_error=True, expect=("--settings",)),
    bad_args("exploretom-bench-search-reasoner", [*ET, "bench-search", "--reasoner", "nobody", "-q"],
          expect=("nobody",)),
    invalid_field("exploretom-search-unknown-search-key", "configs/exploretom/paper-grid.yaml",
                  "search", {"budgett": 3},
                  lambda f, t: [*ET, "search", "--config", str(f), "-o", str(t / "o.jsonl"), "-q"]),
    Case("exploretom-search-empty-config", lambda t: (
        [*ET, "search", "--config", str(_empty(t / "empty.yaml")), "-o", str(t / "o.jsonl")],
        [str(t / "empty.yaml"), "empty"])),
    bad_args("exploretom-bench-search-target", [*ET, "bench-search", "--target", "noisy:2,x", "-q"],
             expect=("noisy:2,x",)),
    bad_args("exploretom-bench-search-search-key",
             [*ET, "bench-search", "--search", "budgett=3", "-q"], expect=("budgett", "allowed")),
]

TS = ["-m", "tomsynth"]
TS_CONFIG = "configs/tomsynth/local-vllm.yaml"
TOMSYNTH = [
    *file_cases("tomsynth-generate", "yaml", lambda f, t: [*TS, "generate", "-c", str(f), "--quiet"]),
    invalid_field("tomsynth-generate", TS_CONFIG, "generator__concurrency", 0,
                  lambda f, t: [*TS, "generate", "-c", str(f), "--out-dir", str(t / "run")]),
    # the other commands read the config through the same loader: one case each
    *file_cases("tomsynth-plan", "yaml", lambda f, t: [*TS, "plan", "-c", str(f), "-o", str(t / "p")],
                cases=("binary",)),
    *file_cases("tomsynth-filter", "yaml", lambda f, t: [*TS, "filter", "-c", str(f)], cases=("missing",)),
    *file_cases("tomsynth-build", "yaml", lambda f, t: [*TS, "build", "-c", str(f)], cases=("truncated",)),
    *file_cases("tomsynth-stats", "yaml", lambda f, t: [*TS, "stats", "-c", str(f)], cases=("wrong-schema",)),
    # a run folder with nothing built yet: its datasets are the missing input
    Case("tomsynth-stats-nothing-built", lambda t: (
        [*TS, "stats", "-c", str(config_with(TS_CONFIG, t / "in" / "config.yaml", out_dir=str(t / "run"))),
         "--no-plots"], [str(t / "run")])),
]


def rl_cases(module: str, src: str, field: str, value) -> list[Case]:
    argv = lambda f, t: ["-m", module, str(f)]  # noqa: E731
    return [*file_cases(module, "yaml", argv),
            invalid_field(module, src, field, value, argv, train__output_dir="/nonexistent/out")]


def tokenizer_dir(path: Path) -> Path:
    """The smallest model folder AutoTokenizer loads (a config.json says it is a model's):
    enough for the training commands to reach the data."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    path.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordLevel({"<unk>": 0, "<pad>": 1}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>", "pad_token": "<pad>"}))
    (path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    return path


RL = [
    *rl_cases("rl.train", "configs/grpo/tiny-cpu.yaml", "grpo__num_generations", 1),
    *rl_cases("rl.sft", "configs/sft/tiny-cpu.yaml", "train__learning_rate", -1),
    # valid configs naming inputs that are not there (these load TRL: ~6 s each)
    Case("rl.sft-missing-model", lambda t: (
        ["-m", "rl.sft", str(config_with("configs/sft/tiny-cpu.yaml", t / "in" / "config.yaml",
                                         model__path=str(t / "no-model"),
                                         train__output_dir=str(t / "out")))],
        [str(t / "no-model")])),
    Case("rl.train-missing-data", lambda t: (
        ["-m", "rl.train", str(config_with("configs/grpo/tiny-cpu.yaml", t / "in" / "config.yaml",
                                           model__path=str(tokenizer_dir(t / "tok")),
                                           data__train=[{"path": str(t / "no-data.jsonl")}],
                                           train__output_dir=str(t / "out")))],
        [str(t / "no-data.jsonl")])),
    *file_cases("rl.tiny_model", "jsonl",
                lambda f, t: ["-m", "rl.tiny_model", "--corpus", str(f), "-o", str(t / "model")]),
    *file_cases("rl.timing", "jsonl", lambda f, t: ["-m", "rl.timing", str(f)]),
]

EV = ["-m", "eval"]
EVAL = [
    *file_cases("eval-run-suite", "yaml", lambda f, t: [*EV, "run", str(f), "--model", "m", "--backend", "openai"]),
    invalid_field("eval-run-suite", "configs/eval/tom.yaml", "generation__temperature", -1,
                  lambda f, t: [*EV, "run", str(f), "--model", "m", "--backend", "openai"]),
    *file_cases("eval-run-data", "jsonl",
                lambda f, t: [*EV, "run", "exploretom", "--data", f"exploretom={f}", "--model", "m",
                              "--backend", "openai", "-o", str(t / "run")]),
    *file_cases("eval-compare", "json", lambda f, t: [*EV, "compare", str(f)]),
]


def demo_samples(case: str):
    def make(tmp: Path):
        out = tmp / "demo"
        if case == "missing":
            return ["launch/demo_report.py", "--out", str(out)], [str(out)]
        for ckpt in ("base", "sft", "grpo"):
            write_bad(out / "eval" / ckpt / "samples" / "exploretom.jsonl", case, "jsonl")
        return ["launch/demo_report.py", "--out", str(out)], [str(out / "eval" / "base")]
    return make


LAUNCH = [
    Case("demo-bench-missing", lambda t: (
        ["launch/demo.py", "--out", str(t / "demo"), "--bench", f"tomi={t / 'no-tomi'}"], [str(t / "no-tomi")])),
    Case("demo-out-is-a-file", lambda t: (
        ["launch/demo.py", "--out", str(write_bad(t / "demo", "binary", "")), "--stages", "report"],
        [str(t / "demo")])),
    *[Case(f"demo-report-{c}", demo_samples(c)) for c in FILE_CASES],
]

BENCHMARKS = [
    bad_args("exploretom.bench-not-a-number", ["-m", "exploretom.bench", "-n", "many"], usage_error=True),
    bad_args("exploretom.search_floor-not-a-number", ["-m", "exploretom.search_floor", "--orders", "x"],
          usage_error=True),
    bad_args("tomsynth.bench_throughput-bad-choice", ["-m", "tomsynth.bench_throughput", "--kind", "smtp"],
          usage_error=True),
    bad_args("exploretom.bench-zero", ["-m", "exploretom.bench", "-n", "0", "--sets", "A1"],
             usage_error=True),
    bad_args("exploretom.search_floor-reasoner", ["-m", "exploretom.search_floor", "--reasoner", "nobody"],
             usage_error=True),
    bad_args("tomsynth.bench_throughput-zero", ["-m", "tomsynth.bench_throughput", "--requests", "0"],
             usage_error=True),
]

def existing(path: Path, folder: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir() if folder else path.write_text("{}\n", encoding="utf-8")
    return path


# Messages in the user's terms (issue 17): an output in the way, a model folder that is not
# there (said as such, not as the hub's "Repo id must use alphanumeric chars"), a data file
# that is not UTF-8 (named, with its line).
USER_TERMS = [
    Case("exploretom-label-output-is-a-folder", lambda t: (
        [*ET, "label", str(write_bad(t / "in" / "s.jsonl", "wrong-schema", "jsonl")),
         "-o", str(existing(t / "out", folder=True))],
        [str(t / "out"), "is a folder, expected a file"])),
    Case("tomsynth-plan-output-exists", lambda t: (
        [*TS, "plan", "-c", TS_CONFIG, "-o", str(existing(t / "plan.jsonl"))],
        [str(t / "plan.jsonl"), "already exists"])),
    Case("eval-run-missing-local-model", lambda t: (
        [*EV, "run", "tomi", "--data", "tomi=../shared/benchmarks/tomi", "--backend", "hf",
         "--model", "./no-such-model", "-o", str(t / "run")],
        ["./no-such-model", "no such folder", "local model path"])),
    Case("eval-run-missing-relative-model", lambda t: (
        [*EV, "run", "tomi", "--data", "tomi=../shared/benchmarks/tomi", "--backend", "hf",
         "--model", "runs/sft/no-such-model", "-o", str(t / "run")],
        ["runs/sft/no-such-model", "no such folder"])),
    Case("rl.sft-relative-model-path", lambda t: (
        ["-m", "rl.sft", str(config_with("configs/sft/tiny-cpu.yaml", t / "in" / "config.yaml",
                                         model__path="runs/sft/no-such-model",
                                         train__output_dir=str(t / "out")))],
        ["runs/sft/no-such-model", "no such folder"])),
    Case("rl.train-data-not-utf8", lambda t: (
        ["-m", "rl.train", str(config_with("configs/grpo/tiny-cpu.yaml", t / "in" / "config.yaml",
                                           model__path=str(tokenizer_dir(t / "tok")),
                                           data__train=[{"path": str(write_bad(t / "d.jsonl", "binary", ""))}],
                                           train__output_dir=str(t / "out")))],
        [f"{t / 'd.jsonl'}: line 1", "not UTF-8"])),
]


# Issue 44: an output that is an input, a resume with other settings, nonsense sizes and
# conflicting flags, a target or model that is not there, a server that does not answer. Each
# is refused in one line before any work.
ONE_STORY = '{"id": "s1", "actions": [{"type": "enter_room", "person": "Anne", "room": "kitchen"}]}\n'
SEARCH_ARGS = lambda cfg, out: [*ET, "search", "--config", str(cfg), "-o", str(out), "-q"]  # noqa: E731
TINY_GRID = {"action_sets": ["A1"], "asymmetric": [False], "people": [2], "moves": [2],
             "rooms": [1], "max_actions": 7}


def run_yaml(path: Path, **fields) -> Path:
    """A small search run config with `fields` set (a tiny grid unless given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"stories_per_setting": 1, "grid": TINY_GRID, **fields}),
                    encoding="utf-8")
    return path


def text_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def no_config_model(path: Path) -> Path:
    """A folder with a tokenizer file but no config.json: not a model."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    return path


def model_folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text("{}", encoding="utf-8")
    return path


def written_by_another_run(out: Path, command: str, fingerprint: dict) -> Path:
    """An output of one record, made (its fingerprint says) with other settings."""
    text_file(out, '{"id": "kept"}\n')
    text_file(Path(f"{out}.run.json"), json.dumps({"command": command, "fingerprint": fingerprint}))
    return out


def unfinished_run(path: Path) -> Path:
    return text_file(path / "results.json", json.dumps({
        "schema_version": 1, "label": "m", "model": "m", "finished_at": None,
        "benchmarks": {"tomi": {"score": 0.5, "metrics": {"accuracy": 0.5}}}}))


HAS_VLLM = importlib.util.find_spec("vllm") is not None
SIMPLETOM_SHARED = any((ROOT.parent / "shared" / "benchmarks" / "simpletom").glob("**/*.jsonl"))

ISSUE_44 = [
    Case("exploretom-label-output-is-its-input", lambda t: (
        [*ET, "label", str(f := text_file(t / "s.jsonl", ONE_STORY)), "-o", str(f)],
        [str(t / "s.jsonl"), "is also an input"])),
    Case("exploretom-infill-output-is-its-input", lambda t: (
        [*ET, "infill", str(f := text_file(t / "s.jsonl", ONE_STORY)), "-o", str(f), "-q",
         *OFFLINE_LLM], [str(t / "s.jsonl"), "is also an input"])),
    Case("exploretom-sample-output-is-its-contexts", lambda t: (
        [*SAMPLE, "--contexts", str(f := text_file(t / "c.jsonl", "{}\n")), "-o", str(f)],
        [str(t / "c.jsonl"), "is also an input"])),
    Case("exploretom-search-output-is-its-config", lambda t: (
        SEARCH_ARGS(c := run_yaml(t / "run.yaml"), c), [str(t / "run.yaml"), "is also an input"])),
    Case("exploretom-export-output-holds-its-input", lambda t: (
        [*ET, "export", str(text_file(t / "d" / "s.jsonl", ONE_STORY)), "-o", str(t / "d"),
         "--overwrite"], [str(t / "d"), "holds the input"])),
    Case("exploretom-search-resume-with-another-config", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml"), written_by_another_run(
            t / "o.jsonl", "search", {"target": {"kind": "noisy"}})),
        [str(t / "o.jsonl"), "other settings", "target.kind", "--fresh"])),
    Case("exploretom-sample-resume-with-other-arguments", lambda t: (
        [*SAMPLE, "-o", str(written_by_another_run(t / "o.jsonl", "sample", {"moves": 3}))],
        [str(t / "o.jsonl"), "moves: 3 there, 2 now", "--fresh"])),
    Case("exploretom-search-negative-people", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml", grid={**TINY_GRID, "people": [-2]}), t / "o.jsonl"),
        [str(t / "run.yaml"), "grid.people"])),
    Case("exploretom-search-grid-of-no-setting", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml", grid={**TINY_GRID, "max_actions": 1}), t / "o.jsonl"),
        [str(t / "run.yaml"), "grid: no setting", "max_actions"])),
    bad_args("exploretom-sample-negative-n", [*SAMPLE[:-2], "-n", "-5", "-o", "/tmp/never.jsonl"],
             usage_error=True),
    Case("exploretom-search-output-under-a-file", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml"), text_file(t / "f", "x") / "x.jsonl"),
        [f"{t / 'f'} is a file, not a folder"])),
    Case("exploretom-search-missing-hf-model", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml", target={"kind": "hf", "model": "/nonexistent/model"}),
                    t / "o.jsonl"), [str(t / "run.yaml"), "/nonexistent/model", "no such folder"])),
    Case("exploretom-search-model-without-config", lambda t: (
        SEARCH_ARGS(run_yaml(t / "run.yaml", target={"kind": "hf", "model": str(
            no_config_model(t / "m"))}), t / "o.jsonl"), [str(t / "m"), "config.json"])),
    bad_args("exploretom-bench-search-missing-hf-target",
             [*ET, "bench-search", "--target", "hf:/missing", "-q"],
             expect=("/missing", "no such folder")),
    Case("exploretom.bench_target-missing-hf-target", lambda t: (
        ["-m", "exploretom.bench_target", "--target", "hf:/missing", "-n", "5"],
        ["/missing", "no such folder"])),
    Case("exploretom-contexts-unreachable-server", lambda t: (
        [*ET, "contexts", "-n", "1", "--people", "2", "-q", "-o", str(t / "c.jsonl"), *OFFLINE_LLM],
        ["http://127.0.0.1:9/v1", "cannot reach", "connection refused"])),
    Case("exploretom-infill-unreachable-server", lambda t: (
        [*ET, "infill", str(text_file(t / "s.jsonl", ONE_STORY)), "-o", str(t / "o.jsonl"), "-q",
         *OFFLINE_LLM], ["http://127.0.0.1:9/v1", "cannot reach"])),
    Case("exploretom-export-unlabelled-stories", lambda t: (
        [*ET, "export", str(text_file(t / "s.jsonl", ONE_STORY)), "-o", str(t / "ds")],
        [str(t / "s.jsonl"), "label the stories first"])),
    bad_args("eval-run-limit-and-sample",
             [*EV, "run", "tomi", "--model", "m", "--backend", "openai", "--limit", "1",
              "--sample", "2"],
             expect=("--limit", "--sample")),
    Case("eval-compare-unfinished-run", lambda t: (
        [*EV, "compare", str(unfinished_run(t / "a")), str(unfinished_run(t / "b"))],
        [str(t / "a" / "results.json"), "did not finish"])),
    Case("eval-run-model-without-config", lambda t: (
        [*EV, "run", "tomi", "--backend", "hf", "--model", str(no_config_model(t / "m")),
         "-o", str(t / "run")], [str(t / "m"), "config.json"])),
    Case("rl.sft-model-without-config", lambda t: (
        ["-m", "rl.sft", str(config_with("configs/sft/tiny-cpu.yaml", t / "in" / "config.yaml",
                                         model__path=str(no_config_model(t / "m")),
                                         train__output_dir=str(t / "out")))],
        [str(t / "m"), "config.json"])),
    Case("rl.train-check-model-without-config", lambda t: (
        ["-m", "rl.train", "configs/grpo/tiny-cpu.yaml", "--check", "--model.path",
         str(no_config_model(t / "m")), "--train.output_dir", str(t / "out")],
        [str(t / "m"), "config.json"])),
    *([] if HAS_VLLM else [
        bad_args("eval.backends.vllm_server-help-without-vllm",
                 ["-m", "eval.backends.vllm_server", "--help"], expect=(".venv-vllm",)),
        Case("exploretom-bench-search-vllm-target-without-vllm", lambda t: (
            [*ET, "bench-search", "--target", f"vllm:{model_folder(t / 'm')}", "-q"],
            ["vLLM is not installed", ".venv-vllm"]))]),
    *([] if SIMPLETOM_SHARED else [
        bad_args("eval-run-tom-without-simpletom",
                 [*EV, "run", "tom", "--model", "m", "--backend", "openai"],
                 expect=("simpletom", "--skip-missing"))]),
]

CASES = [*EXPLORETOM, *TOMSYNTH, *RL, *EVAL, *LAUNCH, *BENCHMARKS, *USER_TERMS, *ISSUE_44]


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=ENV, capture_output=True,
                          text=True, timeout=180)


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_is_one_error_line(case: Case, tmp_path: Path) -> None:
    argv, must_name = case.make(tmp_path)
    proc = run(argv)
    shown = f"$ python {' '.join(argv)}\n--- exit {proc.returncode}, stdout:\n{proc.stdout}--- stderr:\n{proc.stderr}"
    assert proc.returncode != 0, shown
    assert "Traceback" not in proc.stdout + proc.stderr, shown
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if case.usage_error:  # argparse: the usage (possibly wrapped), then `PROG: error: ...`
        assert lines and lines[0].startswith("usage:"), shown
        assert ": error: " in lines[-1] and not any(": error: " in x for x in lines[:-1]), shown
        return
    assert proc.stdout.strip() == "", shown
    assert len(lines) == 1 and lines[0].startswith("error: "), shown
    for text in must_name:
        assert text in lines[0], shown
    # said in the user's terms, not "[Errno 21]" (eval takes result and dataset folders too, and
    # then names what the folder lacks)
    if case.id.endswith("-directory") and not case.id.startswith(("eval-compare", "eval-run-data")):
        assert "folder" in lines[0] or "directory" in lines[0], shown
        assert "Errno" not in lines[0], shown

