"""Frontier prompts (`frontier:` in a GRPO config): measure the policy's pass rate on training
prompts and build the weighted draw of the prompts it sometimes solves.

A GRPO group teaches only when its completions disagree: a prompt the policy always or never solves
gives every completion the same outcome and no gradient (DAPO's dynamic sampling drops such groups
after paying for their generation; R-Zero and Absolute Zero reward tasks at the edge of the
solver's ability). So before GRPO and every `every_steps` optimizer steps, `measure` samples
`samples` completions for each of `max_prompts` training prompts with the trainer's own generation
(its temperature, its engine: transformers or vLLM) and scores them with its reward functions; a
prompt's pass rate p is the share of its completions whose `reward` (the outcome reward, not the
format one) is above 0. `Frontier` keeps the prompts with low < p < high (0 < p < 1 by default)
and draws each generation batch's prompts from them without replacement, prompt i with weight
max(4 p_i (1 - p_i), floor): 1 at p = 0.5, where a group of G completions is least likely to be
flat (all-same with probability p^G + (1 - p)^G), and `floor` for prompts near the edges. A
frontier smaller than a batch gives all its prompts and the trainer fills the rest from the whole
training set (rl.trainer). Each round replaces the previous one's rates: the policy has moved.
Rounds measure the next `max_prompts` prompts of a seeded order of the training set, so
successive rounds walk through it.

The draws and the measurement order are seeded and identical on every process; `measure` splits
each chunk of prompts over the processes, as the generation batches are split.
"""
from __future__ import annotations

import time
from collections import defaultdict
from typing import Any, Sequence

import torch

# pass-rate histogram bins: exactly 0 and exactly 1 (the flat prompts) apart, the rest by quarters
BINS = ("0", "0-0.25", "0.25-0.5", "0.5-0.75", "0.75-1", "1")


def pass_rate_bin(p: float) -> str:
    if p <= 0:
        return "0"
    if p >= 1:
        return "1"
    return BINS[1 + min(int(p * 4 - 1e-9), 3)]  # (0, .25], (.25, .5], (.5, .75], (.75, 1)


def histogram(rates: Sequence[float]) -> dict[str, float]:
    """The share of `rates` in each bin of BINS (all bins present)."""
    counts = dict.fromkeys(BINS, 0)
    for p in rates:
        counts[pass_rate_bin(p)] += 1
    return {b: c / len(rates) if rates else 0.0 for b, c in counts.items()}


def weight(p: float, floor: float) -> float:
    """A frontier prompt's draw weight: 4 p (1 - p), at least `floor`."""
    return max(4.0 * p * (1.0 - p), floor)


class Frontier:
    """The last measurement's pass rates and the weighted draw of its frontier prompts."""

    def __init__(self, settings, n_rows: int, seed: int):
        self.settings = settings  # rl.config.FrontierSettings
        self.n_rows, self.seed = n_rows, seed
        self.rates: dict[int, float] = {}  # dataset index -> pass rate, last round
        self.kept: list[int] = []
        self.weights = torch.zeros(0)
        self.measured_at: int | None = None  # the optimizer step of the last round
        self.rounds = 0
        self.seconds = 0.0
        self._order: list[int] = []
        self._epoch = 0
        self._draws = 0

    def due(self, step: int) -> bool:
        return self.measured_at is None or step - self.measured_at >= self.settings.every_steps

    def next_prompts(self) -> list[int]:
        """The dataset indices to measure this round: the next `max_prompts` of a seeded order
        (a new permutation each pass over the training set); all of them with max_prompts null."""
        want = min(self.settings.max_prompts or self.n_rows, self.n_rows)
        picked: list[int] = []
        while len(picked) < want:
            if not self._order:
                gen = torch.Generator().manual_seed(self.seed + 104729 * (1 + self._epoch))
                self._order = torch.randperm(self.n_rows, generator=gen).tolist()
                self._epoch += 1
            i = self._order.pop(0)
            if i not in picked:
                picked.append(i)
        return picked

    def update(self, rates: dict[int, float], step: int, seconds: float) -> None:
        s = self.settings
        self.rates, self.measured_at, self.seconds = dict(rates), step, seconds
        self.rounds += 1
        self.kept = [i for i, p in rates.items() if s.low < p < s.high]
        self.weights = torch.tensor([weight(rates[i], s.floor) for i in self.kept], dtype=torch.float64)

    def draw(self, k: int) -> list[int]:
        """Up to `k` distinct frontier prompts, drawn with their weights (all of them, in a
        weighted order, when the frontier has at most k)."""
        if not self.kept or k <= 0:
            return []
        gen = torch.Generator().manual_seed(self.seed + 15485863 * (1 + self._draws))
        self._draws += 1
        picked = torch.multinomial(self.weights, min(k, len(self.kept)), replacement=False, generator=gen)
        return [self.kept[i] for i in picked.tolist()]

    def metrics(self) -> dict[str, float]:
        """`frontier/...` for the log: the last round's histogram, sizes and cost."""
        rates = list(self.rates.values())
        out = {f"frontier/pass_rate/{b}": v for b, v in histogram(rates).items()}
        out["frontier/prompts"] = float(len(self.kept))
        out["frontier/measured"] = float(len(rates))
        out["frontier/mean_pass_rate"] = sum(rates) / len(rates) if rates else 0.0
        out["frontier/rounds"] = float(self.rounds)
        return out

    def summary(self) -> str:
        hist = histogram(list(self.rates.values()))
        bins = ", ".join(f"{b}: {v:.0%}" for b, v in hist.items())
        return (f"{len(self.rates)} prompts measured at step {self.measured_at} in {self.seconds:.0f}s "
                f"({self.settings.samples} samples each), {len(self.kept)} on the frontier; pass rates {bins}")


