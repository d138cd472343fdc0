"""TRL's GRPO step against the shared-prompt step (rl.shared_prompt), side by side.

    python -m rl.bench_step configs/grpo/smollm2-cpu.yaml [--steps 3] [--generations 8] [--prompts 4]
        [--micro-batch ROWS] [--shared-micro-batch ROWS] [--min-prompt-tokens N]
        [--model.path runs/models/smollm2-135m-instruct ...any rl.train override]

Both steps start from the same weights and read the same rows with the same seed. Each step:
TRL's step generates and scores a group of completions per prompt, computes the loss and its
backward; the shared-prompt step generates from the same seed, then computes the loss and backward
on TRL's batch, so that the two losses and every parameter's gradient can be compared on the same
completions. Then one AdamW update with TRL's gradient moves the weights both steps start the next
step from. Seconds are split into generation (sampling and scoring, without the log-probabilities
scoring computes), log-probabilities (every pass through `_get_per_token_logps_and_entropies`: the
old and reference ones, and the loss's) and backward; the optimizer's update, the same for both,
counts in both totals. The last line:

    step_speedup=<TRL's step / shared step> loss_abs_diff=<largest |loss difference|> grad_rel_diff=<largest ||g_shared - g_trl|| / ||g_trl|| over parameters and steps>

The first step warms caches and allocators; with more than one step it is left out of the times
(not of the differences). `--micro-batch ROWS` runs the loss and backward in slices, as gradient
accumulation does, for batches whose TRL step does not fit in memory at once; `--shared-micro-batch`
gives the shared step slices of its own (it holds each prompt once, so it fits far larger ones).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import sys
import time

import torch

from rl.config import ConfigError, GRPORun
from rl.lm_head import score_labelled_positions_only
from rl.run import _load_config, say


class Clock:
    """Wall seconds spent in named parts, nested parts subtracted from the part around them."""

    def __init__(self):
        self.parts: dict[str, float] = {}
        self._stack: list[list] = []

    @contextlib.contextmanager
    def part(self, name: str):
        _sync()
        start = time.perf_counter()
        self._stack.append([name, 0.0])
        try:
            yield
        finally:
            _sync()
            _, inner = self._stack.pop()
            spent = time.perf_counter() - start
            self.parts[name] = self.parts.get(name, 0.0) + spent - inner
            if self._stack:
                self._stack[-1][1] += spent


def _sync() -> None:
    """GPU kernels run after their launch returns: wait for them, so the clock sees the work."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def tokens_read(inputs, logits_to_keep: int, shared: bool) -> int:
    """Tokens one log-probability pass runs through the model: every row whole (TRL), or each
    distinct prompt once plus every row's last prompt token and completion (shared)."""
    from rl.shared_prompt import unique_prompts

    rows, width = inputs["prompt_ids"].shape
    if not shared:
        return rows * (width + logits_to_keep)
    first, _ = unique_prompts(inputs["prompt_ids"], inputs["prompt_mask"])
    return len(first) * (width - 1) + rows * (logits_to_keep + 1)


def micro_batches(inputs: dict, rows: int | None) -> list[dict]:
    """The scored batch in slices of `rows` completions, as gradient accumulation feeds it; each
    slice keeps the whole batch's token count as the loss's normaliser."""
    from rl.trainer import _rows

    n = inputs["prompt_ids"].size(0)
    if not rows or rows >= n:
        return [inputs]
    parts = []
    for start in range(0, n, rows):
        part = _rows(inputs, slice(start, start + rows))
        if "num_items_in_batch" in inputs:
            part["num_items_in_batch"] = inputs["num_items_in_batch"]
        parts.append(part)
    return parts


def one_step(trainer, batch, seed: int, shared: bool, inputs=None, micro_batch: int | None = None):
    """(seconds per part, loss, gradients, the scored batch) of one step on `batch`; `inputs` (a
    scored batch) replaces this step's own for the loss and backward, which run in slices of
    `micro_batch` rows (None: the whole batch at once)."""
    clock = Clock()
    trainer._clock = clock
    cpu_start = time.process_time()
    trainer._sharing = shared
    trainer.model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    with clock.part("generation"):
        own = trainer._generate_and_score_completions(batch)
    if inputs is None:
        inputs = own
        if not inputs["advantages"].any():
            # no group's rewards vary (a model that never answers in the format): the true
            # gradient is zero and compares nothing; seeded advantages give both steps the same
            # non-zero one through the same code
            gen = torch.Generator().manual_seed(seed)
            inputs["advantages"] = torch.randn(inputs["advantages"].shape, generator=gen).to(
                inputs["advantages"].device, inputs["advantages"].dtype)
            say("[bench_step] no reward varies within a group: the loss and gradients are compared "
                "with seeded random advantages")
    parts = micro_batches(inputs, micro_batch)
    # TRL's loss scales each slice for accumulation itself (by loss type) from these two settings,
    # as a run with gradient_accumulation_steps = steps_per_generation = len(parts) would
    saved = trainer.current_gradient_accumulation_steps, trainer.args.steps_per_generation
    trainer.current_gradient_accumulation_steps = trainer.args.steps_per_generation = len(parts)
    total = 0.0
    try:
        for part in parts:
            with clock.part("loss"):
                loss = trainer.compute_loss(trainer.model, dict(part))
            with clock.part("backward"):
                loss.backward()
            total += loss.detach().item()
    finally:
        trainer.current_gradient_accumulation_steps, trainer.args.steps_per_generation = saved
    grads = {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.grad is not None}
    # the process's CPU seconds (all threads): the work done, whatever else shares the cores
    clock.parts["cpu"] = time.process_time() - cpu_start
    return clock.parts, total, grads, own


