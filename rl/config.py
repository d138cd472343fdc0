"""One YAML file holds a whole training run; this module declares its settings.

Sections (all checked by pydantic; an unknown or invalid field stops the run at start with one
line naming the field and what is allowed):
  model   path (local folder or hub id), dtype, gradient checkpointing, optional `lora`
  data    `train` sources (path, split, weight, max_rows), optional `eval`, size, seed, ...
  train   optimisation, batch sizes, device/precision, checkpoints and logging intervals
  log     report_to (wandb, offline by default; tensorboard), run name, completions table
  grpo    (rl.train) generation and GRPO loss settings;  reward: weights;  vllm: generation engine
  frontier (rl.train) train on the prompts the policy sometimes solves (rl.frontier)
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
from eval import config_file
from eval.backends.base import generation_model
from eval.config_file import ConfigError, load_config  # noqa: F401
from eval.rows import ANSWER_TYPES


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LoraSettings(_Section):
    r: int = Field(16, gt=0, description="LoRA rank")
    alpha: int = Field(32, gt=0, description="LoRA scaling alpha")
    dropout: float = Field(0.05, ge=0, lt=1, description="dropout on the LoRA path")
    target_modules: list[str] | Literal["all-linear"] = Field(
        "all-linear", description="module names, or all-linear (every linear layer but the "
                                  "output head, as PEFT picks them)")


class ModelSettings(_Section):
    path: str = Field(description="a local model folder or a hub id")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="the dtype the weights are loaded in")
    attn_implementation: Optional[str] = Field(
        None, description="transformers' attention (sdpa, eager, flash_attention_2); null: its default")
    gradient_checkpointing: bool = Field(False, description="recompute activations in backward")
    lora: Optional[LoraSettings] = Field(None, description="train LoRA adapters (r, alpha, "
                                                           "dropout, target_modules); null: all weights")


class SourceSettings(_Section):
    path: str = Field(description="a dataset folder (save_to_disk), a JSONL file or a hub id")
    split: str = Field("train", description="the split of a DatasetDict")
    weight: float = Field(1.0, gt=0, description="its share of the mix, relative to the others")
    max_rows: Optional[int] = Field(None, gt=0, description="at most this many of its rows")
    answer_types: Optional[list[Literal[ANSWER_TYPES]]] = Field(  # type: ignore[valid-type]
        None, description="keep only rows of these answer types (e.g. GRPO on the questions a "
                          "small model can vary on)")
    meta: Optional[dict[str, list[Any]]] = Field(
        None, description="keep only rows whose meta holds one of the listed values for every "
                          "key, e.g. {order: [1, 2]}")


class DataSettings(_Section):
    train: list[SourceSettings] = Field(min_length=1, description="the training sources (path, "
                                        "split, weight, max_rows, answer_types, meta)")
    eval: list[SourceSettings] = Field([], description="held-out sources")
    size: Optional[int] = Field(None, gt=0, description="rows in the training mix; null: the "
                                                        "largest exact mix")
    eval_size: Optional[int] = Field(None, gt=0, description="rows of the held-out mix")
    seed: int = Field(0, description="seeds the mix and its order")
    system_prompt: Optional[str] = Field(None, description="replaces every row's system message; "
                                         "null keeps each row's own (the contract's SYSTEM_PROMPT)")
    max_prompt_tokens: Optional[int] = Field(
        None, gt=0, description="drop rows whose templated prompt is longer (verl's "
                                "filter_overlong_prompts)")


SCHEDULERS = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant",
              "constant_with_warmup", "inverse_sqrt", "cosine_with_min_lr", "warmup_stable_decay")


class TrainSettings(_Section):
    output_dir: str = Field(description="checkpoints, the final model, log.jsonl and the config")
    max_steps: int = Field(-1, description="optimizer steps; -1: run num_train_epochs")
    # the demo cuts its SFT below its plateau and leaves the rest to GRPO (docs/experiments.md,
    # 2026-11-27 second session)
    stop_at_step: Optional[int] = Field(
        None, gt=0, description="end the run after this optimizer step while the learning-rate "
                                "schedule still spans max_steps (the steps run are those of the "
                                "full run, bit for bit); null: run to max_steps")
    num_train_epochs: float = Field(1.0, gt=0, description="passes over the data when max_steps is -1")
    learning_rate: float = Field(gt=0, description="peak learning rate")
    lr_scheduler_type: Literal[SCHEDULERS] = Field(  # type: ignore[valid-type]
        "linear", description="the schedule: " + ", ".join(SCHEDULERS))
    warmup_steps: float = Field(0, ge=0, description="an int, or a fraction (< 1) of the total steps")
    weight_decay: float = Field(0.0, ge=0, description="AdamW weight decay")
    max_grad_norm: float = Field(1.0, gt=0, description="gradient clipping norm")
    per_device_train_batch_size: int = Field(gt=0, description="rows (SFT) or completions (GRPO) "
                                             "per process and micro-step")
    gradient_accumulation_steps: int = Field(1, gt=0, description="micro-steps per optimizer step")
    seed: int = Field(0, description="seeds the initialisation, the sampler and generation")
    device: Literal["auto", "cpu", "cuda"] = Field("auto", description="auto: the GPU when one is "
                                                   "visible")
    # bf16 on CPU: ~19x slower for the 0.5M tiny model (STACK.md); no faster for SmolLM2 on an
    # Intel CPU without AMX, far slower with AVX2 alone (docs/training.md, precision on CPU)
    precision: Literal["auto", "fp32", "bf16", "fp16"] = Field(
        "auto", description="auto: bf16 on GPU; on CPU bf16 with AMX-BF16 or on an AMD CPU with "
                            "avx512_bf16, else fp32 (the run's log says which and why; "
                            "eval.cpu_precision)")
    save_steps: int = Field(500, gt=0, description="a checkpoint every this many steps")
    save_total_limit: Optional[int] = Field(None, gt=0, description="checkpoints kept; null: all")
    logging_steps: int = Field(10, gt=0, description="log every this many steps")
    eval_steps: Optional[int] = Field(None, gt=0, description="evaluate data.eval every this many steps")


class LogSettings(_Section):
    report_to: list[Literal["wandb", "tensorboard"]] = Field(
        ["wandb"], description="wandb (offline by default), tensorboard, or []")
    wandb_project: str = Field("tomrl", description="the wandb project")
    wandb_mode: Literal["offline", "online", "disabled"] = Field(
        "offline", description="offline runs sync later with `wandb sync`; WANDB_MODE in the "
                               "environment wins")
    run_name: Optional[str] = Field(None, description="the run's name in wandb and TensorBoard")
    log_completions: bool = Field(False, description="log sampled completions (GRPO)")
    completions_to_print: Optional[int] = Field(
        8, gt=0, description="completions printed per logging step when log_completions is on "
                             "(null: the whole batch, 512-1,024 rows in the paper runs); wandb "
                             "still gets the full table")

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
        {"prompts_per_step", "dynamic_sampling", "max_generation_rounds", "shared_prompt"})

    num_generations: int = Field(8, ge=2, description="completions per prompt (the group)")
    max_completion_length: int = Field(768, gt=0, description="tokens a completion may take")
    temperature: float = Field(1.0, gt=0, description="sampling temperature")
    top_p: float = Field(1.0, gt=0, le=1, description="nucleus sampling")
    top_k: int = Field(0, ge=0, description="top-k sampling; 0: off")
    beta: float = Field(0.001, ge=0, description="KL weight; 0: no reference model")
    loss_type: Literal[LOSS_TYPES] = Field(  # type: ignore[valid-type]
        "dapo", description="TRL's loss: " + ", ".join(LOSS_TYPES))
    scale_rewards: Literal["group", "batch", "none"] = Field(
        "group", description="how advantages are scaled")
    epsilon: float = Field(0.2, gt=0, description="clipping range (low)")
    epsilon_high: Optional[float] = Field(None, gt=0, description="clipping range (high); null: epsilon")
    num_iterations: int = Field(1, gt=0, description="optimizer passes over each generation")
    mask_truncated_completions: bool = Field(False, description="leave cut-off completions out "
                                             "of the loss")
    steps_per_generation: Optional[int] = Field(None, gt=0, description="optimizer steps each "
                                                "generation serves")
    prompts_per_step: Optional[int] = Field(
        None, gt=0, description="the recipe's prompts per optimizer step (verl's "
                                "train_batch_size): a run whose processes x per-device batch x "
                                "accumulation gives another number stops at start (rl.batch)")
    dynamic_sampling: bool = Field(
        False, description="DAPO's dynamic sampling (rl.trainer): drop zero-reward-variance "
                           "groups and refill the batch with fresh prompts")
    max_generation_rounds: int = Field(3, gt=0, description="generations per batch at most, "
                                       "with dynamic_sampling")
    shared_prompt: Literal["auto", "on", "off"] = Field(
        "auto", description="read each distinct prompt of a batch once (rl.shared_prompt): its "
                            "key/value cache serves its group's completions in the log-probabilities, "
                            "the backward and generation, with TRL's gradients; auto: where it applies "
                            "(one log line says when TRL's own step runs instead); on: fail where it "
                            "cannot; off: TRL's step")

    @field_validator("shared_prompt", mode="before")
    @classmethod
    def _yaml_on_off(cls, v: Any) -> Any:
        # YAML 1.1 (PyYAML, which reads the config files and the --key value overrides) turns a
        # bare on / off into true / false
        return ("on" if v else "off") if isinstance(v, bool) else v


class RewardSettings(_Section):
    format_weight: float = Field(1.0, description="weight of the format reward (0 / -1)")
    outcome_weight: float = Field(1.0, description="weight of the outcome reward (1 / 0)")
    overlong_buffer: Optional[int] = Field(
        None, gt=0, description="DAPO's soft overlong penalty (rl.rewards.overlong_reward): 0 up "
                                "to max_completion_length minus this many tokens, then linearly "
                                "down to -1 at the limit; null: off")
    overlong_weight: float = Field(1.0, description="weight of the overlong penalty")
    trace_weight: float = Field(
        0.0, ge=0, description="the checked-derivation reward (rl.trace_reward): 1 when the "
                               "answer is right and the think text is its derivation as "
                               "exploretom.semantics.trace_check accepts it; not in the ToM-Synth recipe; "
                               "0: off")
    untagged_outcome: bool = Field(
        False, description="read untagged answers for the outcome reward as evaluation reads "
                           "them, so a policy that does not write the tags yet is rewarded for "
                           "the answer it gave (the format reward still asks for them); false: "
                           "the paper's reward, total in {-1, 0, 1}")


class _GreedyEvalSteps(_Section):
    steps: Optional[int] = Field(None, gt=0, description="greedy accuracy on data.eval every "
                                 "this many steps; null: off")


class GreedyEvalSettings(generation_model("max_new_tokens", base=_GreedyEvalSteps, optional=True,
                                          null="grpo.max_completion_length")):
    """Greedy accuracy on the `data.eval` rows every `steps` optimizer steps (rl.trainer); when on,
    it replaces TRL's own (sampled) evaluation of data.eval."""
    batch_size: int = Field(16, gt=0, description="prompts per generation batch")

    def generation(self, max_completion_length: int):
        """What the policy is asked with: greedy, at most `max_new_tokens` (null: the training
        completions' limit)."""
        from eval.backends.base import GenerationConfig

        return GenerationConfig(max_new_tokens=self.max_new_tokens or max_completion_length)


