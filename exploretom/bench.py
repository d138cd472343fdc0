"""Throughput of sample + label, per action set (a benchmark script, not a test).

    python -m exploretom.bench [-n 1000] [--people 3 --moves 3 --rooms 2 --max-actions 12]

Prints stories/s for each action set with asymmetry, single process, orders 0-2, including
JSON serialisation of the labelled story (what `sample --label` writes).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time

from eval.cli_common import positive_int
from exploretom.cli_args import sample_one
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.sampler import sampler_name


def bench(action_set: str, n: int, args) -> dict:
    cond = Conditions(action_set, args.people, args.moves, args.rooms, args.max_actions,
                      asymmetric=not args.symmetric)
    start = time.perf_counter()
    actions = questions = size = 0
    for k in range(n):
        story = sample_one(cond, args.seed, k, label=True, max_order=args.max_order,
                           steered=not args.unsteered, constrained=not args.unconstrained)
        size += len(json.dumps(story))
        actions += len(story["actions"])
        questions += len(story["questions"])
    secs = time.perf_counter() - start
    return {"set": action_set, "stories_per_s": n / secs, "actions": actions / n,
            "questions": questions / n, "kb": size / n / 1024}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("-n", type=positive_int, default=1000)
    p.add_argument("--people", type=int, default=3)
    p.add_argument("--moves", type=int, default=3)
    p.add_argument("--rooms", type=int, default=2)
    p.add_argument("--max-actions", type=int, default=12)
    p.add_argument("--max-order", type=int, default=2)
    p.add_argument("--symmetric", action="store_true", help="without asymmetry")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sets", nargs="*", default=list(ACTION_SETS))
    p.add_argument("--unsteered", action="store_true", help="as `sample --unsteered`")
    p.add_argument("--unconstrained", action="store_true", help="as `sample --unconstrained`")
    args = p.parse_args()
    print(f"# sample + label, {args.people} people, {args.moves} moves, {args.rooms} rooms, "
          f"<= {args.max_actions} actions, orders 0-{args.max_order}, "
          f"{'symmetric' if args.symmetric else 'asymmetric'}, n={args.n}, "
          f"{sampler_name(not args.unsteered, not args.unconstrained)} sampler, "
          f"python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'set':<6} {'stories/s':>10} {'actions':>8} {'questions':>10} {'KB/story':>9}")
    for name in args.sets:
        r = bench(name, args.n, args)
        print(f"{r['set']:<6} {r['stories_per_s']:>10.0f} {r['actions']:>8.1f} "
              f"{r['questions']:>10.1f} {r['kb']:>9.1f}")


if __name__ == "__main__":
    main()
