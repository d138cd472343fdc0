"""A* search for story structures a target gets wrong (paper 2.2.3), and the
overgenerate-and-filter baseline at the same evaluation budget.

Nodes are story prefixes; an edge adds `grouping` (k) random valid actions. A node's cost is
f(s) = g(s) + h(s) with
  g(s) = the target's accuracy on the node's questions of the chosen orders (1 with none),
  h(s) = alpha * (1 - share of `continuations` random continuations of s meeting isDesired).
Every target evaluation of a node costs one unit of the budget; evaluations are cached by
story. A goal meets isDesired and has at least one wrong answer.

How a node is expanded is the `policy`:
- `paper`: a number of neighbours that grows as f falls (`neighbours`..`max_neighbours`),
  closest to isDesired first; an expanded node goes back on the frontier, a little costlier.
- `by_g` (default): 5 / 3 / 1 neighbours when g <= 0.5 / <= 0.75 / higher (`g_neighbours`,
  `g_thresholds`; the root gets the most), each node expanded once, neighbours drawn in random
  order weighted by their progress towards isDesired; no first-level branch may spend more
  than `branch_share` of the budget, so the search keeps its breadth.
With `complete: true` every node is a complete story meeting isDesired (so every evaluation is
a story the search can return): the root's neighbours are random stories, and a story's
neighbours keep a random prefix of it and walk on to a new complete story, so the search
branches from the hardest complete stories found so far.

`search_pool` restarts the search as often as a pooled budget allows and returns every
story meeting isDesired it scored (the paper's variant: the one story each run returns).
"""
from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

from exploretom.sampling.action_sets import Conditions, distance_to_desired
from exploretom.sampling.lexicon import Context
from exploretom.sampling.sampler import Progress, StorySampler
from exploretom.search.targets import Item, Target, judge
from exploretom.semantics.label import story_text
from exploretom.semantics.questions import generate_questions
from exploretom.semantics.tracker import Tracker


POLICIES = ("by_g", "paper")


def _setting(default: Any, text: str) -> Any:
    """A search setting with its help (what `bench-search --help` prints)."""
    return field(default=default, metadata={"help": text})


@dataclass(frozen=True)
class SearchConfig:
    grouping: int = _setting(3, "k: actions added per edge")
    budget: int = _setting(50, "target evaluations of nodes per story")
    alpha: float = _setting(0.1, "weight of h(s), the share of random continuations that miss isDesired")
    continuations: int = _setting(50, "P: random continuations h(s) is estimated from")
    orders: tuple[int, ...] = _setting((1,), "question orders g(s) is computed on")
    interesting_only: bool = _setting(False, "g(s) counts only the interesting questions")
    neighbours: int = _setting(3, "paper policy: neighbours evaluated when expanding a node of f = 1")
    max_neighbours: int = _setting(6, "paper policy: ... and of f = 0")
    oversample: int = _setting(3, "candidates drawn per neighbour slot, ranked by closeness")
    scoring: str = _setting("strict", "how an answer is judged: strict (the answer read as the "
                            "project reads it) or lenient (the paper's substring rule)")
    max_order: int = _setting(2, "highest belief order asked")
    rank_by_distance: bool = _setting(True, "paper policy: neighbours closest to isDesired first")
    anytime: bool = _setting(True, "spend the whole budget and keep the hardest goal (false: stop "
                             "at the first goal popped, as textbook A*)")
    expand_desired: bool = _setting(False, "expand nodes that already meet isDesired")
    revisit_penalty: float = _setting(0.1, "paper policy: added to f each time a node has been "
                                      "expanded")
    max_expansions_per_evaluation: int = _setting(10, "cap on expansions per unit of budget "
                                                  "(expansions that ask nothing are free)")
    policy: str = _setting("by_g", "how a node is expanded: by_g or paper")
    g_thresholds: tuple[float, ...] = _setting((0.5, 0.75), "by_g: the g bounds of the "
                                               "neighbour counts")
    g_neighbours: tuple[int, ...] = _setting((5, 3, 1), "by_g: neighbours per g band (one more "
                                             "than the thresholds)")
    branch_share: float = _setting(0.5, "by_g: most of the budget one first-level branch may "
                                   "spend")
    complete: bool = _setting(False, "nodes are complete stories; branch from the hardest")
    # a real model's rambling answers drew the complete-story search towards them:
    # docs/exploretom-search.md, issue 31
    unreadable: str = _setting("wrong", "an answer nobody can read: wrong counts it as a mistake "
                               "in g (a story is hard when the target rambles as much as when it "
                               "errs), skip leaves it out of g, so the search looks for stories "
                               "the target answers readably and wrongly")

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
        if self.policy not in POLICIES:
            raise ValueError(f"search.policy must be one of {', '.join(POLICIES)}, got "
                             f"{self.policy!r}")
        if len(self.g_neighbours) != len(self.g_thresholds) + 1 or min(self.g_neighbours) < 1:
            raise ValueError("search.g_neighbours must hold one count >= 1 more than "
                             "search.g_thresholds has thresholds")
        if list(self.g_thresholds) != sorted(self.g_thresholds):
            raise ValueError("search.g_thresholds must be increasing")
        if not 0 < self.branch_share <= 1:
            raise ValueError(f"search.branch_share must be in (0, 1], got {self.branch_share}")
        if self.complete and self.policy == "paper":
            raise ValueError("search.complete needs policy by_g")
        if self.unreadable not in ("wrong", "skip"):
            raise ValueError(f"search.unreadable must be wrong or skip, got {self.unreadable!r}")


