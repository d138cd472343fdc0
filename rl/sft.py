"""Supervised fine-tuning (TRL SFTTrainer) on rows of the contract: the warm start before GRPO.

    accelerate launch --config_file configs/accelerate/cpu.yaml -m rl.sft configs/sft/tiny-cpu.yaml
    python -m rl.sft configs/sft/tiny-cpu.yaml --max_steps 20

Each row becomes a prompt-completion pair: the row's prompt, and as completion the assistant reply
`<think>THINK</think><answer>GOLD</answer>`, where THINK is a reasoning trace from the row's meta
(the first of `sft.think_fields` present; with `sft.think: trace` only the tracker's trace that
ExploreToM rows carry in `meta.reasoning`) or else a short template (rl.targets). With
`sft.target: answer` the completion is the gold answer alone (the ExploreToM-8B recipe). The loss
covers only the completion (`sft.loss: completion_only`), only assistant turns
(`assistant_only`, which needs `{% generation %}` markers in the chat template) or every token
(`full`: language modelling of the prompt too, for a model trained from scratch).
"""
from __future__ import annotations

import sys

from rl.config import ConfigError, SFTRun
from rl.data import Source, mix, sft_examples, traced_rows, with_system_prompt
from rl.run import common_args, eval_args, load_tokenizer, lora_config, main, say, trainer_settings


def sft_args(cfg: SFTRun, has_eval: bool):
    from trl import SFTConfig

    s = cfg.sft
    return SFTConfig(
        **common_args(cfg),
        **eval_args(cfg, has_eval),
        max_length=s.max_length,
        packing=s.packing,
        completion_only_loss=s.loss == "completion_only",
        assistant_only_loss=s.loss == "assistant_only",
    )


def load_examples(cfg: SFTRun, sources, size):
    if not sources:
        return None
    ds = mix([Source(**s.model_dump()) for s in sources], size=size, seed=cfg.data.seed)
    ds = with_system_prompt(ds, cfg.data.system_prompt)
    if cfg.sft.think == "trace" and cfg.sft.target == "think_answer":
        n = traced_rows(ds)
        if not n:
            raise ConfigError("sft.think: trace, but no row carries a trace in meta.reasoning "
                              "(export ExploreToM data with python -m exploretom export)")
        say(f"[rl.sft] think text: the tracker's trace for {n} of {len(ds)} rows")
    ds = sft_examples(ds, target=cfg.sft.target, think_fields=cfg.sft.think_fields,
                      think_default=cfg.sft.think_default, think=cfg.sft.think,
                      choice_answer=cfg.sft.choice_answer)
    if cfg.sft.loss == "assistant_only":
        ds = ds.map(lambda r: {"messages": r["prompt"] + r["completion"]},
                    remove_columns=["prompt", "completion"])
    return ds


def build_trainer(cfg: SFTRun, check: bool = False):
    tokenizer = load_tokenizer(cfg, padding_side="right")
    if cfg.sft.loss == "assistant_only" and "generation" not in (tokenizer.chat_template or ""):
        raise ConfigError("sft.loss: assistant_only needs {% generation %} markers in the model's "
                          "chat template; use completion_only")
    train_ds = load_examples(cfg, cfg.data.train, cfg.data.size)
    eval_ds = load_examples(cfg, cfg.data.eval, cfg.data.eval_size)
    say(f"[rl.sft] {len(train_ds)} training examples"
        + (f"; {len(eval_ds)} eval examples" if eval_ds is not None else ""))
    if check:
        return None
    from trl import SFTTrainer

    args = trainer_settings(sft_args, cfg, eval_ds is not None)
    try:
        return SFTTrainer(
            model=cfg.model.path,
            args=args,
            train_dataset=train_ds,
            eval_dataset=eval_ds,
            processing_class=tokenizer,
            peft_config=lora_config(cfg),
        )
    except OSError as e:
        raise ConfigError(f"model.path: cannot load {cfg.model.path!r} ({str(e).splitlines()[0]})") from None


def cli(argv: list[str] | None = None) -> int:
    return main("python -m rl.sft", "Supervised fine-tuning warm start (TRL SFTTrainer).",
                SFTRun, build_trainer, argv=argv)


if __name__ == "__main__":
    sys.exit(cli())