class FrontierSettings(_Section):
    """Train on the prompts the policy sometimes solves (rl.frontier): before GRPO and every
    `every_steps` optimizer steps, `samples` completions of `max_prompts` training prompts at the
    training temperature give each prompt a pass rate p (the share that earn `reward`); the
    generation batches then draw the prompts with low < p < high, weighted toward p = 0.5."""
    enabled: bool = Field(False, description="measure pass rates and train on the frontier prompts")
    every_steps: int = Field(50, gt=0, description="optimizer steps between measurements (one "
                             "also runs before the first step)")
    samples: int = Field(8, ge=2, description="completions per measured prompt (n); its pass "
                         "rate is the share of them that earn the reward")
    max_prompts: Optional[int] = Field(
        256, gt=0, description="training prompts measured per round, the next ones of a seeded "
                               "order of the training set (rounds walk through it); null: all")
    low: float = Field(0.0, ge=0, lt=1, description="keep prompts whose pass rate is above this")
    high: float = Field(1.0, gt=0, le=1, description="and below this")
    floor: float = Field(0.1, ge=0, le=1, description="a kept prompt is drawn with weight "
                         "max(4 p (1 - p), floor): 1 at p = 0.5; floor 1: uniform")
    reward: str = Field("outcome_reward", description="the reward function whose value > 0 means "
                        "solved (the outcome reward, not the format one)")

    @model_validator(mode="after")
    def _bounds(self):
        if self.low >= self.high:
            raise ValueError(f"frontier.low ({self.low}) must be below frontier.high ({self.high})")
        return self


