"""One YAML file holds a whole training run; this module declares its settings.

Sections (all checked by pydantic; an unknown or invalid field stops the run at start with one
line naming the field and what is allowed):
  model   path (local folder or hub id), dtype, gradient checkpointing, optional `lora`
  data    `train` sources (path, split, weight, max_rows), optional `eval`, size, seed, ...
  train   optimisation, batch sizes, device/precision, checkpoints and logging intervals
  log     report_to (wandb, offline by default; tensorboard), run name, completions table
  grpo    (rl.train) generation and GRPO loss settings;  reward: weights;  vllm: generation engine
  sft     (rl.sft) sequence length, target text, loss masking
  trl     any other field of TRL's GRPOConfig/SFTConfig, passed through (names are checked)

Read with `load_config(path, GRPORun | SFTRun, overrides)` (eval.config_file, the loader every
package shares). Command-line overrides follow the config path: `--grpo.num_generations 4`, or the
bare field name when only one section has it (`--max_steps 5`). Values are parsed as YAML
(`--model.lora null`).
"""
from __future__ import annotations

import dataclasses
import difflib
from pathlib import Path
from typing import Any, ClassVar, Literal, Optional

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# load_config reads these files; ConfigError is also what every rl command raises for a setting
# it cannot use
from eval.config_file import ConfigError, load_config  # noqa: F401
from eval.rows import ANSWER_TYPES


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraSettings(_Section):
    r: int = Field(16, gt=0)
    alpha: int = Field(32, gt=0)
    dropout: float = Field(0.05, ge=0, lt=1)
    # a list of module names, or "all-linear" (PEFT picks every linear layer but the output head)
    target_modules: list[str] | Literal["all-linear"] = "all-linear"


class ModelSettings(_Section):
    path: str
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    attn_implementation: Optional[str] = None
    gradient_checkpointing: bool = False
    lora: Optional[LoraSettings] = None


class SourceSettings(_Section):
    path: str
    split: str = "train"
    weight: float = Field(1.0, gt=0)
    max_rows: Optional[int] = Field(None, gt=0)
    # keep only rows of these answer types (e.g. GRPO on the questions a small model can vary on)
    answer_types: Optional[list[Literal[ANSWER_TYPES]]] = None  # type: ignore[valid-type]
    # keep only rows whose meta holds one of the listed values for every key, e.g.
    # {order: [1, 2]}: a mix that weights ExploreToM's belief questions above order 0
    meta: Optional[dict[str, list[Any]]] = None


class DataSettings(_Section):
    train: list[SourceSettings] = Field(min_length=1)
    eval: list[SourceSettings] = []
    size: Optional[int] = Field(None, gt=0)  # rows in the training mix; None: largest exact mix
    eval_size: Optional[int] = Field(None, gt=0)
    seed: int = 0
    # None keeps each row's own system message (the contract's SYSTEM_PROMPT)
    system_prompt: Optional[str] = None
    # rows whose templated prompt is longer are dropped (verl's filter_overlong_prompts)
    max_prompt_tokens: Optional[int] = Field(None, gt=0)


SCHEDULERS = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant",
              "constant_with_warmup", "inverse_sqrt", "cosine_with_min_lr", "warmup_stable_decay")


class TrainSettings(_Section):
    output_dir: str
    max_steps: int = -1  # -1: run num_train_epochs
    # End the run after this optimizer step while the learning-rate schedule still spans
    # max_steps, so the steps run are those of the full run, bit for bit: an SFT start cut below
    # its plateau, with the rest left to GRPO (the demo; docs/experiments.md, 2026-11-27 second
    # session). None: run to max_steps
    stop_at_step: Optional[int] = Field(None, gt=0)
    num_train_epochs: float = Field(1.0, gt=0)
    learning_rate: float = Field(gt=0)
    lr_scheduler_type: Literal[SCHEDULERS] = "linear"  # type: ignore[valid-type]
    warmup_steps: float = Field(0, ge=0)  # an int, or a fraction (< 1) of the total steps
    weight_decay: float = Field(0.0, ge=0)
    max_grad_norm: float = Field(1.0, gt=0)
    per_device_train_batch_size: int = Field(gt=0)
    gradient_accumulation_steps: int = Field(1, gt=0)
    seed: int = 0
    # auto: GPU when one is visible; precision auto: bf16 on GPU, fp32 on CPU (bf16 on CPU is
    # ~19x slower, STACK.md)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    save_steps: int = Field(500, gt=0)
    save_total_limit: Optional[int] = Field(None, gt=0)
    logging_steps: int = Field(10, gt=0)
    eval_steps: Optional[int] = Field(None, gt=0)


