"""GRPO that reads each prompt once per group (`grpo.shared_prompt`).

A GRPO batch holds G completions of every prompt. TRL scores each completion by running the whole
sequence, prompt included, through the model, so a prompt is read G times in the forward, G times
in the backward, and G times more for the old and the reference log-probabilities. Theory-of-Mind
rows are long stories with answers of a few tokens: the repeated prompts are nearly all the work.

Here each distinct prompt runs once with its key/value cache kept in the autograd graph; the cache
is read by the completions of that prompt (once per group by `rl.prefix_attention` when each
prompt's rows sit side by side and the model attends with sdpa; indexed out to every row
otherwise) and only the completion tokens run against it.
Causal attention makes this the same computation: a prompt position never sees the completion, so
its keys and values are the ones TRL computes G times, and the gradient that flows back into them
from the G completions is the sum TRL accumulates over its G copies. Positions are the same too:
the prompt pass covers the left-padded prompt minus its last token (positions 0..P-2, as in TRL's
padded rows), the completion pass the last prompt token and the completion (P-1..P+L-1), whose
first output predicts the first completion token. The log-probabilities come from the model's own
forward with TRL's fused LM head (`fused_lm_head=True`, the temperature and outputs TRL gave it),
so entropies, temperature scaling and masking are TRL's.

Generation (transformers `generate`) is handled the same way: the distinct prompts are prefilled
once and `generate` continues from that cache (its prefix-cache path), so the group's prompt is
neither prefilled G times nor, with `rl.prefix_attention`, copied and read G times at every token.
That prefill takes the positions `generate` gives the rows (counted from each row's first real
token), not a plain forward's: the rows continue from it at those.
vLLM generation is left as it is (vLLM caches prefixes itself).

Where the cache cannot stand in for the prompt (DeepSpeed ZeRO-3 and FSDP shard the weights the
two passes share; multimodal inputs; mixture-of-experts auxiliary losses; a cache that is not a
plain per-layer key/value store), TRL's own computation runs; `rl.trainer` says so once in the log.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
from typing import Callable

import torch

from rl import prefix_attention


class NotShareable(Exception):
    """The shared-prompt computation does not apply to this model or batch; the message says why."""


def unique_prompts(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(index of one row per distinct prompt, in order of first appearance; index of each row's
    prompt among those). Rows are compared whole, ids and mask, so two prompts that differ only in
    padding stay apart."""
    key = torch.cat([prompt_ids, prompt_mask.to(prompt_ids.dtype)], dim=1)
    _, inverse = torch.unique(key, dim=0, return_inverse=True)
    n = key.size(0)
    first = torch.full((int(inverse.max()) + 1,), n, dtype=torch.long, device=key.device)
    first = first.scatter_reduce(0, inverse, torch.arange(n, device=key.device), reduce="amin")
    order = torch.argsort(first)
    rank = torch.empty_like(order)
    rank[order] = torch.arange(len(order), device=key.device)
    return first[order], rank[inverse]


def _spread(tensor: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """`tensor[rows]` along the batch. A GRPO batch holds each prompt's completions side by side,
    equally many: then a broadcast view, whose backward is a sum over the group, stands in for
    the gather, whose backward scatters one row at a time."""
    group = prefix_attention.grouped(rows, tensor.size(0))
    if group is not None:
        return tensor.unsqueeze(1).expand(tensor.size(0), group, *tensor.shape[1:]).reshape(
            rows.numel(), *tensor.shape[1:])
    return tensor.index_select(0, rows)


def _transformers_model(model):
    """The transformers PreTrainedModel inside DDP/DeepSpeed and PEFT wrappers."""
    inner = getattr(model, "module", model)  # DDP, DeepSpeed engine
    if hasattr(inner, "get_base_model"):  # PEFT
        inner = inner.get_base_model()
    return inner


@functools.lru_cache(maxsize=None)
def _cache_name(model_class: type) -> str | None:
    """The keyword the model's forward takes its key/value cache by (None: it takes none).
    transformers 5.2x renamed `past_key_values` to `cache` (the old name warns until 5.40); the
    GPU environment pins 5.17, which only knows the old one."""
    params = inspect.signature(model_class.forward).parameters
    return next((name for name in ("cache", "past_key_values") if name in params), None)


def cache_kwarg(model) -> str:
    return _cache_name(type(_transformers_model(model)))


def _output_cache(out):
    cache = getattr(out, "cache", None)
    return cache if cache is not None else getattr(out, "past_key_values", None)


@contextlib.contextmanager
def checkpointing_off(model):
    """Gradient checkpointing drops a layer's cache (transformers' GradientCheckpointingLayer), so
    the shared passes run without it: they read the prompt once instead of G times, and hold about
    what TRL's checkpointed step holds for G copies of it."""
    layers = [m for m in model.modules() if getattr(m, "gradient_checkpointing", False) is True]
    for m in layers:
        m.gradient_checkpointing = False
    try:
        yield
    finally:
        for m in layers:
            m.gradient_checkpointing = True


def generation_positions(mask: torch.Tensor) -> torch.Tensor:
    """The position ids `generate` gives a left-padded batch: each row counts from its first real
    token, padding at 0 (transformers' `_prepare_position_ids_for_generation`). A forward without
    position ids counts from the padded row's first column instead, as TRL's log-probabilities do."""
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)