class VLLMSettings(_Section):
    enabled: bool = Field(False, description="generate with vLLM instead of transformers")
    mode: Literal["colocate", "server"] = Field(
        "colocate", description="colocate: vLLM inside each training process; server: a "
                                "separate server (launch/vllm_server.sh)")
    server_base_url: Optional[str] = Field(None, description="the server's URL (server mode)")
    server_host: str = Field("0.0.0.0", description="the server's host (server mode)")
    server_port: int = Field(8000, description="the server's port (server mode)")
    server_timeout: float = Field(240.0, gt=0, description="seconds to wait for the server")
    gpu_memory_utilization: float = Field(0.3, gt=0, le=1, description="vLLM's share of GPU "
                                          "memory (colocate)")
    tensor_parallel_size: int = Field(1, gt=0, description="GPUs per vLLM engine")
    enable_sleep_mode: bool = Field(False, description="free vLLM's memory between generations")
    max_model_length: Optional[int] = Field(None, gt=0, description="vLLM's context length; null: "
                                            "prompt plus completion limits")


class SFTSettings(_Section):
    max_length: Optional[int] = Field(1024, gt=0, description="tokens of an example at most")
    target: Literal["think_answer", "answer"] = Field(
        "think_answer", description="think_answer: <think>trace or template</think><answer>GOLD"
                                    "</answer>; answer: the gold alone")
    think_fields: list[str] = Field(["reasoning", "rationale", "think", "explanation"],
                                    description="meta keys that may hold a think text, in order")
    think: Literal["fields", "trace", "template"] = Field(
        "fields", description="where the think text comes from: fields: the first of "
                              "think_fields in the row's meta; trace: only meta.reasoning (the "
                              "tracker's checked trace of ExploreToM rows); template: never from "
                              "meta. Rows without one get think_default")
    think_default: Optional[str] = Field(
        None, description="the think text of rows without one: null keeps the per-answer-type "
                          "templates of rl.targets; a string replaces them (\"\": an empty think)")
    # A small model that answers a location question in words well may not find that place's
    # letter among fifteen options (SmolLM2 after SFT: 68% of short answers right, 9% of
    # fifteen-option ones; answering those by the place's name gained 19 points on Hi-ToM;
    # docs/experiments.md, 2026-11-27 sixth session)
    choice_answer: Literal["letter", "text", "text_then_letter"] = Field(
        "letter", description="how a multiple-choice row answers: letter: <answer>B</answer>; "
                              "text: the gold option's text in the answer when the options are "
                              "names, not sentences (the choice scorers read an option by its "
                              "text too); text_then_letter: that text as the think, then the "
                              "letter. Sentence options are answered by letter")
    # full loss: a model trained from scratch learns to read the story from it, the story tokens
    # being most of the signal
    loss: Literal["completion_only", "assistant_only", "full"] = Field(
        "completion_only", description="completion_only: the completion (any chat template); "
                                       "assistant_only: assistant turns ({% generation %} markers "
                                       "needed); full: every token, prompt included")
    packing: bool = Field(False, description="pack several examples into one sequence")