class LogSettings(_Section):
    report_to: list[Literal["wandb", "tensorboard"]] = ["wandb"]
    wandb_project: str = "tomrl"
    # offline by default: runs sync later with `wandb sync`; WANDB_MODE in the environment wins
    wandb_mode: Literal["offline", "online", "disabled"] = "offline"
    run_name: Optional[str] = None
    log_completions: bool = False
    # completions TRL prints per logging step when log_completions is on (null: the whole batch,
    # 512-1,024 rows in the paper runs); wandb still gets the full table
    completions_to_print: Optional[int] = Field(8, gt=0)

    @field_validator("report_to", mode="before")
    @classmethod
    def _none_means_empty(cls, v: Any) -> Any:
        if v in (None, "none", ["none"]):
            return []
        return [v] if isinstance(v, str) else v


LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")


class GRPOSettings(_Section):
    # Every field below has the name and meaning of TRL's GRPOConfig field and is passed through
    # (rl.train.grpo_args) except these, which are ours only
    OURS: ClassVar[frozenset[str]] = frozenset(
        {"prompts_per_step", "dynamic_sampling", "max_generation_rounds"})

    num_generations: int = Field(8, ge=2)
    max_completion_length: int = Field(768, gt=0)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1)
    top_k: int = Field(0, ge=0)
    beta: float = Field(0.001, ge=0)
    loss_type: Literal[LOSS_TYPES] = "dapo"  # type: ignore[valid-type]
    scale_rewards: Literal["group", "batch", "none"] = "group"
    epsilon: float = Field(0.2, gt=0)
    epsilon_high: Optional[float] = Field(None, gt=0)
    num_iterations: int = Field(1, gt=0)
    mask_truncated_completions: bool = False
    steps_per_generation: Optional[int] = Field(None, gt=0)
    # The recipe's prompts per optimizer step (verl's train_batch_size): when set, a run whose
    # processes x per-device batch x accumulation gives another number stops at start (rl.batch)
    prompts_per_step: Optional[int] = Field(None, gt=0)
    # DAPO's dynamic sampling (rl.trainer): drop zero-reward-variance groups and refill the batch
    # with fresh prompts, generating at most max_generation_rounds times per batch
    dynamic_sampling: bool = False
    max_generation_rounds: int = Field(3, gt=0)


class RewardSettings(_Section):
    format_weight: float = 1.0
    outcome_weight: float = 1.0
    # DAPO's soft overlong penalty (rl.rewards.overlong_reward): 0 up to max_completion_length
    # minus this many tokens, then linearly down to -1 at the limit; null: off
    overlong_buffer: Optional[int] = Field(None, gt=0)
    overlong_weight: float = 1.0
    # The checked-derivation reward (rl.trace_reward): 1 when the answer is right and the think
    # text is its derivation as exploretom.trace_check accepts it; for ExploreToM rows exported
    # with their story in meta. Not in the ToM-Synth recipe; 0: off
    trace_weight: float = Field(0.0, ge=0)
    # Read untagged answers for the outcome reward as evaluation reads them (eval.answers.reading),
    # so a policy that does not write the tags yet is rewarded for the answer it gave (the format
    # reward still asks for them; a right untagged answer then totals 0, a wrong one -1). false:
    # the paper's reward, where only a well-formed completion can earn the outcome (total in
    # {-1, 0, 1})
    untagged_outcome: bool = False


class GreedyEvalSettings(_Section):
    """Greedy accuracy on the `data.eval` rows every `steps` optimizer steps (rl.trainer); when on,
    it replaces TRL's own (sampled) evaluation of data.eval."""
    steps: Optional[int] = Field(None, gt=0)  # null: off
    max_new_tokens: Optional[int] = Field(None, gt=0)  # null: grpo.max_completion_length
    batch_size: int = Field(16, gt=0)


