"""The embedded default, end to end, offline on CPU: data -> tiny model -> SFT -> GRPO -> eval
-> report. `make demo` runs it after setting up .venv.

    python launch/demo.py [--out runs/demo] [--bench tomi=../shared/benchmarks/tomi ...]

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
from dataclasses import dataclass
from pathlib import Path

from eval.paths import describe_error

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


@dataclass(frozen=True)
class Profile:
    """Sizes of one demo run. DEFAULT is the tuned embedded default (docs/experiments.md has
    what was tried and why); SMOKE runs every stage in about a minute, for the tests."""

    name: str = "default"
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
    base_limit: int = 200  # the random base model answers nothing right: a sample suffices


DEFAULT = Profile()
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
PROFILES = {"default": DEFAULT, "smoke": SMOKE}
CHECKPOINTS = ("base", "sft", "grpo")
STAGES = ("data", "compare", "export", "model", "sft", "grpo", "eval", "report")


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class DemoError(RuntimeError):
    """A stage failed; the message names it."""


class Demo:
    def __init__(self, out: Path, benches: list[tuple[str, str]], quiet: bool = False,
                 profile: Profile = DEFAULT) -> None:
        self.out, self.benches, self.quiet, self.p = out, benches, quiet, profile
        self.stage_dir = out / "stages"

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
        env = {"OMP_NUM_THREADS": str(self.p.threads), **os.environ, "PYTHONUNBUFFERED": "1",
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

    def done(self, stage: str) -> bool:
        return (self.stage_dir / f"{stage}.json").exists()

    def run(self, only: list[str] | None = None) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        self.stage_dir.mkdir(exist_ok=True)
        # The report labels a smoke run as one (its figures are not measurements).
        (self.out / "demo.json").write_text(json.dumps({"profile": self.p.name}))
        total = time.perf_counter()
        for k, stage in enumerate(STAGES, 1):
            if only and stage not in only:
                continue
            if self.done(stage):
                self.log(f"stage {k}/{len(STAGES)} {stage}: done earlier, skipped")
                continue
            self.log(f"stage {k}/{len(STAGES)} {stage} ...")
            start, cpu = time.perf_counter(), _children_cpu()
            getattr(self, f"stage_{stage}")()
            secs, cpu = time.perf_counter() - start, _children_cpu() - cpu
            # CPU seconds beside wall seconds: on shared cores the wall time says little.
            (self.stage_dir / f"{stage}.json").write_text(json.dumps(
                {"seconds": round(secs, 1), "cpu_seconds": round(cpu, 1)}))
            self.log(f"stage {k}/{len(STAGES)} {stage}: {secs:.0f} s ({cpu:.0f} CPU s)")
        self.log(f"finished in {time.perf_counter() - total:.0f} s; report: "
                 f"{self.out / 'report' / 'report.md'}")

    # ---------------------------------------------------------------- stages
    def stage_data(self) -> None:
        """A* against a scripted reasoner over a grid of settings (resumable), in shards."""
        n = self.p.data_shards
        self.sh_together([(PY, "-m", "exploretom", "search", "--config", self.p.data_config,
                           "-o", path, "--shard", f"{i}/{n}", *(["-q"] if i else []))
                          for i, path in enumerate(self.stories)])

    def stage_compare(self) -> None:
        """A* vs overgenerate-and-filter at equal budget, for the report's difficulty figure."""
        self.compare.unlink(missing_ok=True)  # a few seconds: redone whole if interrupted
        self.sh(PY, "-m", "exploretom", "bench-search", "--target", "world", "--settings",
                str(self.p.compare_settings), "--stories", "1", "--seeds", "1", "--seed", "0",
                "-q", "--overwrite", "-o", self.compare)

    def stage_export(self) -> None:
        self.sh(PY, "-m", "exploretom", "export", *self.stories, "-o", self.dataset,
                *self.p.export_args, "--overwrite")

    def stage_model(self) -> None:
        shutil.rmtree(self.model_dir("base"), ignore_errors=True)
        self.sh(PY, "-m", "rl.tiny_model", "--corpus", self.dataset, "-o", self.model_dir("base"),
                *self.p.model_args)

    def _train(self, module: str, config: str, model: Path, out: Path,
               overrides: tuple[str, ...]) -> None:
        if (out / "model.safetensors").exists() and (out / "tokenizer.json").exists():
            return  # trained and saved; only the stage marker was missing
        if self._finish_from_last_checkpoint(out):
            return
        resume = ["--resume"] if any(out.glob("checkpoint-*")) else []
        self.sh(PY, "-m", module, config, "--model.path", model,
                "--data.train", json.dumps([{"path": str(self.dataset), "split": "train"}]),
                "--train.output_dir", out, *overrides, *resume)

    def _finish_from_last_checkpoint(self, out: Path) -> bool:
        """A run killed after its last step but before saving: its last checkpoint holds the
        final weights (resuming it would train past max_steps, which a run with
        train.stop_at_step records as that step), so save that as the model."""
        ckpts = sorted(out.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]))
        if not ckpts:
            return False
        state = json.loads((ckpts[-1] / "trainer_state.json").read_text())
        if state.get("global_step", 0) < state.get("max_steps", 1):
            return False
        self.log(f"{ckpts[-1].name} is the last step: saving it as the final model")
        for f in ckpts[-1].iterdir():
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
        for ckpt in CHECKPOINTS:
            limit = ["--limit", str(self.p.base_limit)] if ckpt == "base" else []
            self.sh(PY, "-m", "eval", "run", ",".join(names), "--model", self.model_dir(ckpt),
                    "--label", ckpt, "-o", self.out / "eval" / ckpt, *data, *self.p.eval_args,
                    *limit, "--no-report")

    def stage_report(self) -> None:
        self.sh(PY, str(ROOT / "launch" / "demo_report.py"), "--out", self.out)


def parse_bench(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--bench takes NAME=PATH, got {text!r}")
    return name, path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", default="runs/demo", help="output folder (default runs/demo)")
    p.add_argument("--bench", action="append", type=parse_bench, default=[],
                   metavar="NAME=PATH", help="also evaluate every checkpoint on a benchmark "
                   "file or folder in its release format (repeatable)")
    p.add_argument("--stages", nargs="+", choices=STAGES, help="run only these stages")
    p.add_argument("--fresh", action="store_true", help="delete OUT and start over")
    p.add_argument("--profile", choices=PROFILES, default="default",
                   help="smoke: every stage at toy sizes in about a minute (for tests)")
    p.add_argument("-q", "--quiet", action="store_true", help="hide the commands' own output")
    args = p.parse_args(argv)
    out = Path(args.out).resolve()
    for name, path in args.bench:
        if not Path(path).exists():
            print(f"error: --bench {name}={path}: no such file or folder", file=sys.stderr)
            return 2
    if args.fresh:
        shutil.rmtree(out, ignore_errors=True)
    try:
        Demo(out, args.bench, args.quiet, PROFILES[args.profile]).run(args.stages)
    except (DemoError, OSError) as e:  # OSError: e.g. --out names a file
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: run the same command again to continue", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
