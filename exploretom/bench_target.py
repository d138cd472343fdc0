"""Throughput of a local model as the search's target: questions answered per second, through
each backend a search can use, on the same questions, in turn.

    python -m exploretom.bench_target --target hf:PATH [--target vllm:PATH] [--target served:PATH]
        [-n 2000] [--prompt row|paper] [--batch-size 64] [--world configs/exploretom/demo.yaml]
        [--orders 0 1 2] [--plain | --compare]

The questions are those `bench-search --target ...` asks: every question (of `--orders`) of
random stories meeting the conditions of the world's first 20 bench settings, sent to the target
in one call as the search sends them, greedy, with the prompt and settings of `parse_target`.
Loading the model (and starting the server of `served:`) is timed apart as `startup_s`, and one
warm-up call comes first. Prints a line per run, then how many answers equal the first run's:

    target=hf:runs/demo/sft questions=2000 stories=150 seconds=3.96 questions_per_s=505.1
    cpu_questions_per_s=508.2 share_prefixes=true accuracy=0.5120 read_tag=0.998
    read_fallback=0.002 unread=0.000 truncated=0 omp_threads=1 load_average=2.1

`cpu_questions_per_s` (hf only: vLLM works in processes of its own) divides by this process's
CPU time: on a shared machine it says what the target does with the core it got. `read_*` and
`unread` are how the answers were read (eval.answers); `truncated` counts answers that reached
the token limit. `--plain` turns the hf backend's prefix sharing off; `--compare` runs hf both
ways and exits 1 unless every run's answers are the first run's.
"""
from __future__ import annotations

import argparse
import os
from collections import Counter
import sys
import time
from typing import Any

from eval.cli_common import positive_int
from exploretom.sampling.sampler import StorySampler
from exploretom.search.run import Grid, bench_settings, load_config, run_lexicon, story_streams
from exploretom.search.targets import (LOCAL_KINDS, PROMPTS, Item, Target, check_target, judge,
                                       make_target, parse_target)
from exploretom.semantics.label import story_text
from exploretom.semantics.questions import generate_questions

DEMO_WORLD = "configs/exploretom/demo.yaml"


def bench_items(n: int, world: str | None, orders: tuple[int, ...], seed: int = 0) -> list[Item]:
    """The first `n` questions of `orders` about random stories of the world's bench settings
    (a story's questions together, stories round the settings)."""
    lexicon, grid = None, Grid()
    if world:
        run = load_config(world)
        lexicon, grid = run_lexicon(world, run), run.grid
    settings = bench_settings(20, seed, grid)
    items: list[Item] = []
    index = 0
    while len(items) < n:
        cond = settings[index % len(settings)]
        context, rng = story_streams(cond, seed, index, lexicon)
        for tracker in StorySampler(cond, context, rng).walks(1):
            text = story_text(tracker)
            items += [Item(tracker, text, q) for q in generate_questions(tracker)
                      if q["order"] in orders]
        index += 1
        if index > 100 * n:  # the settings' stories have none of these orders
            raise ValueError(f"no questions of orders {orders} in {world or 'the paper grid'}")
    return items[:n]


def timed(target: Target, items: list[Item]) -> tuple[list[str], float, float]:
    """Answers, wall seconds and CPU seconds of one call, after a warm-up call."""
    target.answer(items[:32])
    wall, cpu = time.perf_counter(), time.process_time()
    answers = target.answer(items)
    return answers, time.perf_counter() - wall, time.process_time() - cpu


def run_line(spec: str, target: Target, items: list[Item], answers: list[str], wall: float,
             cpu: float, startup: float, share_prefixes: bool | None, load: float) -> str:
    """One line of figures: speed, and how the answers were read and scored."""
    import torch

    reads = Counter()
    correct = 0
    for it, a in zip(items, answers):
        ok, read = judge(a, it.question, "strict", it.tracker)
        correct += ok
        reads[read] += 1
    n = len(items)
    fields: dict[str, Any] = {
        "target": spec, "questions": n, "stories": len({it.text for it in items}),
        "seconds": f"{wall:.2f}", "questions_per_s": f"{n / wall:.1f}"}
    if spec.startswith("hf:"):  # the other backends work in processes of their own
        fields["cpu_questions_per_s"] = f"{n / cpu:.1f}"
        fields["share_prefixes"] = str(share_prefixes).lower()
    else:
        fields["startup_s"] = f"{startup:.0f}"
    fields.update({
        "accuracy": f"{correct / n:.4f}", "read_tag": f"{reads['tag'] / n:.3f}",
        "read_fallback": f"{reads['fallback'] / n:.3f}", "unread": f"{reads['none'] / n:.3f}",
        "truncated": getattr(target, "ended", Counter())["truncated"],
        "omp_threads": torch.get_num_threads(), "load_average": f"{load:.1f}"})
    return " ".join(f"{k}={v}" for k, v in fields.items())


def runs(targets: list[str], plain: bool, compare: bool) -> list[tuple[str, bool | None]]:
    """(target, share_prefixes) in the order they run: hf targets with prefix sharing unless
    --plain, and with --compare also without it."""
    out: list[tuple[str, bool | None]] = []
    for t in targets:
        if not t.startswith("hf:"):
            out.append((t, None))
        elif compare:
            out += [(t, False), (t, True)]
        else:
            out.append((t, not plain))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--target", action="append", required=True,
                   help="hf:PATH, vllm:PATH or served:PATH (repeatable: each runs on the same "
                        "questions, in turn)")
    p.add_argument("-n", type=positive_int, default=2000, help="questions (default 2000)")
    p.add_argument("--world", default=DEMO_WORLD,
                   help=f"a run YAML whose grid and lexicon the stories use (default {DEMO_WORLD}"
                        "; '' for the paper's grid)")
    p.add_argument("--orders", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--prompt", choices=PROMPTS, default="row",
                   help="row (the project's trained models) or paper (its short-answer prompt)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="hf batch size")
    p.add_argument("--seed", type=int, default=0)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--plain", action="store_true", help="hf without prefix sharing")
    how.add_argument("--compare", action="store_true",
                     help="hf also without prefix sharing; exit 1 unless every run's answers "
                          "are those of the first")
    args = p.parse_args(argv)
    for t in args.target:
        if t.partition(":")[0] not in LOCAL_KINDS:
            p.error(f"--target {t!r}: expected hf:PATH, vllm:PATH or served:PATH")
        try:  # a missing model folder, or vLLM not here: one line before anything runs
            check_target(t, parse_target(t))
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    items = bench_items(args.n, args.world or None, tuple(args.orders), args.seed)
    first: list[str] | None = None
    differ = False
    for spec, share in runs(args.target, args.plain, args.compare):
        load = os.getloadavg()[0]
        started = time.perf_counter()
        target_spec = parse_target(spec, batch_size=args.batch_size, prompt=args.prompt)
        if share is not None:
            target_spec["share_prefixes"] = share
        with make_target(target_spec) as target:
            startup = time.perf_counter() - started
            answers, wall, cpu = timed(target, items)
            print(run_line(spec, target, items, answers, wall, cpu, startup, share, load), flush=True)
        if first is None:
            first = answers
            continue
        same = sum(a == b for a, b in zip(answers, first))
        differ |= same < len(items)
        print(f"same_answers={same}/{len(items)}", flush=True)
    return 1 if args.compare and differ else 0


if __name__ == "__main__":
    sys.exit(main())
