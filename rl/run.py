"""What GRPO and SFT runs share: the command line, TRL arguments, LoRA, logging, checkpoints.

`rl.train` and `rl.sft` each define how to build their trainer; `main` does the rest: read and
validate the config, refuse to mix a new run into an old output folder (or continue it with
`--resume`), train, save the final model and tokenizer, and keep a JSONL log of every logged step
(`<output_dir>/log.jsonl`) beside wandb/TensorBoard.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from eval.jsonl import Appender
from eval.paths import describe_error, missing_local_model
from rl.config import ConfigError, dump_config, load_config, settings_help
from rl.data import DataError
from rl.lm_head import score_labelled_positions_only
from rl.versions import VersionError, check_versions

LOG_FILE = "log.jsonl"
CONFIG_FILE = "run_config.yaml"


def say(message: str) -> None:
    """A progress line on stderr, from the first process only."""
    if int(os.environ.get("RANK", "0")) == 0:
        print(message, file=sys.stderr)


def resolve_device(cfg, planning: bool = False) -> tuple[bool, str]:
    """(use_cpu, precision) from the `train.device` and `train.precision` settings. `planning`
    (--check on a machine without the cluster's GPUs) builds the config for CPU instead of failing."""
    import torch

    t = cfg.train
    if t.device == "cuda" and not torch.cuda.is_available() and planning:
        say("warning: no GPU here; TRL's config is built for CPU (GPU-only settings are not checked)")
        return True, _cpu_auto() if t.precision == "auto" else t.precision
    if t.device == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device: cuda was asked for but no GPU is visible (use auto or cpu)")
    use_cpu = t.device == "cpu" or (t.device == "auto" and not torch.cuda.is_available())
    precision = t.precision
    if precision == "auto":
        precision = _cpu_auto() if use_cpu else "bf16"
    return use_cpu, precision


def _cpu_auto() -> str:
    from eval.cpu_precision import cpu_precision

    precision, why = cpu_precision()
    say(f"train.precision auto: {precision} ({why})")
    return precision


def common_args(cfg, planning: bool = False) -> dict[str, Any]:
    """Keyword arguments for TRL's GRPOConfig/SFTConfig from the shared sections."""
    t = cfg.train
    use_cpu, precision = resolve_device(cfg, planning)
    model_kwargs: dict[str, Any] = {"dtype": cfg.model.dtype}
    if cfg.model.attn_implementation:
        model_kwargs["attn_implementation"] = cfg.model.attn_implementation
    args = dict(
        output_dir=t.output_dir,
        run_name=cfg.log.run_name,
        max_steps=t.max_steps,
        num_train_epochs=t.num_train_epochs,
        learning_rate=t.learning_rate,
        lr_scheduler_type=t.lr_scheduler_type,
        warmup_steps=int(t.warmup_steps) if t.warmup_steps >= 1 else t.warmup_steps,
        weight_decay=t.weight_decay,
        max_grad_norm=t.max_grad_norm,
        per_device_train_batch_size=t.per_device_train_batch_size,
        gradient_accumulation_steps=t.gradient_accumulation_steps,
        seed=t.seed,
        use_cpu=use_cpu,
        bf16=precision == "bf16",
        fp16=precision == "fp16",
        save_strategy="steps",
        save_steps=t.save_steps,
        save_total_limit=t.save_total_limit,
        logging_steps=t.logging_steps,
        report_to=list(cfg.log.report_to) or "none",
        **_checkpointing_arg(cfg.model.gradient_checkpointing),
        model_init_kwargs=model_kwargs,
        # every parameter gets a gradient in these models; the DDP default (True without
        # checkpointing) costs an extra autograd traversal per step
        ddp_find_unused_parameters=False,
    )
    args.update(cfg.trl)  # names checked against TRL's config class by rl.config
    return args


def _checkpointing_arg(on: bool) -> dict[str, bool]:
    """transformers 5.2x renamed gradient_checkpointing to activation_checkpointing; TRL still
    defaults the old name to True, so set the new one explicitly where it exists."""
    import dataclasses

    from transformers import TrainingArguments

    names = {f.name for f in dataclasses.fields(TrainingArguments)}
    return {"activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing": on}


def trainer_settings(build, cfg, *args):
    """TRL's config object; its own consistency checks (e.g. the batch must divide into groups of
    num_generations) become one-line config errors."""
    try:
        return build(cfg, *args)
    except ValueError as e:
        raise ConfigError(f"train/grpo settings rejected by TRL: {' '.join(str(e).split())}") from None


def seed_rebalanced_batches(trainer) -> None:
    """transformers 5.x builds the `batch_rebalance` sampler with its own default seed (42),
    not the run's: two seeds of one config drew the same rows in the same order (the quick
    demo's seeds 0 and 1 trained to the same weights, docs/experiments.md). The sampler gets the
    run's data seed (`data_seed`, else `seed`) before it first draws."""
    from transformers.trainer_pt_utils import BatchRebalanceSampler

    make = trainer._get_train_sampler

    def seeded(*args, **kwargs):
        sampler = make(*args, **kwargs)
        if isinstance(sampler, BatchRebalanceSampler):
            seed = trainer.args.data_seed
            sampler.seed = trainer.args.seed if seed is None else seed
        return sampler

    trainer._get_train_sampler = seeded


def check_master_weights(trainer) -> None:
    """Refuse full fine-tuning of half-precision parameters without DeepSpeed. DeepSpeed keeps fp32
    master weights for bf16/fp16 models; plain DDP or one device updates the bf16 tensors
    themselves, and updates below bf16's resolution round away (at lr 3e-7, 10 AdamW steps changed
    0.48% of bf16 weights against 99.96% in fp32). fp32 parameters with train.precision bf16 train
    under bf16 autocast instead, with fp32 masters."""
    import torch

    if getattr(trainer, "is_deepspeed_enabled", False):
        return
    half = {str(p.dtype).removeprefix("torch.") for p in trainer.model.parameters()
            if p.requires_grad and p.dtype in (torch.bfloat16, torch.float16)}
    if half:
        raise ConfigError(
            f"model.dtype: the trained parameters are {'/'.join(sorted(half))} and no DeepSpeed config keeps "
            "fp32 master weights, so small updates round away; set model.dtype: float32 (train.precision "
            "bf16 still computes in bf16), launch with a DeepSpeed config, or train a LoRA adapter")


@dataclasses.dataclass(frozen=True)
class CheckPlan:
    """--check: validate for this many processes on this many machines, then stop."""
    num_processes: int = 1
    num_machines: int = 1


def eval_args(cfg, has_eval: bool) -> dict[str, Any]:
    if not has_eval:
        return {}
    return dict(eval_strategy="steps", eval_steps=cfg.train.eval_steps or cfg.train.save_steps)


def lora_config(cfg):
    """A PEFT LoraConfig when `model.lora` is set, else None (full fine-tuning)."""
    if cfg.model.lora is None:
        return None
    from peft import LoraConfig

    lora = cfg.model.lora
    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=lora.target_modules, task_type="CAUSAL_LM")


