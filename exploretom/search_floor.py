"""How hard can a story get for a scripted target, and how close does best-of-N come?

    python -m exploretom.search_floor --reasoner world [--orders 1] [-n 1000] [--people 3]

For one setting per action set, samples `n` random stories meeting the conditions, scores them
with the target and prints the mean accuracy, the mean of best-of-50 (what the baseline keeps at
the paper's budget) and the minimum over all n (the hardest story random sampling finds). When
best-of-50 is already close to that minimum, no search can beat the baseline by much.
"""
from __future__ import annotations

import argparse
import random
import statistics

from exploretom.action_sets import ACTION_SETS, Conditions
from exploretom.cli import positive_int
from exploretom.lexicon import sample_context
from exploretom.reasoners import REASONERS
from exploretom.sampler import StorySampler
from exploretom.search import Evaluator, Node, SearchConfig
from exploretom.targets import ReasonerTarget


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reasoner", default="world", choices=list(REASONERS))
    p.add_argument("--orders", type=int, nargs="+", default=[1])
    p.add_argument("-n", type=positive_int, default=1000)
    p.add_argument("--people", type=int, default=3)
    p.add_argument("--moves", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(f"# reasoner={args.reasoner} orders={args.orders} n={args.n} people={args.people} "
          f"moves={args.moves} rooms=2 max_actions=15")
    print(f"{'set':<5} {'mean':>6} {'best-of-50':>11} {'min':>6}")
    rows = []
    for k, name in enumerate(a for a in ACTION_SETS if a != "all"):
        rng = random.Random(f"{args.seed}:{name}")
        cond = Conditions(name, args.people, args.moves, 2, 15, asymmetric=k % 2 == 0)
        sampler = StorySampler(cond, sample_context(rng, cond.people, 2), rng)
        evaluator = Evaluator(ReasonerTarget(args.reasoner),
                              SearchConfig(budget=args.n, orders=tuple(args.orders)))
        nodes = []
        while len(nodes) < args.n:
            t = sampler.walk()
            if t is not None:
                nodes.append(Node(t, desired=True))
        evaluator.evaluate(nodes)
        g = [n.g for n in nodes]
        best50 = statistics.mean(min(g[i:i + 50]) for i in range(0, len(g) - 49, 50))
        rows.append((statistics.mean(g), best50, min(g)))
        print(f"{name:<5} {rows[-1][0]:>6.3f} {best50:>11.3f} {min(g):>6.3f}")
    print(f"{'mean':<5} " + " ".join(f"{statistics.mean(r[i] for r in rows):>{w}.3f}"
                                     for i, w in ((0, 6), (1, 11), (2, 6))))


if __name__ == "__main__":
    main()
