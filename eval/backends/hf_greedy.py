"""Greedy decoding for the hf backend's shared-prefix path, checking guessed answers as it goes.

A small model fine-tuned on one answer format repeats most of its answer from question to
question (the demo's SFT model: a fixed `<think>...</think><answer>` of 10 tokens, then a room
or container name among a few, then `</answer>`). `transformers.generate` spends a forward pass
on every one of those tokens. Here each forward pass also checks a draft per row, guessed from
the answers seen so far (`AnswerBank`: the most frequent way on from the row's tokens so far,
while most of those answers agree), and the row keeps the draft up to the first token where the
model's own greedy choice differs (speculative decoding with earlier answers as the guesses).
The first pass prefills the rest of each prompt with the same draft for every row (the think
text and whatever most answers go on with); rows whose answer it is finish there, and a row
that went its own way (another room) usually has its remaining tokens guessed in the next pass.
The tokens are the model's argmax at every position, as `generate` would pick them; a wrong
guess costs only its columns in that pass.

Only plain greedy decoding is done here (`plain_greedy`): logits processors such as a repetition
penalty or stop strings take `generate`. Rows keep the layout of `hf_prefix.prefilled_inputs`:
the guessed tokens a row did not accept stay in the cache with attention mask 0, and positions
are the cumulative mask, so every accepted token has the position it has in the plain path.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

# the longest draft: a wrong guess costs its columns in a pass, for every row
DRAFT_TOKENS = 16
# a draft goes on while at least this share of the earlier answers that began alike do
MIN_SHARE = 0.5

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


class AnswerBank:
    """Greedy answers seen so far (token ids up to and with eos; the first `DRAFT_TOKENS` of a
    longer one), as a tree of their beginnings: the drafts of `greedy_decode`. A draft goes on
    from a row's tokens so far by the most frequent next token for as long as at least
    `MIN_SHARE` of the answers that began as the draft so far go on with it: a guess that a row
    is unlikely to keep costs a column of the pass for every row, and the next pass guesses
    again from where the row went."""

    def __init__(self, limit: int = 65536) -> None:
        self.counts: Counter[tuple[int, ...]] = Counter()  # answers by beginning
        self.next: dict[tuple[int, ...], int] = {}  # a beginning's most frequent next token
        self.limit = limit  # distinct beginnings kept

    def add(self, answers: Sequence[Sequence[int]]) -> None:
        for answer in answers:
            if len(self.counts) >= self.limit:  # answers that hardly repeat: start again
                self.counts.clear()
                self.next.clear()
            answer = tuple(answer[:DRAFT_TOKENS])
            self.counts[()] += 1
            for k in range(1, len(answer) + 1):
                begun, step = answer[:k - 1], answer[:k]
                self.counts[step] += 1
                best = self.next.get(begun)
                if best is None or self.counts[begun + (best,)] < self.counts[step]:
                    self.next[begun] = answer[k - 1]

    def guess(self, begun: Sequence[int]) -> list[int]:
        """How the answers that began as `begun` went on, for as long as they mostly agree."""
        at = tuple(begun)
        out: list[int] = []
        while at in self.next:
            step = at + (self.next[at],)
            if self.counts[step] < MIN_SHARE * self.counts[at]:
                break
            out.append(step[-1])
            at = step
        return out


def greedy_decode(model: Any, inputs: dict[str, Any], cache_name: str, max_new_tokens: int,
                  eos_ids: set[int], pad_id: int, bank: AnswerBank) -> list[list[int]]:
    """The new tokens of each row, up to and with its first eos token, for `inputs` from
    `hf_prefix.prefilled_inputs` (input_ids of whole rows, attention_mask and maybe a cache
    holding their shared prefixes): the tokens `generate` picks greedily. The rows' answers go
    into `bank`."""
    import torch

    input_ids, mask = inputs["input_ids"], inputs["attention_mask"]
    cache = inputs.get(cache_name)
    cached = cache.get_seq_length() if cache is not None else 0
    rows, device = input_ids.shape[0], input_ids.device
    answers: list[list[int]] = [[] for _ in range(rows)]
    done = [False] * rows

    def extend(r: int, tokens: list[int]) -> None:
        for t in tokens:
            answers[r].append(t)
            if t in eos_ids or len(answers[r]) >= max_new_tokens:
                done[r] = True
                return

    feed = input_ids[:, cached:]  # the rest of each prompt, then each row's last new token
    with torch.inference_mode():
        while True:
            # a draft never reaches max_new_tokens: the pass adds one token after it
            drafts = [[] if done[r] else
                      bank.guess(answers[r])[:max_new_tokens - len(answers[r]) - 1]
                      for r in range(rows)]
            width = max(map(len, drafts))
            guessed = torch.tensor([d + [pad_id] * (width - len(d)) for d in drafts],
                                   dtype=torch.long, device=device).reshape(rows, width)
            feed = torch.cat([feed, guessed], dim=1)
            mask = torch.cat([mask, mask.new_ones((rows, width))], dim=1)
            positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, -feed.shape[1]:]
            out = model(input_ids=feed, attention_mask=mask, position_ids=positions,
                        use_cache=True, logits_to_keep=width + 1, **{cache_name: cache})
            cache = out[cache_name]
            picked = out.logits[:, -(width + 1):].argmax(-1)  # [:, j]: after j draft tokens
            steps = torch.arange(width, device=device)
            lengths = torch.tensor([len(d) for d in drafts], device=device)
            agree = (picked[:, :width] == guessed) & (steps < lengths[:, None])
            accepted = agree.cumprod(-1).sum(-1)
            for r, (row, took) in enumerate(zip(picked.tolist(), accepted.tolist())):
                if not done[r]:
                    extend(r, drafts[r][:took] + [row[took]])
            if all(done):
                break
            # a row's draft after its accepted tokens is in the cache, not in its text
            mask[:, mask.shape[1] - width:] = (steps < accepted[:, None]).to(mask.dtype)
            last = picked.gather(1, accepted[:, None])
            finished = torch.tensor(done, device=device)[:, None]
            feed = torch.where(finished, torch.full_like(last, pad_id), last)
            mask = torch.cat([mask, mask.new_ones((rows, 1))], dim=1)
    bank.add(answers)
    return answers
