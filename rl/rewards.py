"""The ToM-Synth reward (eq. 3-5) as two TRL reward functions built on `eval.answers`.

- `format_reward`: 0 when the completion is exactly one `<think>` block followed by exactly one
  `<answer>` block, else -1.
- `outcome_reward`: 1 when the extracted answer matches the row's gold answer under its
  `answer_type`, else 0; 0 whenever the format is broken (no credit for a tagless answer), unless
  the run reads untagged answers too (`reward.untagged_outcome`: the evaluation reader, so a policy
  is rewarded for the answer it gave).

Their sum is the paper's R(y) in {-1, 0, 1}. TRL's `GRPOTrainer` calls each with
`prompts`, `completions` and every dataset column as keyword arguments (`answer`, `answer_type`,
`choices`, `source`, `meta`, ...), plus `log_metric`, through which `outcome_reward` logs accuracy
per source (`accuracy/source/<source>`) and per belief order (`accuracy/order/<order>`, from the
row's `meta`), and the share of completions the careful reading finds to negate their answer or
to hedge between answers (`reading/hedge_or_negation`: "not in the box", "the box or the basket";
they earn nothing, and a rising share is a policy probing the reader). Accuracy here is the
outcome reward, so it requires the format. TRL itself logs `rewards/format_reward/mean` and
`rewards/outcome_reward/mean`.

`overlong_reward(max_length, buffer)` is DAPO's soft overlong penalty (Yu et al. 2025, eq. 13) as TRL
ships it, an optional third reward: 0 up to `max_length - buffer` completion tokens, then falling
linearly to -1 at `max_length` (where generation is cut). It is the alternative to masking truncated
completions out of the loss (`grpo.mask_truncated_completions`): masking ignores them, the penalty
teaches the policy to finish before the limit, smoothly rather than with a cliff.

All reward functions are total: any completion (string, conversational message list, or garbage) gets
a number, never an exception, so one degenerate sample cannot stop a run.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from eval import answers
from eval.answers import careful  # noqa: F401  (answers.careful: the flags counted below)
from eval.rows import lenient_meta
from rl.completions import completion_text
from rl.trace_reward import trace_reward


def format_reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
    """ToM-Synth eq. 4 for each completion: 0 if well-formed, else -1."""
    return [answers.format_reward(completion_text(c)) for c in completions]


def outcome_reward(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    answer: Sequence[str],
    answer_type: Sequence[str],
    choices: Sequence[Sequence[str]] | None = None,
    source: Sequence[str] | None = None,
    meta: Sequence[Any] | None = None,
    log_metric: Callable[[str, float], None] | None = None,
    untagged: bool = False,
    **kwargs: Any,
) -> list[float]:
    """ToM-Synth eq. 5 for each completion, logging accuracy per source and per order and the
    share of hedges and negations. A row's `meta.candidates` (a story's places and containers)
    are what an untagged short answer is read against when `untagged` is on; the prompt's
    question says whether a reply naming a belief beside the reality answers with the one asked."""
    n = len(completions)
    choices = choices if choices is not None else [[]] * n
    rewards, dodged = [], []
    for i, completion in enumerate(completions):
        try:
            candidates = lenient_meta(meta[i] if meta is not None else None).get("candidates") or ()
            text = completion_text(completion)
            # the same reading as answers.outcome_reward, kept here for its flag
            v = answers.score(text, answer[i], answer_type[i], list(choices[i] or []),
                              list(candidates), fallback=untagged,
                              question=_question(prompts[i] if i < len(prompts) else None))
            r = 1.0 if v.correct and (untagged or v.format_ok) else 0.0
            flag = v.flag
        except ValueError:
            # only an unknown answer_type raises; rows are validated at load, so this is a row
            # that bypassed validation: it earns nothing rather than stopping the run
            r, flag = 0.0, None
        rewards.append(r)
        dodged.append(flag in (answers.careful.HEDGE, answers.careful.NEGATION))
    if log_metric is not None:
        for d in dodged:
            log_metric("reading/hedge_or_negation", float(d))
        for i, r in enumerate(rewards):
            if source is not None:
                log_metric(f"accuracy/source/{source[i]}", r)
            order = _order(meta[i] if meta is not None else None)
            if order is not None:
                log_metric(f"accuracy/order/{order}", r)
    return rewards


def _question(prompt: Any) -> str | None:
    """The text of a prompt's last user turn (conversational prompts) or the prompt itself."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        for message in reversed(prompt):
            if isinstance(message, dict) and message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else None
    return None


def _order(meta: Any) -> str | None:
    """The belief order recorded in a row's meta (JSON string or dict), if any."""
    order = lenient_meta(meta).get("order")
    return None if order is None else str(order)


def untagged_outcome_reward(prompts: Sequence[Any], completions: Sequence[Any],
                            **kwargs: Any) -> list[float]:
    """`outcome_reward` reading untagged answers as evaluation does (`reward.untagged_outcome`);
    TRL logs it under the same name."""
    return outcome_reward(prompts, completions, untagged=True, **kwargs)


untagged_outcome_reward.__name__ = "outcome_reward"


def total_reward(completion: Any, gold: str, answer_type: str, choices: Sequence[str] = ()) -> float:
    """R(y) = format + outcome for one completion (what GRPO optimises with unit weights)."""
    text = completion_text(completion)
    return answers.format_reward(text) + answers.outcome_reward(text, gold, answer_type, list(choices))


def overlong_reward(max_length: int, buffer: int) -> Callable[..., list[float]]:
    """A TRL reward function giving each completion DAPO's R_length: TRL's own
    (`trl.rewards.get_soft_overlong_punishment`, L_max = `max_length`, L_cache = `buffer`), which
    reads the generated token ids (eos included when the model stopped) that TRL passes as
    `completion_ids`. Two things are ours: the buffer must be 1..max_length tokens (TRL's takes 0,
    a plain cliff, and a buffer longer than the limit, which would punish completions it cannot
    see the end of), and its name is `overlong_penalty`, which its metrics are logged under
    (`rewards/overlong_penalty/mean`) and `frontier.reward` names it by."""
    if not 0 < buffer <= max_length:
        raise ValueError(f"overlong buffer must be in 1..{max_length} tokens, got {buffer}")
    from trl.rewards import get_soft_overlong_punishment

    penalty = get_soft_overlong_punishment(max_completion_len=max_length, soft_punish_cache=buffer)
    penalty.__name__ = "overlong_penalty"  # an instance: picklable for TRL's async rollout workers
    return penalty


def reward_functions(cfg) -> tuple[list[Callable[..., list[float]]], list[float]]:
    """The reward functions of a GRPO run (rl.config.GRPORun) and their weights."""
    outcome = untagged_outcome_reward if cfg.reward.untagged_outcome else outcome_reward
    funcs, weights = [format_reward, outcome], [cfg.reward.format_weight, cfg.reward.outcome_weight]
    if cfg.reward.overlong_buffer is not None:
        funcs.append(overlong_reward(cfg.grpo.max_completion_length, cfg.reward.overlong_buffer))
        weights.append(cfg.reward.overlong_weight)
    if cfg.reward.trace_weight:
        funcs.append(trace_reward())
        weights.append(cfg.reward.trace_weight)
    return funcs, weights


REWARD_FUNCS = (format_reward, outcome_reward)
