"""A* search for story structures a target gets wrong (paper 2.2.3), and the
overgenerate-and-filter baseline at the same evaluation budget.

Nodes are story prefixes; an edge adds `grouping` (k) random valid actions. A node's cost is
f(s) = g(s) + h(s) with
  g(s) = the target's accuracy on the node's questions of the chosen orders (1 with none),
  h(s) = alpha * (1 - share of `continuations` random continuations of s meeting isDesired).
Expanding a node evaluates a limited number of its neighbours, closest to isDesired first;
promising nodes (lower f) get more. Every target evaluation of a node costs one unit of the
per-story budget; evaluations are cached by story. A goal meets isDesired and has at least
one wrong answer.
"""
from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

from exploretom.action_sets import Conditions, distance_to_desired
from exploretom.label import story_text
from exploretom.lexicon import Context
from exploretom.questions import generate_questions
from exploretom.sampler import Progress, StorySampler
from exploretom.targets import Item, Target, is_correct
from exploretom.tracker import Tracker


@dataclass(frozen=True)
class SearchConfig:
    grouping: int = 3  # k: actions added per edge
    budget: int = 50  # target evaluations of nodes per story
    alpha: float = 0.1
    continuations: int = 50  # P
    orders: tuple[int, ...] = (1,)  # question orders g(s) is computed on
    interesting_only: bool = False
    neighbours: int = 3  # neighbours evaluated when expanding a node of f = 1
    max_neighbours: int = 6  # ... and of f = 0
    oversample: int = 3  # candidates drawn per neighbour slot, ranked by closeness
    scoring: str = "strict"
    max_order: int = 2
    rank_by_distance: bool = True
    anytime: bool = True  # spend the whole budget and keep the hardest goal (else stop at the
    # first goal popped, as textbook A*)
    expand_desired: bool = False  # expand nodes that already meet isDesired
    revisit_penalty: float = 0.1  # added to f each time a node has been expanded
    max_expansions_per_evaluation: int = 10

    def __post_init__(self) -> None:
        for name in ("grouping", "budget", "continuations", "neighbours", "oversample"):
            if getattr(self, name) < 1:
                raise ValueError(f"search.{name} must be >= 1, got {getattr(self, name)}")
        if not 0 <= self.alpha <= 1:
            raise ValueError(f"search.alpha must be in [0, 1], got {self.alpha}")
        if self.max_neighbours < self.neighbours:
            raise ValueError("search.max_neighbours must be >= search.neighbours")
        if not self.orders or min(self.orders) < 0 or max(self.orders) > self.max_order:
            raise ValueError(f"search.orders must lie in 0..{self.max_order}, got {self.orders}")
        if self.scoring not in ("strict", "lenient"):
            raise ValueError(f"search.scoring must be strict or lenient, got {self.scoring!r}")


@dataclass
class Node:
    tracker: Tracker
    g: float = 1.0
    h: float = 0.0
    wrong: int = 0
    scored: int = 0
    desired: bool = False
    expansions: int = 0

    @property
    def f(self) -> float:
        return self.g + self.h

    @property
    def goal(self) -> bool:
        return self.desired and self.wrong > 0

    @property
    def key(self) -> tuple:
        return tuple(self.tracker.actions)


@dataclass
class SearchResult:
    tracker: Tracker | None
    found: bool  # a goal story (desired, at least one wrong answer)
    evaluations: int
    accuracy: float  # g of the returned story
    nodes_expanded: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


class Evaluator:
    """Scores nodes with the target, all questions of a batch of nodes in one call, cached."""

    def __init__(self, target: Target, cfg: SearchConfig) -> None:
        self.target, self.cfg = target, cfg
        self.cache: dict[tuple, tuple[int, int]] = {}
        self.calls = 0  # evaluations charged (cache misses)

    def scored_questions(self, t: Tracker) -> list[dict[str, Any]]:
        return [q for q in generate_questions(t) if q["order"] in self.cfg.orders
                and (q["interesting"] or not self.cfg.interesting_only)]

    def evaluate(self, nodes: Sequence[Node]) -> None:
        todo = [n for n in nodes if n.key not in self.cache]
        items, owners = [], []
        for n in {n.key: n for n in todo}.values():
            text = story_text(n.tracker)
            questions = self.scored_questions(n.tracker)
            for q in questions:
                items.append(Item(n.tracker, text, q))
                owners.append(n.key)
            self.cache[n.key] = (0, 0)
            self.calls += bool(questions)  # a node with nothing to ask costs no evaluation
        responses = self.target.answer(items) if items else []
        for key, item, response in zip(owners, items, responses):
            wrong, scored = self.cache[key]
            ok = is_correct(response, item.question, self.cfg.scoring)
            self.cache[key] = (wrong + (not ok), scored + 1)
        for n in nodes:
            n.wrong, n.scored = self.cache[n.key]
            n.g = 1.0 - n.wrong / n.scored if n.scored else 1.0


