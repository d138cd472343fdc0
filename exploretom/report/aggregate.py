"""Every number of the search report, as plain data (`aggregate`; also written to report.json):
counts per method and target, table 1, table 6 and the A* vs baseline comparison per setting."""
from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

from eval.benchmarks.base import mean
from exploretom.report.runs import ASTAR, BASELINE, SETTING_KEYS, RunStory
from exploretom.sampling.action_sets import ACTION_SETS

@dataclass
class Tally:
    correct: int = 0
    total: int = 0

    def add(self, ok: bool) -> None:
        self.correct += bool(ok)
        self.total += 1

    @property
    def acc(self) -> float | None:
        return self.correct / self.total if self.total else None




def _method_order(m: str) -> tuple:
    return ({ASTAR: 0, BASELINE: 1}.get(m, 2), m)


def _set_order(name: str) -> tuple:
    names = list(ACTION_SETS)
    return (names.index(name) if name in names else len(names), name)


def aggregate(stories: Sequence[RunStory], orders: set[int] | None) -> dict[str, Any]:
    """All the report's numbers, as plain data (also written to report.json)."""
    methods = sorted({s.method for s in stories}, key=_method_order)
    targets = sorted({s.target for s in stories})
    use = (lambda o: True) if orders is None else (lambda o: o in orders)

    # (method, target, action set, asym) -> tallies: all, interesting, not interesting
    cells: dict[tuple, dict[str, Tally]] = defaultdict(lambda: {"all": Tally(), "int": Tally(),
                                                               "non": Tally()})
    per_setting: dict[tuple, Tally] = defaultdict(Tally)  # (method, target, setting)
    actions_per_setting: dict[tuple, list[int]] = defaultdict(list)
    runs: dict[tuple, dict[str, Any]] = {}
    for s in stories:
        cell = cells[(s.method, s.target, s.action_set, s.asymmetric)]
        r = runs.setdefault((s.method, s.target), {
            "stories": 0, "found": 0, "evaluations": 0, "actions": 0, "search_accuracy": 0.0,
            "selected": Tally(), "every": Tally()})
        r["stories"] += 1
        r["found"] += s.found
        r["evaluations"] += s.evaluations
        r["actions"] += s.actions
        r["search_accuracy"] += s.accuracy
        actions_per_setting[(s.method, s.target, s.setting)].append(s.actions)
        per_setting[(s.method, s.target, s.setting)]  # a setting with no selected question
        for order, interesting, correct in s.questions:
            r["every"].add(correct)
            if not use(order):
                continue
            r["selected"].add(correct)
            cell["all"].add(correct)
            cell["int" if interesting else "non"].add(correct)
            per_setting[(s.method, s.target, s.setting)].add(correct)

    counts = []
    for (m, t), r in sorted(runs.items(), key=lambda kv: (_method_order(kv[0][0]), kv[0][1])):
        n = r["stories"]
        counts.append({
            "method": m, "target": t, "stories": n, "found": r["found"],
            "found_share": r["found"] / n, "evaluations": r["evaluations"],
            "evaluations_per_story": r["evaluations"] / n, "mean_actions": r["actions"] / n,
            "questions": r["selected"].total, "accuracy": r["selected"].acc,
            "accuracy_all_orders": r["every"].acc, "mean_search_accuracy": r["search_accuracy"] / n,
        })

    def table_cell(t: Tally) -> dict[str, Any]:
        return {"accuracy": t.acc, "correct": t.correct, "questions": t.total}

    table1, table6 = [], []
    for (m, t, a, asym), c in sorted(cells.items(), key=lambda kv: (
            _method_order(kv[0][0]), kv[0][1], _set_order(kv[0][2]), kv[0][3])):
        table1.append({"method": m, "target": t, "action_set": a, "asymmetric": asym,
                       **table_cell(c["all"])})
        table6.append({"method": m, "target": t, "action_set": a, "asymmetric": asym,
                       "interesting": table_cell(c["int"]), "not_interesting": table_cell(c["non"]),
                       "interesting_share": c["int"].total / c["all"].total if c["all"].total else None})

    comparison = []
    if ASTAR in methods and BASELINE in methods:
        for t in targets:
            pairs = []
            for key in sorted({k[2] for k in per_setting if k[1] == t}, key=str):
                a, b = per_setting.get((ASTAR, t, key)), per_setting.get((BASELINE, t, key))
                if a is None or b is None or a.acc is None or b.acc is None:
                    continue
                pairs.append({"setting": dict(zip(("action_set", "asymmetric", *SETTING_KEYS), key)),
                              "astar": a.acc, "baseline": b.acc,
                              "diff_points": 100 * (a.acc - b.acc),
                              "astar_actions": mean(actions_per_setting[(ASTAR, t, key)],
                                                    empty=None),
                              "baseline_actions": mean(actions_per_setting[(BASELINE, t, key)],
                                                       empty=None)})
            diffs = [p["diff_points"] for p in pairs]
            comparison.append({
                "target": t, "settings": len(pairs), "pairs": pairs,
                "mean_diff_points": mean(diffs, empty=None),
                "median_diff_points": statistics.median(diffs) if diffs else None,
                "astar_lower": sum(d < 0 for d in diffs), "astar_higher": sum(d > 0 for d in diffs),
                "mean_actions_astar": mean((p["astar_actions"] for p in pairs), empty=None),
                "mean_actions_baseline": mean((p["baseline_actions"] for p in pairs), empty=None),
            })
    return {"orders": sorted(orders) if orders is not None else None, "methods": methods,
            "targets": targets, "counts": counts, "table1": table1, "table6": table6,
            "comparison": comparison}