def prompt_cache(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, rows: torch.Tensor,
                 position_ids: torch.Tensor | None = None):
    """The key/value cache of the distinct prompts' first P-1 tokens (in the autograd graph when
    gradients are on), indexed out to `rows` (a distinct-prompt index per completion; None: one
    row per distinct prompt), at `position_ids` (None: the model's own, as a plain forward has)."""
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    # the model builds its own cache (a layer type per attention kind, from its config)
    positions = {} if position_ids is None else {"position_ids": position_ids[:, :-1]}
    out = model(input_ids=prompt_ids[:, :-1], attention_mask=prompt_mask[:, :-1], use_cache=True,
                logits_to_keep=1, **positions)
    cache = _output_cache(out)
    if not isinstance(cache, DynamicCache) or any(type(layer) is not DynamicLayer for layer in cache.layers):
        raise NotShareable(f"the model's cache ({type(cache).__name__}) is not a plain key/value cache")
    if rows is not None:
        for layer in cache.layers:
            layer.keys, layer.values = _spread(layer.keys, rows), _spread(layer.values, rows)
    return cache


def cache_for_rows(model, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, first: torch.Tensor,
                   rows: torch.Tensor, position_ids: torch.Tensor | None = None):
    """(the distinct prompts' cache as the rows read it, the attention to run against it). With each
    prompt's rows side by side and a model that attends with sdpa (whose masks that attention
    takes), the rows read one copy per group (rl.prefix_attention); else the cache is spread to
    every row and the model attends as it does."""
    group = None
    if _transformers_model(model).config._attn_implementation == "sdpa":
        group = prefix_attention.grouped(rows, len(first))
    positions = None if position_ids is None else position_ids[first]
    if group is None:
        return (prompt_cache(model, prompt_ids[first], prompt_mask[first], rows, positions),
                contextlib.nullcontext())
    cache = prompt_cache(model, prompt_ids[first], prompt_mask[first], None, positions)
    return prefix_attention.shared_prefix_cache(cache, group), prefix_attention.attention_of(model)


def shared_logps(model, input_ids: torch.Tensor, attention_mask: torch.Tensor, logits_to_keep: int,
                 compute_entropy: bool, autocast) -> tuple[torch.Tensor, torch.Tensor | None] | None:
    """Per-token log-probabilities (and entropies) of the last `logits_to_keep` tokens of each row,
    as TRL's `_get_per_token_logps_and_entropies` computes them, with each distinct prompt read once.
    None when no prompt repeats in the batch (nothing to share: the caller runs TRL's own)."""
    width = input_ids.size(1) - logits_to_keep
    if width < 2:
        return None
    prompt_ids, prompt_mask = input_ids[:, :width], attention_mask[:, :width]
    first, rows = unique_prompts(prompt_ids, prompt_mask)
    if len(first) == len(input_ids):
        return None
    tail_ids = input_ids[:, width - 1:]
    labels = tail_ids.masked_fill(attention_mask[:, width - 1:] == 0, -100)
    labels[:, 0] = -100  # the last prompt token only predicts the first completion token
    with checkpointing_off(model), autocast():
        cache, attention = cache_for_rows(model, prompt_ids, prompt_mask, first, rows)
        with attention:
            out = model(input_ids=tail_ids, attention_mask=attention_mask, labels=labels, fused_lm_head=True,
                        **{cache_kwarg(model): cache})
    return out.log_probs, (out.entropy if compute_entropy else None)


def prefill_once(generate: Callable, model) -> Callable:
    """`generate` (a model's bound method) that prefills each distinct prompt of the batch once and
    continues every row from that cache."""

    @functools.wraps(generate)
    def generate_shared(*args, input_ids=None, attention_mask=None, **kwargs):
        if (args or input_ids is None or attention_mask is None or input_ids.size(1) < 2
                or any(k in kwargs for k in ("cache", "past_key_values", "inputs_embeds"))):
            return generate(*args, input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        first, rows = unique_prompts(input_ids, attention_mask)
        if len(first) == len(input_ids):
            return generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
        # the prefill at generate's own positions, or every left-padded row would continue from
        # keys placed where generate does not place them (measured on E6's SFT model, 8 prompts x 4
        # at T=1, 256 tokens: 19% of the completions well-formed against 100% without sharing)
        with torch.no_grad():
            cache, attention = cache_for_rows(model, input_ids, attention_mask, first, rows,
                                              generation_positions(attention_mask))
        with attention:
            return generate(input_ids=input_ids, attention_mask=attention_mask, **{cache_kwarg(model): cache}, **kwargs)

    return generate_shared


def sharding_reason(trainer) -> str | None:
    """Why the trainer's setup rules the shared passes out (None when it does not)."""
    if getattr(trainer, "is_fsdp_enabled", False):
        return "FSDP shards the weights between the prompt and completion passes"
    if getattr(trainer, "is_deepspeed_enabled", False):
        plugin = trainer.accelerator.state.deepspeed_plugin
        if plugin is not None and plugin.zero_stage == 3:
            return "DeepSpeed ZeRO-3 gathers sharded weights per forward"
    if getattr(trainer.args, "use_liger_kernel", False):
        return "the Liger loss computes its own log-probabilities"
    model = _transformers_model(trainer.model)
    if getattr(model.config, "is_encoder_decoder", False):
        return "an encoder-decoder model"
    if _cache_name(type(model)) is None:
        return f"{type(model).__name__} takes no key/value cache"
    return None