def load_tokenizer(cfg, padding_side: str):
    path = cfg.model.path
    problem = missing_local_model(path)
    if problem:  # say so instead of the hub's "Repo id must be ..."
        raise ConfigError(f"model.path: cannot load a tokenizer from {path!r}: {problem}")
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(cfg.model.path, padding_side=padding_side)
    except OSError as e:
        raise ConfigError(f"model.path: cannot load a tokenizer from {cfg.model.path!r} "
                          f"({str(e).splitlines()[0]})") from None
    if tok.pad_token is None:  # Llama-3 tokenizers ship without one
        tok.pad_token = tok.eos_token
    return tok


def setup_logging_env(cfg) -> None:
    """wandb offline by default; the environment (e.g. WANDB_MODE=disabled in tests) wins."""
    if "wandb" in cfg.log.report_to:
        os.environ.setdefault("WANDB_MODE", cfg.log.wandb_mode)
        os.environ.setdefault("WANDB_PROJECT", cfg.log.wandb_project)
        os.environ.setdefault("WANDB_DIR", cfg.train.output_dir)
        Path(cfg.train.output_dir).mkdir(parents=True, exist_ok=True)


def jsonl_log_callback(path: Path):
    """A TrainerCallback appending every logged dict (with step and time) to `path`, with the
    project's one appender (eval.jsonl)."""
    from transformers import TrainerCallback

    class JsonlLog(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and logs:
                with Appender(path) as log:
                    log.write({"step": state.global_step, "time": time.time(), **logs})

    return JsonlLog()


def stop_at_step_callback(step: int):
    """A TrainerCallback ending the run after optimizer step `step` (train.stop_at_step). The
    schedule and the sampler were planned for args.max_steps already; lowering the state's
    max_steps hands the end to the trainer's own handling of it: the stop, the final checkpoint,
    the last greedy evaluation (rl.trainer) and the max_steps recorded in trainer_state.json,
    which tells a resumer the run is over."""
    from transformers import TrainerCallback

    class StopAtStep(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            state.max_steps = min(state.max_steps, step)

    return StopAtStep()


def checkpoint_step(checkpoint: str) -> int:
    """The optimizer step a checkpoint folder was saved at."""
    state = json.loads((Path(checkpoint) / "trainer_state.json").read_text(encoding="utf-8"))
    return int(state.get("global_step", 0))


def last_checkpoint(output_dir: str) -> str | None:
    """The last whole checkpoint-* folder. The trainer writes trainer_state.json last, so a folder
    without it is one a kill tore while it was written: resuming it would fail or load half a
    state, and the one before it is the run's last saved state."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return None
    whole = [p for p in folder.glob("checkpoint-*")
             if p.is_dir() and p.name[len("checkpoint-"):].isdigit() and (p / "trainer_state.json").is_file()]
    return str(max(whole, key=lambda p: int(p.name[len("checkpoint-"):]))) if whole else None


def _load_config(path: str, run_cls, overrides: list[str]):
    """rl.config.load_config, with unreadable files as ConfigError too."""
    try:
        return load_config(path, run_cls, overrides)
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason})") from None
    except OSError as e:  # a folder, no permission, ...
        raise ConfigError(describe_error(e)) from None


def main(prog: str, description: str, run_cls, build_trainer: Callable, argv: list[str] | None = None) -> int:
    """The command line of `rl.train` and `rl.sft`."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Settings (the config's sections and fields; --section.field VALUE overrides one, "
               "VALUE read as YAML; the bare field name when one section has it):\n"
               + settings_help(run_cls))
    parser.add_argument("config", help="the run's YAML file")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the last checkpoint in train.output_dir")
    parser.add_argument("--check", action="store_true",
                        help="validate the config, load the data and build TRL's config, then stop "
                             "(writes nothing)")
    parser.add_argument("--num-processes", type=int, default=None, metavar="N",
                        help="rl.train --check: the processes the run will have in all (default: WORLD_SIZE or 1)")
    parser.add_argument("--num-machines", type=int, default=1, metavar="M",
                        help="rl.train --check: the machines they are spread over (default 1)")
    args, overrides = parser.parse_known_args(argv)
    try:
        check_versions()
        if (args.num_processes is not None or args.num_machines != 1) and not args.check:
            raise ConfigError("--num-processes/--num-machines: only with --check (a real run takes "
                              "them from accelerate launch)")
        if min(args.num_processes or 1, args.num_machines) < 1:
            raise ConfigError("--num-processes/--num-machines: must be at least 1")
        cfg = _load_config(args.config, run_cls, overrides)
        if not args.check:  # --check creates no folder
            setup_logging_env(cfg)
        out = cfg.train.output_dir
        last = last_checkpoint(out)
        if args.resume and last is None:
            raise ConfigError(f"--resume: no whole checkpoint-* folder in {out} (one with its "
                              "trainer_state.json)")
        held = last or next((p for p in sorted(Path(out).glob("checkpoint-*")) if p.is_dir()), None)
        if not args.resume and not args.check and held is not None:
            raise ConfigError(f"train.output_dir: {out} already holds {Path(held).name}; "
                              "pass --resume to continue it or choose another output_dir")
        stop = cfg.train.stop_at_step
        if args.resume and stop is not None and checkpoint_step(last) >= stop:
            raise ConfigError(f"--resume: {last} is already at train.stop_at_step {stop}; "
                              "the run is over and that checkpoint holds its weights")
        plan = CheckPlan(args.num_processes or int(os.environ.get("WORLD_SIZE", "1")), args.num_machines)
        score_labelled_positions_only()  # CPU steps: only the completion goes through the LM head
        trainer = build_trainer(cfg, check=plan if args.check else None)
        if trainer is not None:
            check_master_weights(trainer)
            seed_rebalanced_batches(trainer)
    except (ConfigError, DataError, VersionError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. output_dir is a file; the message names the path
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as e:
        print(f"error: a data or model file named in {args.config} is not UTF-8 text ({e.reason})",
              file=sys.stderr)
        return 2
    if args.check:
        return 0
    if trainer.is_world_process_zero():
        dump_config(cfg, Path(out) / CONFIG_FILE)
        print(f"[{prog.split()[-1]}] {trainer.accelerator.num_processes} process(es), "
              f"distributed type {trainer.accelerator.distributed_type.value}; writing to {out}",
              file=sys.stderr)
    trainer.add_callback(jsonl_log_callback(Path(out) / LOG_FILE))
    if cfg.train.stop_at_step is not None:
        trainer.add_callback(stop_at_step_callback(cfg.train.stop_at_step))
    trainer.train(resume_from_checkpoint=last if args.resume else None)
    trainer.save_model(out)
    wandb = sys.modules.get("wandb")
    if wandb is not None and wandb.run is not None:
        # close the run here, not at interpreter exit, so that its files are complete when the
        # command returns (a caller in the same process, e.g. a notebook or a test, reads them)
        wandb.finish()
    if trainer.is_world_process_zero():
        print(f"done: {trainer.state.global_step} steps; model saved to {out}")
    return 0
