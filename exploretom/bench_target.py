"""Throughput of a local model as the search's target: questions answered per second.

    python -m exploretom.bench_target --model runs/demo/sft [-n 2000] [--batch-size 64]
        [--world configs/exploretom/demo.yaml] [--orders 0 1 2] [--plain] [--compare]

The questions are those `bench-search --target hf:PATH` asks: every question (of `--orders`) of
random stories meeting the conditions of the world's first 20 bench settings, sent to the target
in one call as the search sends them, with the row prompt and greedy answers of `parse_target`.
One warm-up call (a batch's worth) comes first, so loading and first-call costs are not counted.
Prints one line, e.g.

    target=hf:runs/demo/sft questions=2000 stories=150 seconds=3.96 questions_per_s=505
    cpu_questions_per_s=508 batch_size=64 share_prefixes=true omp_threads=1 load_average=2.1

`cpu_questions_per_s` divides by this process's CPU time: on a shared machine it says what the
target does with the core it got. `--plain` turns prefix sharing off (the hf backend's plain
path); `--compare` runs both and exits 1 unless every answer is the same.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from exploretom.cli_args import positive_int
from exploretom.label import story_text
from exploretom.questions import generate_questions
from exploretom.sampler import StorySampler
from exploretom.search_run import Grid, _lexicon, bench_settings, load_config, story_streams
from exploretom.targets import Item, Target, make_target, parse_target

DEMO_WORLD = "configs/exploretom/demo.yaml"


def bench_items(n: int, world: str | None, orders: tuple[int, ...], seed: int = 0) -> list[Item]:
    """The first `n` questions of `orders` about random stories of the world's bench settings
    (a story's questions together, stories round the settings)."""
    lexicon, grid = None, Grid()
    if world:
        run = load_config(world)
        lexicon, grid = _lexicon(world, run), run.grid
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


def model_target(model: str, batch_size: int, share_prefixes: bool) -> Target:
    spec = parse_target(f"hf:{model}", batch_size=batch_size)
    return make_target({**spec, "share_prefixes": share_prefixes})


def timed(target: Target, items: list[Item]) -> tuple[list[str], float, float]:
    """Answers, wall seconds and CPU seconds of one call, after a warm-up call."""
    target.answer(items[:32])
    wall, cpu = time.perf_counter(), time.process_time()
    answers = target.answer(items)
    return answers, time.perf_counter() - wall, time.process_time() - cpu


def report(model: str, items: list[Item], wall: float, cpu: float, batch_size: int,
           share_prefixes: bool, load: float) -> str:
    import torch

    fields: dict[str, Any] = {
        "target": f"hf:{model}", "questions": len(items),
        "stories": len({it.text for it in items}), "seconds": f"{wall:.2f}",
        "questions_per_s": f"{len(items) / wall:.0f}",
        "cpu_questions_per_s": f"{len(items) / cpu:.0f}", "batch_size": batch_size,
        "share_prefixes": str(share_prefixes).lower(), "omp_threads": torch.get_num_threads(),
        "load_average": f"{load:.1f}"}
    return " ".join(f"{k}={v}" for k, v in fields.items())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", required=True, help="a local model folder (an SFT checkpoint)")
    p.add_argument("-n", type=positive_int, default=2000, help="questions (default 2000)")
    p.add_argument("--world", default=DEMO_WORLD,
                   help=f"a run YAML whose grid and lexicon the stories use (default {DEMO_WORLD}"
                        "; '' for the paper's grid)")
    p.add_argument("--orders", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--batch-size", type=positive_int, default=64)
    p.add_argument("--seed", type=int, default=0)
    how = p.add_mutually_exclusive_group()
    how.add_argument("--plain", action="store_true", help="without prefix sharing")
    how.add_argument("--compare", action="store_true",
                     help="also the plain path; exit 1 unless the answers are the same")
    args = p.parse_args(argv)
    items = bench_items(args.n, args.world or None, tuple(args.orders), args.seed)
    runs = [False, True] if args.compare else [not args.plain]
    answers = {}
    for share in runs:
        load = os.getloadavg()[0]
        answers[share], wall, cpu = timed(model_target(args.model, args.batch_size, share), items)
        print(report(args.model, items, wall, cpu, args.batch_size, share, load), flush=True)
    if args.compare:
        same = sum(a == b for a, b in zip(answers[True], answers[False]))
        print(f"same_answers={same}/{len(items)}")
        return 0 if same == len(items) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