def measure(trainer, indices: Sequence[int], samples: int, reward: str) -> dict[int, float]:
    """Pass rates of the training rows `indices`: `samples` completions each, generated and scored
    as a training batch is (`trainer._generate`, `trainer._calculate_rewards`), without touching the
    run's logged metrics. Every process passes the same `indices` and gets every rate back.

    The generation goes in chunks the size of a training generation batch, each process taking its
    share of a chunk; the last chunk wraps round to the first prompts so that every process
    generates as many times (generation and the reward gather are collective)."""
    acc = trainer.accelerator
    column = trainer.reward_func_names.index(reward)
    args = trainer.args
    per_process = max(1, args.per_device_train_batch_size * args.steps_per_generation // samples)
    chunk = per_process * acc.num_processes
    saved = (trainer._metrics["train"], trainer._pending_metrics, trainer._pending_extra_logs,
             trainer.state.num_input_tokens_seen, trainer.num_generations, getattr(trainer, "_last_rewards", None))
    # completion lengths, reward means and the reward functions' own metrics of the measurement
    # stay out of the training log; TRL's generation groups by num_generations (vLLM server: n)
    trainer._metrics["train"] = defaultdict(list)
    trainer._pending_metrics, trainer._pending_extra_logs = defaultdict(list), defaultdict(list)
    trainer.num_generations = samples
    rates: dict[int, float] = {}
    try:
        for start in range(0, len(indices), chunk):
            ids = [indices[(start + j) % len(indices)] for j in range(chunk)]
            mine = ids[acc.process_index * per_process:(acc.process_index + 1) * per_process]
            rows: list[dict[str, Any]] = [dict(trainer.train_dataset[i]) for i in mine for _ in range(samples)]
            prompts = [r["prompt"] for r in rows]
            out = trainer._generate(prompts)
            completion_ids, completions = out[1], out[3]
            rewards = trainer._calculate_rewards(rows, prompts, completions, completion_ids)[:, column]
            passed = (rewards.nan_to_num(0.0) > 0).float().view(-1, samples).mean(dim=1).tolist()
            for i, p in zip(ids, passed, strict=True):  # all processes' prompts, in process order
                rates.setdefault(i, p)
    finally:
        (trainer._metrics["train"], trainer._pending_metrics, trainer._pending_extra_logs,
         trainer.state.num_input_tokens_seen, trainer.num_generations, last) = saved
        if last is not None:
            trainer._last_rewards = last
    return rates


def measure_round(trainer, frontier: Frontier, step: int) -> None:
    """One round: measure the next prompts and replace the frontier."""
    start = time.perf_counter()
    s = frontier.settings
    rates = measure(trainer, frontier.next_prompts(), s.samples, s.reward)
    frontier.update(rates, step, time.perf_counter() - start)
