"""GRPO on rows of the contract with the ToM-Synth format-plus-outcome reward (TRL GRPOTrainer).

    accelerate launch --config_file configs/accelerate/cpu.yaml -m rl.train configs/grpo/tiny-cpu.yaml
    python -m rl.train configs/grpo/tiny-cpu.yaml --max_steps 5        # one process, no launcher
    ... --resume                                                         # continue the last checkpoint

The config (rl.config.GRPORun) names the model, the data mix, the trainer settings, the reward
weights and the generation engine (transformers `generate`, or vLLM colocated or as a server).
"""
from __future__ import annotations

import importlib.util
import sys
import time

from rl.batch import batch_report, check_prompts_per_step
from rl.config import ConfigError, GRPORun, GRPOSettings
from rl.data import Source, drop_long_prompts, mix, with_system_prompt
from rl.rewards import reward_functions
from rl.run import common_args, eval_args, load_tokenizer, lora_config, main, say, trainer_settings


def vllm_args(cfg, planning: bool = False) -> dict:
    """GRPOConfig fields for vLLM generation; vLLM is imported lazily by TRL, checked here first
    (under --check, `planning`, a missing vLLM is a warning: the cluster has it, this machine not)."""
    v = cfg.vllm
    if not v.enabled:
        return {"use_vllm": False}
    if importlib.util.find_spec("vllm") is None and planning:
        say("warning: vllm.enabled but vLLM is not installed here; checked the rest")
    elif importlib.util.find_spec("vllm") is None:
        raise ConfigError("vllm.enabled: vLLM is not installed; on a GPU machine install the `vllm` "
                          "extra in its own environment (see docs/training.md) or set vllm.enabled: false")
    args = dict(use_vllm=True, vllm_mode=v.mode, vllm_enable_sleep_mode=v.enable_sleep_mode)
    if v.mode == "server":
        args.update(vllm_server_host=v.server_host, vllm_server_port=v.server_port,
                    vllm_server_timeout=v.server_timeout)
        if v.server_base_url:
            args["vllm_server_base_url"] = v.server_base_url
    else:
        args.update(vllm_gpu_memory_utilization=v.gpu_memory_utilization,
                    vllm_tensor_parallel_size=v.tensor_parallel_size)
        if v.max_model_length:
            args["vllm_max_model_length"] = v.max_model_length
    return args


def grpo_args(cfg: GRPORun, has_eval: bool, world_size: int | None = None):
    """TRL's GRPOConfig; `world_size` (--check) builds it as a run on that many processes would."""
    from rl.batch import planned_config_class

    planning = world_size is not None
    return planned_config_class(world_size)(
        **common_args(cfg, planning),
        **eval_args(cfg, has_eval),
        **vllm_args(cfg, planning),
        **cfg.grpo.model_dump(exclude=GRPOSettings.OURS),
        reward_weights=reward_functions(cfg)[1],
        log_completions=cfg.log.log_completions,
        num_completions_to_print=cfg.log.completions_to_print,
    )


def load_rows(cfg, sources, size, tokenizer):
    if not sources:
        return None, 0
    ds = mix([Source(**s.model_dump()) for s in sources], size=size, seed=cfg.data.seed)
    ds = with_system_prompt(ds, cfg.data.system_prompt)
    return drop_long_prompts(ds, tokenizer, cfg.data.max_prompt_tokens)


def timed_trainer_class():
    """TRL's GRPOTrainer, also logging the wall time of generation and its speed, so that TRL's
    `step_time` splits into generation and training (`python -m rl.timing` reports both)."""
    from trl import GRPOTrainer

    class TimedGRPOTrainer(GRPOTrainer):
        def _generate(self, prompts):
            start = time.perf_counter()
            out = super()._generate(prompts)
            elapsed = time.perf_counter() - start
            mode = "train" if self.model.training else "eval"
            self._metrics[mode]["timing/generation_s"].append(elapsed)
            try:  # (prompt_ids, completion_ids, ...) in TRL 1.x
                tokens = sum(len(ids) for ids in out[1])
            except (TypeError, IndexError):
                tokens = 0
            if tokens and elapsed > 0:
                self._metrics[mode]["timing/generated_tokens_per_s"].append(tokens / elapsed)
            return out

    return TimedGRPOTrainer


def build_trainer(cfg: GRPORun, check=None):
    """The trainer; with `check` (an rl.run.CheckPlan) only TRL's config for the planned process
    count is built and its batch arithmetic printed."""
    if not check:
        vllm_args(cfg)  # fail early, before loading anything, when vLLM is missing
    tokenizer = load_tokenizer(cfg, padding_side="left")
    train_ds, dropped = load_rows(cfg, cfg.data.train, cfg.data.size, tokenizer)
    eval_ds, _ = load_rows(cfg, cfg.data.eval, cfg.data.eval_size, tokenizer)
    if len(train_ds) == 0:
        raise ConfigError(f"data.max_prompt_tokens: all {dropped} training prompts are longer "
                          f"than {cfg.data.max_prompt_tokens} tokens")
    sources = ", ".join(f"{k}={v}" for k, v in sorted(_counts(train_ds["source"]).items()))
    say(f"[rl.train] {len(train_ds)} training rows ({sources}); {dropped} dropped as too long"
        + (f"; {len(eval_ds)} eval rows" if eval_ds is not None else ""))
    greedy = cfg.greedy_eval
    if greedy.steps:  # greedy evaluation replaces TRL's sampled one (rl.trainer)
        eval_rows, eval_ds = eval_ds, None
    args = trainer_settings(grpo_args, cfg, eval_ds is not None, check.num_processes if check else None)
    if check:
        lines, problems = batch_report(args, cfg, check.num_processes, check.num_machines, len(train_ds))
        for line in lines:
            say(f"[rl.train] {line}")
        if problems:
            raise ConfigError("; ".join(problems))
        say("[rl.train] check passed")
        return None
    check_prompts_per_step(cfg, args, args.world_size)
    from rl.trainer import greedy_eval_callback, trainer_class

    try:
        trainer = trainer_class(timed_trainer_class())(
            model=cfg.model.path,
            reward_funcs=reward_functions(cfg)[0],
            args=args,
            train_dataset=train_ds,
            eval_dataset=eval_ds,
            processing_class=tokenizer,
            peft_config=lora_config(cfg),
            dynamic_sampling=cfg.grpo.dynamic_sampling,
            max_generation_rounds=cfg.grpo.max_generation_rounds,
            shared_prompt=cfg.grpo.shared_prompt,
            frontier=cfg.frontier,
        )
    except OSError as e:
        raise ConfigError(f"model.path: cannot load {cfg.model.path!r} ({str(e).splitlines()[0]})") from None
    if greedy.steps:
        trainer.add_callback(greedy_eval_callback(
            trainer, list(eval_rows), greedy.steps,
            greedy.generation(cfg.grpo.max_completion_length), greedy.batch_size))
    return trainer


def _counts(values) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def cli(argv: list[str] | None = None) -> int:
    return main("python -m rl.train", "GRPO with the format + outcome reward (TRL).",
                GRPORun, build_trainer, argv=argv)


if __name__ == "__main__":
    sys.exit(cli())
