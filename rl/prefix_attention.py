"""Decoding a GRPO group against one copy of its prompt's key/value cache.

`rl.shared_prompt.prefill_once` prefills each distinct prompt once. Handing `generate` a cache
spread to every row would still give each of the G completions its own copy of the prompt's keys
and values, and transformers' dynamic cache concatenates every new token onto that copy: each
decoding step then copies and reads G x the prompt's cache (2 GB for SmolLM2 at 4 prompts x 16
completions of 730 tokens), which made decoding half of the shared step.

Here the cache keeps the prompt part once per distinct prompt and only the completion part per
row (in a buffer that grows by doubling, not by a copy per token), and an attention function
splits each row's attention in two: its group's prompt keys, read once for all G rows and all
query heads of a key/value head in one matrix product, and its own completion keys. The two
halves are merged with their softmax normalisers, so the result is the attention over the
concatenation, to rounding. Generation uses it, and so do the loss's log-probabilities: the
prompt's keys then get the gradient of all G rows from one matrix product.
"""
from __future__ import annotations

import contextlib

import torch
from transformers import AttentionInterface
from transformers.cache_utils import DynamicLayer
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

NAME = "grpo_shared_prefix"


class SharedPrefixLayer(DynamicLayer):
    """One layer's cache: the prompt's keys/values once per distinct prompt ([U, kv heads, P, d]),
    the completion's per row ([U x G, kv heads, T, d]); rows are the G completions of each prompt
    side by side."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, group: int):
        super().__init__()
        self.prefix_keys, self.prefix_values, self.group = keys, values, group
        self.device, self.is_initialized, self.length = keys.device, True, 0
        empty = keys.new_empty(keys.size(0) * group, keys.size(1), 0, keys.size(3))
        self._keys, self._values = empty, empty  # what transformers reads to tell the cache's batch and dtype
        self.keys, self.values = empty, empty

    def update(self, key_states, value_states, *args, **kwargs):
        n = key_states.size(2)
        if self.length + n > self._keys.size(2):  # room for twice as many tokens: a copy per doubling
            room = max(2 * self._keys.size(2), self.length + n, 16)
            grown = [t.new_empty(*t.shape[:2], room, t.size(3)) for t in (self._keys, self._values)]
            for new, old in zip(grown, (self._keys, self._values)):
                new[:, :, :self.length] = old[:, :, :self.length]
            self._keys, self._values = grown
        self._keys[:, :, self.length:self.length + n] = key_states
        self._values[:, :, self.length:self.length + n] = value_states
        self.length += n
        self.keys, self.values = self._keys[:, :, :self.length], self._values[:, :, :self.length]
        keys = self.keys.view_as(self.keys)  # its own object, to carry the attribute below
        keys.shared_prefix = self  # read by the attention function below, which transformers hands only tensors
        return keys, self.values

    def get_seq_length(self) -> int:
        return self.prefix_keys.size(2) + self.length

    def get_mask_sizes(self, query_length: int) -> tuple[int, int]:
        return self.get_seq_length() + query_length, 0

    def crop(self, tokens_to_remove: int) -> None:
        raise NotImplementedError("a shared-prefix cache is not cropped (no assisted decoding in GRPO)")

    def reorder_cache(self, beam_idx) -> None:
        raise NotImplementedError("a shared-prefix cache does not reorder rows (no beam search in GRPO)")

    batch_repeat_interleave = batch_select_indices = reorder_cache


def _attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    layer = getattr(key, "shared_prefix", None)
    if layer is None:
        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling,
                                      dropout=dropout, **kwargs)
    units, kv_heads, prefix, _ = layer.prefix_keys.shape
    rows, heads, q_len, dim = query.shape
    group, rep = layer.group, heads // kv_heads
    scaling = dim ** -0.5 if scaling is None else scaling
    q = query.float()
    # heads are kv-head-major (transformers' repeat_kv): head h reads key/value head h // rep
    by_row = q.reshape(rows, kv_heads, rep * q_len, dim)
    by_unit = q.reshape(units, group, kv_heads, rep * q_len, dim).transpose(1, 2).reshape(
        units, kv_heads, group * rep * q_len, dim)
    s_prefix = torch.matmul(by_unit, layer.prefix_keys.float().transpose(2, 3)) * scaling
    s_own = torch.matmul(by_row, key.float().transpose(2, 3)) * scaling
    if attention_mask is not None:  # sdpa's boolean mask [rows, 1, q_len, prefix + own]: True = attend
        mask = attention_mask.expand(rows, 1, q_len, attention_mask.size(-1))
        m_prefix = mask[..., :prefix].reshape(units, group, 1, 1, q_len, prefix).expand(
            units, group, 1, rep, q_len, prefix).transpose(1, 2).reshape(units, 1, group * rep * q_len, prefix)
        m_own = mask[..., prefix:].unsqueeze(2).expand(rows, 1, rep, q_len, mask.size(-1) - prefix).reshape(
            rows, 1, rep * q_len, -1)
        s_prefix = s_prefix.masked_fill(~m_prefix, float("-inf"))
        s_own = s_own.masked_fill(~m_own, float("-inf"))
    # one softmax over both halves: a shared maximum, then the two halves' sums and products
    top_prefix = s_prefix.amax(-1, keepdim=True).reshape(units, kv_heads, group, rep * q_len, 1).transpose(1, 2).reshape(
        rows, kv_heads, rep * q_len, 1)
    top = torch.maximum(top_prefix, s_own.amax(-1, keepdim=True)).detach()  # any shift gives the same softmax
    top_by_unit = top.reshape(units, group, kv_heads, rep * q_len, 1).transpose(1, 2).reshape(
        units, kv_heads, group * rep * q_len, 1)
    p_prefix, p_own = torch.exp(s_prefix - top_by_unit), torch.exp(s_own - top)
    out_prefix = torch.matmul(p_prefix, layer.prefix_values.float())
    sum_prefix = p_prefix.sum(-1, keepdim=True)

    def to_rows(t):
        return t.reshape(units, kv_heads, group, rep * q_len, t.size(-1)).transpose(1, 2).reshape(
            rows, kv_heads, rep * q_len, t.size(-1))

    out = (to_rows(out_prefix) + torch.matmul(p_own, value.float())) / (to_rows(sum_prefix) + p_own.sum(-1, keepdim=True))
    out = out.reshape(rows, heads, q_len, -1).transpose(1, 2).contiguous().to(query.dtype)
    return out, None


AttentionInterface.register(NAME, _attention)
AttentionMaskInterface.register(NAME, sdpa_mask)


def grouped(rows: torch.Tensor, units: int) -> int | None:
    """G when `rows` (a distinct-prompt index per row) holds each prompt's G rows side by side, else None."""
    n = rows.numel()
    if n % units or not torch.equal(rows, torch.arange(units, device=rows.device).repeat_interleave(n // units)):
        return None
    return n // units


def shared_prefix_cache(cache, group: int):
    """`cache` (the distinct prompts' DynamicCache) with each layer read once per group of rows."""
    cache.layers = [SharedPrefixLayer(layer.keys, layer.values, group) for layer in cache.layers]
    return cache


@contextlib.contextmanager
def attention_of(model):
    """The model (and its submodels) attend with the shared-prefix function for the duration."""
    configs = [m.config for m in model.modules() if hasattr(m, "config") and hasattr(m.config, "_attn_implementation")]
    before = [c._attn_implementation for c in configs]
    for c in configs:
        c._attn_implementation = NAME
    try:
        yield
    finally:
        for c, name in zip(configs, before):
            c._attn_implementation = name