class VLLMSettings(_Section):
    enabled: bool = False
    # colocate: vLLM inside each training process; server: a separate `trl vllm-serve` process
    mode: Literal["colocate", "server"] = "colocate"
    server_base_url: Optional[str] = None
    server_host: str = "0.0.0.0"
    server_port: int = 8000
    server_timeout: float = Field(240.0, gt=0)
    gpu_memory_utilization: float = Field(0.3, gt=0, le=1)
    tensor_parallel_size: int = Field(1, gt=0)
    enable_sleep_mode: bool = False
    max_model_length: Optional[int] = Field(None, gt=0)


class SFTSettings(_Section):
    max_length: Optional[int] = Field(1024, gt=0)
    # think_answer: <think>trace or template</think><answer>GOLD</answer>; answer: the gold alone
    target: Literal["think_answer", "answer"] = "think_answer"
    think_fields: list[str] = ["reasoning", "rationale", "think", "explanation"]
    # Where the think text comes from: fields: the first of think_fields in the row's meta;
    # trace: only meta.reasoning (the tracker-derived, checked trace of ExploreToM rows,
    # exploretom.trace); template: never from meta. Rows without one get think_default.
    think: Literal["fields", "trace", "template"] = "fields"
    # The think text of rows without a trace: null keeps the per-answer-type templates of
    # rl.targets; a string replaces them (the CPU demo uses a short one: shorter completions).
    think_default: Optional[str] = None
    # completion_only: loss on the prompt-completion's completion (works with any chat template);
    # assistant_only: loss on assistant turns, needs {% generation %} markers in the template;
    # full: loss on every token, prompt included (a model trained from scratch learns to read
    # the story from it: the story tokens are most of the signal)
    loss: Literal["completion_only", "assistant_only", "full"] = "completion_only"
    packing: bool = False


class _Run(_Section):
    model: ModelSettings
    data: DataSettings
    train: TrainSettings
    log: LogSettings = LogSettings()
    trl: dict[str, Any] = {}

    _trl_config: ClassVar[str] = ""  # TRL config class whose field names `trl` may use
    _owned: ClassVar[tuple[str, ...]] = ()  # TRL fields set from the sections above

    @model_validator(mode="after")
    def _check_trl_passthrough(self):
        if not self.trl:
            return self  # nothing to check: do not pay TRL's import time
        cls = _trl_config_class(self._trl_config)
        allowed = {f.name for f in dataclasses.fields(cls)}
        for key in self.trl:
            if key not in allowed:
                near = difflib.get_close_matches(key, sorted(allowed), n=3)
                hint = f" (did you mean {', '.join(near)}?)" if near else ""
                raise ValueError(f"trl.{key}: not a field of trl.{cls.__name__}{hint}")
            if key in self._owned:
                raise ValueError(f"trl.{key}: set it in its own section, not under trl")
        return self


TRAIN_FIELDS = tuple(TrainSettings.model_fields) + ("gradient_checkpointing", "activation_checkpointing", "report_to", "run_name",
                                                    "output_dir", "bf16", "fp16", "use_cpu")


class GRPORun(_Run):
    grpo: GRPOSettings = GRPOSettings()
    reward: RewardSettings = RewardSettings()
    vllm: VLLMSettings = VLLMSettings()
    greedy_eval: GreedyEvalSettings = GreedyEvalSettings()
    _trl_config: ClassVar[str] = "GRPOConfig"
    _owned: ClassVar[tuple[str, ...]] = TRAIN_FIELDS + tuple(GRPOSettings.model_fields) + (
        "reward_weights", "use_vllm", "vllm_mode", "log_completions")

    @model_validator(mode="after")
    def _check_extras(self):
        buffer = self.reward.overlong_buffer
        if buffer is not None and buffer > self.grpo.max_completion_length:
            raise ValueError(f"reward.overlong_buffer: {buffer} tokens is longer than "
                             f"grpo.max_completion_length ({self.grpo.max_completion_length})")
        if self.greedy_eval.steps is not None and not self.data.eval:
            raise ValueError("greedy_eval.steps: needs held-out rows in data.eval")
        return self


class SFTRun(_Run):
    sft: SFTSettings = SFTSettings()
    _trl_config: ClassVar[str] = "SFTConfig"
    _owned: ClassVar[tuple[str, ...]] = TRAIN_FIELDS + ("max_length", "packing", "completion_only_loss", "assistant_only_loss")


def _trl_config_class(name: str):
    import trl

    return getattr(trl, name)


def dump_config(cfg: _Run, path: str | Path) -> None:
    """Write the resolved config (after overrides and defaults) next to the run's outputs."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
