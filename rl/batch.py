"""GRPO batch arithmetic for a given process count, from TRL's own GRPOConfig.

`python -m rl.train CONFIG --check --num-processes N [--num-machines M]` builds the GRPOConfig a run
on N processes would build (TRL's validation included: a batch that does not split into whole
groups of num_generations is refused here, as it would be at the real start) and prints what one
optimizer step trains on. TRL's checks read the process count from `TrainingArguments.world_size`,
which on a machine without the cluster is 1; `planned_config_class` answers N instead.
"""
from __future__ import annotations

from rl.config import ConfigError


def planned_config_class(world_size: int | None):
    """TRL's GRPOConfig, or a subclass that reports `world_size` processes to TRL's checks."""
    from trl import GRPOConfig

    if world_size is None:
        return GRPOConfig

    class PlannedGRPOConfig(GRPOConfig):
        @property
        def world_size(self) -> int:
            return world_size

    return PlannedGRPOConfig


def check_prompts_per_step(cfg, args, num_processes: int) -> None:
    """`grpo.prompts_per_step` pins the batch a recipe was written for; any other process count
    or accumulation that would silently train on another number of prompts is an error."""
    want = cfg.grpo.prompts_per_step
    if want is None:
        return
    per_step = args.per_device_train_batch_size * num_processes * args.gradient_accumulation_steps
    if per_step == want * args.num_generations:
        return
    need = want * args.num_generations
    per_micro = args.per_device_train_batch_size * num_processes
    fix = (f"use --gradient_accumulation_steps {need // per_micro}" if need % per_micro == 0 else
           f"no gradient_accumulation_steps gives it with per_device_train_batch_size "
           f"{args.per_device_train_batch_size} on {num_processes} processes; change the process count "
           f"or per_device_train_batch_size")
    raise ConfigError(
        f"grpo.prompts_per_step: {args.per_device_train_batch_size} per device x {num_processes} processes x "
        f"{args.gradient_accumulation_steps} accumulation = {per_step} completions = "
        f"{per_step / args.num_generations:g} prompts per step, not {want}; {fix}")


def batch_report(args, cfg, num_processes: int, num_machines: int, train_rows: int) -> tuple[list[str], list[str]]:
    """(lines to print, problems that stop the run) for `args`, a GRPOConfig built for
    num_processes processes."""
    g = args.num_generations
    micro = args.per_device_train_batch_size * num_processes
    completions = micro * args.gradient_accumulation_steps
    prompts = completions / g
    generation = args.generation_batch_size
    updates_per_generation = args.steps_per_generation * args.num_iterations / args.gradient_accumulation_steps
    per_machine = num_processes / num_machines
    lines = [
        f"processes: {num_processes} on {num_machines} machine(s) ({per_machine:g} per machine)",
        f"per optimizer step: {args.per_device_train_batch_size} per device x {num_processes} processes x "
        f"{args.gradient_accumulation_steps} accumulation = {completions} completions = {prompts:g} prompts x {g}",
        f"per generation: {generation} completions ({generation // g} prompts) every "
        f"{args.steps_per_generation} micro-steps, used {args.num_iterations} time(s): "
        f"{updates_per_generation:g} optimizer step(s) per generation",
    ]
    problems: list[str] = []
    if num_processes % num_machines:
        problems.append(f"--num-processes {num_processes} does not split evenly over {num_machines} machines")
    steps_per_epoch = int(train_rows // prompts) if prompts else 0
    total = args.max_steps if args.max_steps > 0 else int(steps_per_epoch * args.num_train_epochs)
    lines.append(f"steps per epoch: {train_rows} rows / {prompts:g} prompts = {steps_per_epoch}; "
                 f"the run: {total} optimizer steps")
    if steps_per_epoch == 0:
        problems.append(f"{train_rows} training rows are fewer than the {prompts:g} prompts of one step")
    if args.use_vllm and args.vllm_mode == "colocate":
        tp = args.vllm_tensor_parallel_size
        engines = num_processes // tp if num_processes % tp == 0 else 0
        # TRL sizes each engine for its tensor-parallel group's share of a generation batch
        seqs = args.per_device_train_batch_size * tp * args.steps_per_generation
        lines.append(f"vLLM colocate: {engines} engine(s) of tensor-parallel size {tp}, "
                     f"{seqs} sequences per engine per generation")
        if num_processes % tp:
            problems.append(f"vllm.tensor_parallel_size {tp} does not divide {num_processes} processes "
                            "(TRL refuses it)")
        elif per_machine % tp:
            problems.append(f"vllm.tensor_parallel_size {tp} does not divide the {per_machine:g} processes "
                            "per machine: a tensor-parallel group would span machines")
    elif args.use_vllm:
        lines.append(f"vLLM server: {generation} sequences per generation, shared by the server's "
                     "data-parallel engines")
    try:
        check_prompts_per_step(cfg, args, num_processes)
    except ConfigError as e:
        problems.append(str(e))
    return lines, problems
