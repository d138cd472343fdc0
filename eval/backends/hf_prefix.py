"""Prefix sharing for the hf backend: prompts that begin alike are prefilled once.

The search's target asks every question of a story in one batch, and all of them read the same
system prompt and story (150-250 tokens in the demo world) before a question of ~35: prefilling
each prompt in full spent most of the time on the same story again and again. Here alike prompts
are batched together and grouped by a long common prefix; each group's prefix is run through the
model once, its KV cache is copied to the group's rows, and decoding (`hf_greedy.py`, or
`generate` when logits processors apply) goes on from there with only the rest of each prompt
left to prefill.

Positions and masks are those of the plain path: a row is laid out as
`[pads][prefix][pads][rest]` with an attention mask that is 0 on the pads, and `generate` numbers
the tokens by the cumulative mask, so every real token keeps the position it has in its own
prompt (the prefix's cache is computed with the same numbering). Greedy answers are the plain
path's (tests/eval/test_hf_prefix.py compares them); the floating-point sums differ in order only.
"""
from __future__ import annotations

import inspect
from typing import Any, Sequence

from transformers.cache_utils import Cache, DynamicLayer

# Prompts whose common prefix is at least this share of the longer one are grouped: the
# questions of one story share 80-90% in the demo world, two different stories (the system
# prompt, a first sentence) 40-70%.
MIN_SHARED = 0.75


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for j in range(n):
        if a[j] != b[j]:
            return j
    return n


def prefix_groups(rows: Sequence[Sequence[int]]) -> list[tuple[int, list[int]]]:
    """(shared prefix length, positions in `rows`) of runs of neighbouring rows that share a
    long prefix; every row is in one group. `rows` should be sorted (lexicographically) so
    that alike prompts are neighbours. A prefix always leaves at least one token of each row
    to its rest, since generation starts from the logits of a prompt's last token."""
    groups: list[tuple[int, list[int]]] = []
    members: list[int] = []
    shared = 0
    for pos, row in enumerate(rows):
        if members:
            lcp = common_prefix(rows[members[0]], row)
            if lcp >= MIN_SHARED * max(len(rows[members[0]]), len(row)):
                members.append(pos)
                shared = min(shared, lcp, len(row) - 1)
                continue
            groups.append((shared, members))
        members, shared = [pos], len(row) - 1
    if members:
        groups.append((shared, members))
    return groups


def shared_prefix_batches(todo: Sequence[int], encoded: Sequence[Sequence[int]],
                          batch_size: int) -> list[list[int]]:
    """The prompts `todo` (indices into `encoded`) in batches of at most `batch_size` that
    keep each group of alike prompts together: a group split over two batches would have its
    prefix prefilled twice. Only a group larger than a batch is split. Groups go into batches
    in the order of their longest rest (then of their prefix's length): a batch pads every
    row's rest to its longest (and every prefix to its longest), and the demo world's rests
    range from 22 to 49 tokens, the longest in only some stories."""
    order = sorted(todo, key=lambda i: encoded[i])
    groups = [(shared, [order[pos] for pos in members])
              for shared, members in prefix_groups([encoded[i] for i in order])]
    groups.sort(key=lambda g: (max(len(encoded[i]) for i in g[1]) - g[0], g[0]))
    batches: list[list[int]] = []
    batch: list[int] = []
    for _, group in groups:
        if batch and len(batch) + len(group) > batch_size:
            batches.append(batch)
            batch = []
        while len(group) > batch_size:
            batches.append(group[:batch_size])
            group = group[batch_size:]
        batch += group
    if batch:
        batches.append(batch)
    return batches


def cache_argument(model: Any) -> str:
    """The name under which this transformers version passes a KV cache to a model."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def prefilled_inputs(model: Any, rows: Sequence[Sequence[int]], pad_id: int,
                     max_new_tokens: int) -> dict[str, Any]:
    """`generate` keyword arguments for `rows` (token ids of whole prompts) with each group's
    shared prefix already in the KV cache: input_ids, attention_mask and the cache."""
    import torch

    groups = prefix_groups(rows)
    device = model.device
    prefix_len = max(shared for shared, _ in groups)
    prefixes = torch.full((len(groups), prefix_len), pad_id, dtype=torch.long)
    prefix_mask = torch.zeros_like(prefixes)
    owner = [0] * len(rows)
    for g, (shared, members) in enumerate(groups):
        if shared:
            prefixes[g, prefix_len - shared:] = torch.tensor(rows[members[0]][:shared])
            prefix_mask[g, prefix_len - shared:] = 1
        for pos in members:
            owner[pos] = g
    rest_len = max(len(rows[pos]) - shared for shared, members in groups for pos in members)
    input_ids = torch.full((len(rows), prefix_len + rest_len), pad_id, dtype=torch.long)
    mask = torch.zeros_like(input_ids)
    for shared, members in groups:
        for pos in members:
            row = rows[pos]
            input_ids[pos, :prefix_len] = prefixes[owner[pos]]
            mask[pos, :prefix_len] = prefix_mask[owner[pos]]
            rest = len(row) - shared
            input_ids[pos, prefix_len + rest_len - rest:] = torch.tensor(row[shared:])
            mask[pos, prefix_len + rest_len - rest:] = 1
    inputs = {"input_ids": input_ids.to(device), "attention_mask": mask.to(device)}
    if not prefix_len:  # nothing shared (one-token prompts): the plain path's inputs
        return inputs
    prefixes, prefix_mask = prefixes.to(device), prefix_mask.to(device)
    positions = (prefix_mask.cumsum(-1) - 1).clamp(min=0)  # as generate numbers them
    name = cache_argument(model)
    with torch.inference_mode():
        out = model(input_ids=prefixes, attention_mask=prefix_mask, position_ids=positions,
                    use_cache=True, logits_to_keep=1)
    owners = torch.tensor(owner, device=device)
    room = input_ids.shape[1] + max_new_tokens
    layers = [ReservedLayer(layer.keys.index_select(0, owners),  # one copy of its group's per row
                            layer.values.index_select(0, owners), room)
              for layer in out[name].layers]
    return {**inputs, name: Cache(layers=layers)}


class ReservedLayer(DynamicLayer):
    """A dynamic cache layer that writes new keys and values into room reserved up front: the
    plain layer concatenates the whole cache into a new tensor at every generated token, which
    was most of a decoding step here (a batch of 256 rows of ~300 cached tokens)."""

    def __init__(self, keys, values, room: int) -> None:
        super().__init__()
        self.lazy_initialization(keys, values)
        self._length = 0
        self._reserve(keys, values, max(room, keys.shape[-2]))
        self.update(keys, values)

    def _reserve(self, keys, values, room: int) -> None:
        batch, heads, _, dim = keys.shape
        self._keys = keys.new_empty((batch, heads, room, dim))
        self._values = values.new_empty((batch, heads, room, values.shape[-1]))

    def update(self, key_states, value_states, *args, **kwargs):
        start, end = self._length, self._length + key_states.shape[-2]
        if end > self._keys.shape[-2]:  # more than reserved: move to twice the room
            old_keys, old_values = self.keys, self.values
            self._reserve(old_keys, old_values, 2 * end)
            self._keys[:, :, :start], self._values[:, :, :start] = old_keys, old_values
        self._keys[:, :, start:end] = key_states
        self._values[:, :, start:end] = value_states
        self._length = end
        self.keys, self.values = self._keys[:, :, :end], self._values[:, :, :end]
        return self.keys, self.values