@dataclass
class Node:
    tracker: Tracker
    g: float = 1.0
    h: float = 0.0
    wrong: int = 0
    scored: int = 0
    desired: bool = False
    expansions: int = 0
    branch: int = -1  # which child of the root this node descends from

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
    candidates: list[Node] = field(default_factory=list)  # scored stories meeting isDesired


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
        """g of every node; TargetError (nothing cached or charged) when the target fails."""
        todo = {n.key: n for n in nodes if n.key not in self.cache}
        items, owners, asked = [], [], {}
        for key, n in todo.items():
            text = story_text(n.tracker)
            questions = self.scored_questions(n.tracker)
            for q in questions:
                items.append(Item(n.tracker, text, q))
                owners.append(key)
            asked[key] = bool(questions)
        responses = self.target.answer(items) if items else []
        tally = {key: [0, 0] for key in todo}
        for key, item, response in zip(owners, items, responses):
            correct, read = judge(response, item.question, self.cfg.scoring, item.tracker)
            if read == "none" and self.cfg.unreadable == "skip":
                continue
            tally[key][0] += not correct
            tally[key][1] += 1
        for key, (wrong, scored) in tally.items():
            self.cache[key] = (wrong, scored)
            self.calls += asked[key]  # a node with nothing to ask costs no evaluation
        for n in nodes:
            n.wrong, n.scored = self.cache[n.key]
            n.g = 1.0 - n.wrong / n.scored if n.scored else 1.0


