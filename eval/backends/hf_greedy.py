"""Greedy decoding for the hf backend's shared-prefix path, with a guessed answer checked at once.

A small model fine-tuned on one answer format repeats most of its answer from question to
question (the demo's SFT model: a fixed `<think>...</think><answer>` of 10 tokens, then a room
or container name among a few). `transformers.generate` spends a forward pass on every one of
those tokens. Here the rest of each prompt is prefilled together with a draft, the most frequent
answer of the previous batch, and the draft is kept up to the first token where the model's own
greedy choice differs (speculative decoding with a fixed guess): rows whose answer is the draft
finish in that one pass, the others go on from their first differing token, one token a step.
The tokens are the model's argmax at every position, as `generate` would pick them; a wrong
guess costs only the draft's columns in the prefill.

Only plain greedy decoding is done here (`plain_greedy`): logits processors such as a repetition
penalty or stop strings take `generate`. Rows keep the layout of `hf_prefix.prefilled_inputs`:
the tokens a row did not accept stay in the cache with attention mask 0, and positions are the
cumulative mask, so every accepted token has the position it has in the plain path.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

# generation settings that add a logits processor (or change the search) unless they hold one
# of these values; with any other value the batch takes `generate`
NEUTRAL = {
    "repetition_penalty": (None, 1.0), "no_repeat_ngram_size": (None, 0), "bad_words_ids": (None,),
    "sequence_bias": (None,), "forced_bos_token_id": (None,), "forced_eos_token_id": (None,),
    "suppress_tokens": (None,), "begin_suppress_tokens": (None,), "min_new_tokens": (None, 0),
    "min_length": (None, 0), "exponential_decay_length_penalty": (None,),
    "guidance_scale": (None, 1.0), "remove_invalid_values": (None, False), "num_beams": (None, 1),
    "stop_strings": (None,), "watermarking_config": (None,),
}


def plain_greedy(gen_config: Any) -> bool:
    """True when `generate` would pick each token as the argmax of the raw logits."""
    return not gen_config.do_sample and all(
        getattr(gen_config, name, None) in values for name, values in NEUTRAL.items())


def most_common_answer(new_tokens: Sequence[Sequence[int]], eos_ids: set[int]) -> list[int]:
    """The most frequent answer of a batch, up to and with its eos token: the next batch's
    draft (ties go to the answer seen first)."""
    answers = []
    for row in new_tokens:
        end = next((j for j, t in enumerate(row) if t in eos_ids), None)
        answers.append(tuple(row if end is None else row[:end + 1]))
    return list(Counter(answers).most_common(1)[0][0]) if answers else []


def greedy_decode(model: Any, inputs: dict[str, Any], cache_name: str, max_new_tokens: int,
                  eos_ids: set[int], pad_id: int, draft: Sequence[int] = ()) -> list[list[int]]:
    """The new tokens of each row, up to and with its first eos token, for `inputs` from
    `hf_prefix.prefilled_inputs` (input_ids of whole rows, attention_mask and maybe a cache
    holding their shared prefixes): the tokens `generate` picks greedily."""
    import torch

    input_ids, mask = inputs["input_ids"], inputs["attention_mask"]
    cache = inputs.get(cache_name)
    cached = cache.get_seq_length() if cache is not None else 0
    rows, device = input_ids.shape[0], input_ids.device
    draft = list(draft)[:max_new_tokens - 1]
    guess = len(draft)
    answers: list[list[int]] = [[] for _ in range(rows)]
    done = [False] * rows

    def extend(r: int, tokens: list[int]) -> None:
        for t in tokens:
            answers[r].append(t)
            if t in eos_ids or len(answers[r]) >= max_new_tokens:
                done[r] = True
                return

    def forward(feed, mask, keep: int):
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -feed.shape[1]:]
        out = model(input_ids=feed, attention_mask=mask, position_ids=positions, use_cache=True,
                    logits_to_keep=keep, **{cache_name: cache})
        return out.logits[:, -keep:].argmax(-1), out[cache_name]

    with torch.inference_mode():
        guessed = torch.tensor(draft, dtype=torch.long, device=device).expand(rows, guess)
        feed = torch.cat([input_ids[:, cached:], guessed], dim=1)
        mask = torch.cat([mask, mask.new_ones((rows, guess))], dim=1)
        picked, cache = forward(feed, mask, guess + 1)  # picked[:, j]: after j draft tokens
        accepted = (picked[:, :guess] == guessed).cumprod(-1).sum(-1)
        for r, (row, took) in enumerate(zip(picked.tolist(), accepted.tolist())):
            extend(r, draft[:took] + [row[took]])
        if guess:  # the draft after a row's accepted tokens is in the cache, not in its text
            mask[:, -guess:] = (torch.arange(guess, device=device) < accepted[:, None]).to(mask.dtype)
        last = picked.gather(1, accepted[:, None])
        while not all(done):
            finished = torch.tensor(done, device=device)[:, None]
            feed = torch.where(finished, torch.full_like(last, pad_id), last)
            mask = torch.cat([mask, mask.new_ones((rows, 1))], dim=1)
            last, cache = forward(feed, mask, 1)
            for r, t in enumerate(last[:, 0].tolist()):
                if not done[r]:
                    extend(r, [t])
    return answers
