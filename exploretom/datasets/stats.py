"""Counts over a labelled story file: stories per action set, questions per type and order,
interesting and false-belief rates per order (and per order and property)."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable


def story_stats(stories: Iterable[dict[str, Any]]) -> dict[str, Any]:
    n = errors = actions = tom_stories = 0
    by_set: Counter = Counter()
    by_type: Counter = Counter()
    by_order: Counter = Counter()
    flags: dict[Any, Counter] = defaultdict(Counter)  # per order: n, interesting, false_belief
    by_prop: dict[tuple, Counter] = defaultdict(Counter)  # per (order, property): the same
    for s in stories:
        if "error" in s:
            errors += 1
            continue
        n += 1
        actions += len(s.get("actions", []))
        by_set[s.get("action_set", "?") + ("+asym" if s.get("asymmetric") else "")] += 1
        # The paper's table 7: a story needs theory of mind when one of its first- or
        # second-order belief questions is interesting.
        tom_stories += any(q["interesting"] for q in s.get("questions", [])
                           if q["kind"] == "belief" and q["order"] in (1, 2))
        for q in s.get("questions", []):
            by_type[f"{q['kind']}/{q['property']}"] += 1
            by_order[q["order"]] += 1
            for counter in (flags[q["order"]], by_prop[(q["order"], q["property"])]):
                counter["n"] += 1
                counter["interesting"] += bool(q["interesting"])
                counter["false_belief"] += bool(q["false_belief"])
    total = sum(by_order.values())
    return {
        "stories": n, "errors": errors, "mean_actions": actions / n if n else 0.0,
        "stories_needing_tom": tom_stories / n if n else 0.0,
        "by_action_set": dict(sorted(by_set.items())),
        "questions": total,
        "by_type": dict(sorted(by_type.items())),
        "by_order": {o: _rates(flags[o]) for o in sorted(by_order)},
        "by_order_property": {f"{o} {p}": _rates(by_prop[(o, p)]) for o, p in sorted(by_prop)},
        "interesting_rate": sum(f["interesting"] for f in flags.values()) / total if total else 0,
        "false_belief_rate": sum(f["false_belief"] for f in flags.values()) / total if total else 0,
    }


def _rates(c: Counter) -> dict[str, Any]:
    return {"n": c["n"], "interesting": c["interesting"] / c["n"],
            "false_belief": c["false_belief"] / c["n"]}


def format_stats(st: dict[str, Any]) -> str:
    lines = [f"stories: {st['stories']}  (invalid: {st['errors']}, mean actions "
             f"{st['mean_actions']:.1f}; with an interesting order-1 or order-2 belief question: "
             f"{st['stories_needing_tom']:.1%})", "", "stories by action set:"]
    lines += [f"  {k:<12} {v:>7}" for k, v in st["by_action_set"].items()]
    lines += ["", f"questions: {st['questions']}  (interesting {st['interesting_rate']:.1%}, "
              f"false belief {st['false_belief_rate']:.1%})", "", "questions by type:"]
    lines += [f"  {k:<40} {v:>8}" for k, v in st["by_type"].items()]
    lines += ["", "questions by order:                      n   interesting  false belief"]
    lines += [f"  order {o:<25} {v['n']:>9}   {v['interesting']:>10.1%}  {v['false_belief']:>11.1%}"
              for o, v in st["by_order"].items()]
    lines += ["", "by order and property:"]
    lines += [f"  order {k:<25} {v['n']:>9}   {v['interesting']:>10.1%}  {v['false_belief']:>11.1%}"
              for k, v in st["by_order_property"].items()]
    return "\n".join(lines)