class AStarSearch:
    def __init__(self, cond: Conditions, context: Context, target: Target, cfg: SearchConfig,
                 rng: random.Random) -> None:
        self.cond, self.cfg, self.rng = cond, cfg, rng
        self.sampler = StorySampler(cond, context, rng, cfg.max_order)
        self.evaluator = Evaluator(target, cfg)

    def heuristic(self, node: Node) -> float:
        if node.desired:
            return 0.0
        hits = sum(self.sampler.walk(node.tracker) is not None
                   for _ in range(self.cfg.continuations))
        return self.cfg.alpha * (1.0 - hits / self.cfg.continuations)

    def _neighbours(self, node: Node) -> list[Node]:
        """One random group of up to k actions after `node`; a story that meets isDesired
        part-way through the group is offered as well, so goals need not be k actions apart."""
        t = node.tracker.copy()
        prog = Progress.of(t.actions)
        out = []
        for j in range(self.cfg.grouping):
            if len(t.actions) >= self.cond.max_actions or self.sampler.step(t, prog) is None:
                break
            desired = self.cond.is_desired(t.actions)
            if desired or j == self.cfg.grouping - 1:
                out.append(Node(t.copy() if j < self.cfg.grouping - 1 else t, desired=desired))
        if not out and len(t.actions) > len(node.tracker.actions):
            out.append(Node(t, desired=self.cond.is_desired(t.actions)))
        return out

    def neighbours(self, node: Node, count: int) -> list[Node]:
        """`count` distinct neighbours among oversampled ones, those that can still meet
        isDesired within the action budget first, closest first when `rank_by_distance`."""
        seen: dict[tuple, Node] = {}
        for _ in range(count * self.cfg.oversample):
            for n in self._neighbours(node):
                seen.setdefault(n.key, n)

        def key(n: Node) -> tuple[bool, int]:
            d = distance_to_desired(self.cond, n.tracker.actions)
            feasible = d <= self.cond.max_actions - len(n.key)
            return (not feasible, d if self.cfg.rank_by_distance else 0)

        return sorted(seen.values(), key=key)[:count]

    def budget_for(self, node: Node) -> int:
        promise = max(0.0, min(1.0, 1.0 - node.f))  # f = 0 best, f >= 1 worst
        cfg = self.cfg
        return cfg.neighbours + round((cfg.max_neighbours - cfg.neighbours) * promise)

    def run(self) -> SearchResult:
        root = Node(Tracker(self.cfg.max_order))
        ticket = itertools.count()
        frontier = [(root.f, next(ticket), root)]
        evaluated: list[Node] = []
        seen: set[tuple] = {root.key}
        expanded = 0
        # Expansions that ask nothing are free, so cap them too.
        while (frontier and self.evaluator.calls < self.cfg.budget
               and expanded < self.cfg.budget * self.cfg.max_expansions_per_evaluation):
            _, _, node = heapq.heappop(frontier)
            if node.goal and not self.cfg.anytime:
                return self._result(node, True, expanded)
            if node.desired and not self.cfg.expand_desired and node is not root:
                continue
            expanded += 1
            room = self.cfg.budget - self.evaluator.calls
            children = [c for c in self.neighbours(node, min(self.budget_for(node), room))
                        if c.key not in seen]
            self.evaluator.evaluate(children)
            for child in children:
                seen.add(child.key)
                child.h = self.heuristic(child)
                evaluated.append(child)
                heapq.heappush(frontier, (child.f, next(ticket), child))
            # A node has far more neighbours than one expansion samples: it goes back on the
            # frontier, a little more costly each time, to be expanded again if still best.
            node.expansions += 1
            heapq.heappush(frontier, (node.f + self.cfg.revisit_penalty * node.expansions,
                                      next(ticket), node))
        goals = [n for n in evaluated if n.goal]
        if goals:
            return self._result(min(goals, key=lambda n: (n.g, len(n.key))), True, expanded)
        desired = [n for n in evaluated if n.desired]
        if desired:
            return self._result(min(desired, key=lambda n: n.g), False, expanded)
        return SearchResult(None, False, self.evaluator.calls, 1.0, expanded)

    def _result(self, node: Node, found: bool, expanded: int) -> SearchResult:
        return SearchResult(node.tracker, found, self.evaluator.calls, node.g, expanded)


def overgenerate_and_filter(cond: Conditions, context: Context, target: Target,
                            cfg: SearchConfig, rng: random.Random) -> SearchResult:
    """The baseline: `budget` random stories meeting isDesired, scored in one batch; keep the
    hardest (a goal when any story has a wrong answer)."""
    sampler = StorySampler(cond, context, rng, cfg.max_order)
    evaluator = Evaluator(target, cfg)
    nodes = [Node(t, desired=True) for t in sampler.walks(cfg.budget)]
    if not nodes:
        return SearchResult(None, False, 0, 1.0)
    evaluator.evaluate(nodes)
    best = min(nodes, key=lambda n: (n.g, len(n.key)))
    return SearchResult(best.tracker, best.goal, evaluator.calls, best.g)


def score_all(t: Tracker, target: Target, scoring: str = "strict") -> list[dict[str, Any]]:
    """Every question of a finished story with the target's response and correctness."""
    text = story_text(t)
    questions = generate_questions(t)
    responses = target.answer([Item(t, text, q) for q in questions])
    return [{**q, "response": r, "correct": is_correct(r, q, scoring)}
            for q, r in zip(questions, responses)]