class AStarSearch:
    def __init__(self, cond: Conditions, context: Context, target: Target, cfg: SearchConfig,
                 rng: random.Random, evaluator: Evaluator | None = None) -> None:
        self.cond, self.cfg, self.rng = cond, cfg, rng
        self.sampler = StorySampler(cond, context, rng, cfg.max_order)
        self.evaluator = evaluator or Evaluator(target, cfg)

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

    def _completions(self, node: Node) -> list[Node]:
        """complete mode: a new complete story that keeps a random prefix of `node` (from the
        root: a random story)."""
        actions = node.tracker.actions
        start = Tracker(self.cfg.max_order)
        if len(actions) >= 2:
            cut = self.rng.randrange(1, len(actions))  # keep 1..n-1 actions
            prefix = Tracker(self.cfg.max_order)
            for a in actions[:cut]:
                prefix.apply(a)
            start = prefix
        t = self.sampler.walk(start)
        return [Node(t, desired=True)] if t is not None else []

    def neighbours(self, node: Node, count: int) -> list[Node]:
        """`count` distinct neighbours among oversampled ones, those that can still meet
        isDesired within the action budget first; then closest first (`paper` with
        `rank_by_distance`) or in random order weighted by progress (`by_g`)."""
        seen: dict[tuple, Node] = {}
        sample = self._completions if self.cfg.complete else self._neighbours
        for _ in range(count * self.cfg.oversample):
            for n in sample(node):
                seen.setdefault(n.key, n)
        distance = {k: distance_to_desired(self.cond, n.tracker.actions) for k, n in seen.items()}

        def feasible(n: Node) -> bool:
            return distance[n.key] <= self.cond.max_actions - len(n.key)

        if self.cfg.policy == "paper":
            return sorted(seen.values(), key=lambda n: (
                not feasible(n), distance[n.key] if self.cfg.rank_by_distance else 0))[:count]
        out: list[Node] = []
        for group in ([n for n in seen.values() if feasible(n)],
                      [n for n in seen.values() if not feasible(n)]):
            # Efraimidis-Spirakis: weighted random order without replacement
            keyed = sorted(group, key=lambda n: -self.rng.random() ** (1 + distance[n.key]))
            out += keyed[:count - len(out)]
        return out

    def budget_for(self, node: Node) -> int:
        cfg = self.cfg
        if cfg.policy == "by_g":
            if not node.key:  # the root: as wide as the policy goes
                return max(cfg.g_neighbours)
            return next((k for th, k in zip(cfg.g_thresholds, cfg.g_neighbours) if node.g <= th),
                        cfg.g_neighbours[-1])
        promise = max(0.0, min(1.0, 1.0 - node.f))  # f = 0 best, f >= 1 worst
        return cfg.neighbours + round((cfg.max_neighbours - cfg.neighbours) * promise)

    def run(self, budget: int | None = None) -> SearchResult:
        """One search spending at most `budget` (default: the config's) new evaluations."""
        budget = self.cfg.budget if budget is None else budget
        start = self.evaluator.calls
        paper = self.cfg.policy == "paper"
        root = Node(Tracker(self.cfg.max_order))
        ticket = itertools.count()
        frontier = [(root.f, next(ticket), root)]
        evaluated: list[Node] = []
        seen: set[tuple] = {root.key}
        branch_spent: dict[int, int] = {}
        branch_cap = max(1, int(self.cfg.branch_share * budget))
        expanded = 0

        def spent() -> int:
            return self.evaluator.calls - start

        # Expansions that ask nothing are free, so cap them too.
        while (frontier and spent() < budget
               and expanded < budget * self.cfg.max_expansions_per_evaluation):
            _, _, node = heapq.heappop(frontier)
            if node.goal and not self.cfg.anytime:
                return self._result(node, True, expanded, evaluated)
            if node.desired and not (self.cfg.expand_desired or self.cfg.complete) \
                    and node is not root:
                continue
            if not paper and node is not root and branch_spent.get(node.branch, 0) >= branch_cap:
                continue  # this branch has had its share: breadth first
            expanded += 1
            room = budget - spent()
            if not paper and node is not root:
                room = min(room, branch_cap - branch_spent.get(node.branch, 0))
            children = [c for c in self.neighbours(node, min(self.budget_for(node), room))
                        if c.key not in seen]
            before = self.evaluator.calls
            self.evaluator.evaluate(children)
            for i, child in enumerate(children):
                seen.add(child.key)
                child.branch = next(ticket) if node is root else node.branch
                child.h = 0.0 if self.cfg.complete else self.heuristic(child)
                evaluated.append(child)
                heapq.heappush(frontier, (child.f, next(ticket), child))
            if node is not root:
                branch_spent[node.branch] = (branch_spent.get(node.branch, 0)
                                             + self.evaluator.calls - before)
            node.expansions += 1
            if paper or node is root:
                # A node has far more neighbours than one expansion samples: it goes back on the
                # frontier, a little more costly each time, to be expanded again if still best.
                heapq.heappush(frontier, (node.f + self.cfg.revisit_penalty * node.expansions,
                                          next(ticket), node))
        goals = [n for n in evaluated if n.goal]
        if goals:
            return self._result(min(goals, key=lambda n: (n.g, len(n.key))), True, expanded,
                                evaluated)
        desired = [n for n in evaluated if n.desired]
        if desired:
            return self._result(min(desired, key=lambda n: n.g), False, expanded, evaluated)
        return SearchResult(None, False, spent(), 1.0, expanded)

    def _result(self, node: Node, found: bool, expanded: int,
                evaluated: list[Node]) -> SearchResult:
        return SearchResult(node.tracker, found, self.evaluator.calls, node.g, expanded,
                            candidates=[n for n in evaluated if n.desired])


def search_pool(cond: Conditions, context: Context, target: Target, cfg: SearchConfig,
                rng: random.Random, pool: int) -> tuple[list[Node], int]:
    """Run the search again and again until `pool` evaluations are spent (each run at most
    `cfg.budget`); the scored stories meeting isDesired (by_g: every one; paper: the one each
    run returns), and the evaluations spent. Runs share one evaluation cache."""
    evaluator = Evaluator(target, cfg)
    found: dict[tuple, Node] = {}
    idle = 0
    while evaluator.calls < pool and idle < 3:
        before = evaluator.calls
        search = AStarSearch(cond, context, target, cfg, rng, evaluator)
        result = search.run(min(cfg.budget, pool - evaluator.calls))
        idle = idle + 1 if evaluator.calls == before else 0  # nothing left to find here
        if cfg.policy == "paper":
            if result.tracker is not None:
                node = next(n for n in result.candidates if n.tracker is result.tracker)
                found.setdefault(node.key, node)
        else:
            for n in result.candidates:
                found.setdefault(n.key, n)
    return list(found.values()), evaluator.calls


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
    return [scored_question(q, r, scoring, t) for q, r in zip(questions, responses)]


def scored_question(q: dict[str, Any], response: str, scoring: str,
                    t: Tracker) -> dict[str, Any]:
    """A question with the target's response, its correctness and how the answer was read."""
    correct, read = judge(response, q, scoring, t)
    return {**q, "response": response, "correct": correct, "read": read}