class _Run(_Section):
    model: ModelSettings
    data: DataSettings
    train: TrainSettings
    log: LogSettings = LogSettings()
    trl: dict[str, Any] = Field({}, description="any other field of TRL's config, passed "
                                "through: --trl.FIELD VALUE")

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
    frontier: FrontierSettings = FrontierSettings()
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
        if self.frontier.enabled:
            from rl.rewards import reward_functions

            names = [f.__name__ for f in reward_functions(self)[0]]
            if self.frontier.reward not in names:
                raise ValueError(f"frontier.reward: {self.frontier.reward!r} is not a reward of this "
                                 f"run ({', '.join(names)})")
        return self


class SFTRun(_Run):
    sft: SFTSettings = SFTSettings()
    _trl_config: ClassVar[str] = "SFTConfig"
    _owned: ClassVar[tuple[str, ...]] = TRAIN_FIELDS + ("max_length", "packing", "completion_only_loss", "assistant_only_loss")


def settings_help(run_cls: type[BaseModel]) -> str:
    """`--section.field (default ...): description` for every setting of a run, from the fields
    themselves (eval.config_file.settings_help)."""
    return "\n".join(config_file.settings_help(run_cls, flag="--"))


def _trl_config_class(name: str):
    import trl

    return getattr(trl, name)


def dump_config(cfg: _Run, path: str | Path) -> None:
    """Write the resolved config (after overrides and defaults) next to the run's outputs."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False), encoding="utf-8")