def grad_rel_diff(ref: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> float:
    if ref.keys() != other.keys():
        return math.inf
    worst = 0.0
    for name, g in ref.items():
        scale = g.norm().item()
        diff = (other[name] - g).norm().item()
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def prompt_tokens(trainer, row: dict) -> int:
    """The prompt's length in tokens as the trainer reads it (chat template and generation prompt)."""
    from trl.data_utils import maybe_apply_chat_template

    text = maybe_apply_chat_template({"prompt": row["prompt"]}, trainer.processing_class)["prompt"]
    return len(trainer.processing_class(text=text, add_special_tokens=False)["input_ids"])


def _step_rows(trainer, n_prompts: int, g: int, step: int, seed: int, eligible: list[int]) -> list[dict]:
    shuffled = torch.randperm(len(eligible), generator=torch.Generator().manual_seed(seed)).tolist()
    picked = [eligible[i] for i in shuffled[step * n_prompts:(step + 1) * n_prompts]]
    if len(picked) < n_prompts:
        raise ConfigError(f"--steps: {len(eligible)} training rows are too few for "
                          f"{n_prompts} prompts a step over the steps asked for")
    return [dict(trainer.train_dataset[i]) for i in picked for _ in range(g)]


def run(cfg: GRPORun, steps: int, prompts: int, micro_batch: int | None = None, min_prompt_tokens: int = 0,
        shared_micro_batch: int | None = None, out=print) -> dict:
    from rl.train import build_trainer

    cfg.grpo.shared_prompt = "auto"
    trainer = build_trainer(cfg)
    if not trainer._sharing:
        raise ConfigError(f"grpo.shared_prompt cannot apply to this run ({trainer._shared_note}): "
                          "nothing to compare")
    trainer.current_gradient_accumulation_steps = 1  # set by Trainer.train(), which is not run here
    trainer.model.train()
    inner_logps = trainer._get_per_token_logps_and_entropies

    def timed_logps(*args, **kwargs):
        with trainer._clock.part("logps"):
            return inner_logps(*args, **kwargs)

    trainer._get_per_token_logps_and_entropies = timed_logps
    eligible = list(range(len(trainer.train_dataset)))
    if min_prompt_tokens:
        eligible = [i for i in eligible if prompt_tokens(trainer, trainer.train_dataset[i]) >= min_prompt_tokens]
        out(f"{len(eligible)} of {len(trainer.train_dataset)} training prompts have at least "
            f"{min_prompt_tokens} tokens")
    optimizer = torch.optim.AdamW([p for p in trainer.model.parameters() if p.requires_grad],
                                  lr=cfg.train.learning_rate, weight_decay=cfg.train.weight_decay)
    g = cfg.grpo.num_generations
    slice_rows = {"trl": micro_batch, "shared": shared_micro_batch or micro_batch}
    per_step = {"trl": [], "shared": []}
    loss_diff = grad_diff = 0.0
    tokens = {"trl": 0, "shared": 0}
    cpu: dict[str, list[float]] = {"trl": [], "shared": []}
    for k in range(steps):
        batch = _step_rows(trainer, prompts, g, k, cfg.train.seed, eligible)
        seed = cfg.train.seed * 1000 + k
        trl_parts, trl_loss, trl_grads, inputs = one_step(trainer, batch, seed, False,
                                                          micro_batch=slice_rows["trl"])
        sh_parts, sh_loss, sh_grads, _ = one_step(trainer, batch, seed, True, inputs=inputs,
                                                  micro_batch=slice_rows["shared"])
        start = time.perf_counter()
        for name, p in trainer.model.named_parameters():
            if name in trl_grads:
                p.grad = trl_grads[name]
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        update = time.perf_counter() - start
        loss_diff = max(loss_diff, abs(trl_loss - sh_loss))
        grad_diff = max(grad_diff, grad_rel_diff(trl_grads, sh_grads))
        width = inputs["completion_ids"].size(1)
        n_logps_passes = 1 + int(inputs.get("old_per_token_logps") is not None) + \
            int(inputs.get("ref_per_token_logps") is not None)
        parts_cpu = {"trl": trl_parts["cpu"], "shared": sh_parts["cpu"]}
        for name, parts, shared in (("trl", trl_parts, False), ("shared", sh_parts, True)):
            parts = {"generation": parts.get("generation", 0.0),
                     "logps": parts.get("logps", 0.0) + parts.get("loss", 0.0),
                     "backward": parts.get("backward", 0.0), "update": update}
            per_step[name].append(parts)
            cpu[name].append(parts_cpu[name])
            tokens[name] = n_logps_passes * sum(tokens_read(part, width, shared)
                                                for part in micro_batches(inputs, slice_rows[name]))
        mean_prompt = statistics.mean(prompt_tokens(trainer, row) for row in batch[::g])
        out(f"step {k + 1}/{steps} (prompts of {mean_prompt:.0f} tokens on average): "
            f"TRL {sum(per_step['trl'][-1].values()):.2f} s, shared "
            f"{sum(per_step['shared'][-1].values()):.2f} s; loss {trl_loss:.6g} vs {sh_loss:.6g}; "
            f"largest relative gradient difference {grad_rel_diff(trl_grads, sh_grads):.2e}")
    kept = slice(1, None) if steps > 1 else slice(None)
    summary = {}
    for name in ("trl", "shared"):
        rows = per_step[name][kept]
        summary[name] = {part: statistics.mean(r[part] for r in rows) for part in rows[0]}
        summary[name]["step"] = sum(summary[name].values())
        summary[name]["tokens"] = tokens[name]
        summary[name]["cpu"] = statistics.mean(cpu[name][kept])
    for name, label in (("trl", "TRL's step"), ("shared", "shared-prompt step")):
        s = summary[name]
        out(f"{label:>18}: {s['step']:.2f} s/step = generation {s['generation']:.2f} + log-probabilities "
            f"{s['logps']:.2f} + backward {s['backward']:.2f} + update {s['update']:.2f}; "
            f"{s['cpu']:.1f} CPU s (without the update); {s['tokens']} tokens through the model per step's "
            "log-probabilities")
    out(f"CPU seconds a step (without the update), TRL's / shared: {summary['trl']['cpu'] / summary['shared']['cpu']:.2f}")
    summary.update(step_speedup=summary["trl"]["step"] / summary["shared"]["step"],
                   loss_abs_diff=loss_diff, grad_rel_diff=grad_diff)
    out(f"step_speedup={summary['step_speedup']:.2f} loss_abs_diff={loss_diff:.2e} grad_rel_diff={grad_diff:.2e}")
    return summary


def cli(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rl.bench_step", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="an rl.train config (its model, data, generation and loss settings)")
    p.add_argument("--steps", type=int, default=3, help="steps of each (default 3; the first is warm-up)")
    p.add_argument("--generations", type=int, default=None, metavar="G",
                   help="completions per prompt (default: the config's grpo.num_generations)")
    p.add_argument("--prompts", type=int, default=None,
                   help="prompts per step (default: the config's per-device batch / its group size)")
    p.add_argument("--micro-batch", type=int, default=None, metavar="ROWS",
                   help="completions per forward and backward, the step's gradient accumulated over "
                        "them (default: all of the step's at once). TRL's step holds every row's "
                        "attention over its whole sequence: 16 SmolLM2 rows of ~730 tokens needed "
                        "more than 24 GiB at once")
    p.add_argument("--shared-micro-batch", type=int, default=None, metavar="ROWS",
                   help="the shared step's slices (default: --micro-batch). It holds each prompt once, "
                        "about 1/G of TRL's memory, so it can take whole a step that TRL's must take "
                        "in slices; its gradient is the same either way")
    p.add_argument("--min-prompt-tokens", type=int, default=0, metavar="N",
                   help="draw only training prompts of at least N tokens (chat template included): "
                        "the saving grows with the prompt's share of each row, so a figure is only "
                        "comparable at a stated prompt length")
    args, overrides = p.parse_known_args(argv)
    try:
        if args.steps < 1:
            raise ConfigError("--steps: must be at least 1")
        cfg = _load_config(args.config, GRPORun, overrides)
        prompts = args.prompts or cfg.train.per_device_train_batch_size // cfg.grpo.num_generations
        if args.generations is not None:
            cfg.grpo.num_generations = args.generations
        if prompts < 1 or cfg.grpo.num_generations < 2:
            raise ConfigError("--prompts must be at least 1 and --generations at least 2")
        cfg.train.per_device_train_batch_size = prompts * cfg.grpo.num_generations
        cfg.log.report_to = []
        score_labelled_positions_only()  # as rl.train does: on CPU only completions reach the LM head
        say(f"[bench_step] {prompts} prompts x {cfg.grpo.num_generations} completions a step, "
            f"{args.steps} step(s), {torch.get_num_threads()} thread(s)")
        if args.micro_batch is not None and args.micro_batch < 1:
            raise ConfigError("--micro-batch: must be at least 1")
        if args.min_prompt_tokens < 0:
            raise ConfigError("--min-prompt-tokens: must be at least 0")
        if args.shared_micro_batch is not None and args.shared_micro_batch < 1:
            raise ConfigError("--shared-micro-batch: must be at least 1")
        run(cfg, args.steps, prompts, args.micro_batch, args.min_prompt_tokens, args.shared_micro_batch)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(cli())
