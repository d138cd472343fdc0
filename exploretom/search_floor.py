"""How hard can a story get for a scripted target, and how close does best-of-50 come?

    python -m exploretom.search_floor --reasoner world [--settings 20] [-n 5000] [--seed 0]

On the settings and contexts that `bench-search` compares A* and the baseline on, samples `n`
random stories meeting the conditions per setting, scores them with the target and prints, per
setting and on average, the mean accuracy, the mean best-of-50 (what the baseline keeps at the
paper's budget, averaged over the n/50 blocks) and the minimum over all n. A search with 50
evaluations per story that ends `d` points below the baseline must, on average, find stories
about `d` points below best-of-50; where even the hardest of n random stories is not that far
below, the gap is out of reach for any search that draws its actions from the same sampler.
"""
from __future__ import annotations

import argparse
import statistics

from eval.cli_common import positive_int
from exploretom.sampling.sampler import StorySampler
from exploretom.search.astar import Evaluator, Node, SearchConfig
from exploretom.search.reasoners import REASONERS
from exploretom.search.run import bench_settings, setting_key, story_streams
from exploretom.search.targets import ReasonerTarget

BLOCK = SearchConfig().budget  # what the baseline spends per story (the paper: 50)


def floor(reasoner: str, settings: int, n: int, seed: int, orders: tuple[int, ...],
          quiet: bool = False) -> dict[str, float]:
    """Mean over the settings of (random-story accuracy, best-of-50, minimum of n)."""
    rows = []
    for k, cond in enumerate(bench_settings(settings, seed)):
        context, rng = story_streams(cond, seed, k)
        sampler = StorySampler(cond, context, rng)
        evaluator = Evaluator(ReasonerTarget(reasoner), SearchConfig(budget=n, orders=orders))
        nodes = [Node(t, desired=True) for t in sampler.walks(n)]
        evaluator.evaluate(nodes)
        g = [node.g for node in nodes]
        blocks = [min(g[i:i + BLOCK]) for i in range(0, len(g) - BLOCK + 1, BLOCK)] or [min(g)]
        rows.append((statistics.mean(g), statistics.mean(blocks), min(g)))
        if not quiet:
            print(f"{setting_key(cond):<24} {rows[-1][0]:>6.3f} {rows[-1][1]:>11.3f} "
                  f"{rows[-1][2]:>6.3f}", flush=True)
    return {name: statistics.mean(r[i] for r in rows)
            for i, name in enumerate(("mean", "best_of_50", "min"))}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reasoner", default="world", choices=list(REASONERS))
    p.add_argument("--settings", type=positive_int, default=20,
                   help="the first N settings bench-search uses (default 20)")
    p.add_argument("--orders", type=int, nargs="+", default=[1])
    p.add_argument("-n", type=positive_int, default=1000, help="random stories per setting")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"# reasoner={args.reasoner} settings={args.settings} n={args.n} "
          f"orders={','.join(map(str, args.orders))} seed={args.seed}")
    print(f"{'setting':<24} {'mean':>6} {'best-of-50':>11} {'min':>6}")
    avg = floor(args.reasoner, args.settings, args.n, args.seed, tuple(args.orders))
    print(f"{'mean':<24} {avg['mean']:>6.3f} {avg['best_of_50']:>11.3f} {avg['min']:>6.3f}")
    print(f"best_of_50={avg['best_of_50']:.4f} min_of_{args.n}={avg['min']:.4f} "
          f"gap={100 * (avg['best_of_50'] - avg['min']):.1f}")


if __name__ == "__main__":
    main()
