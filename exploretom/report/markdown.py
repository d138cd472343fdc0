"""report.md from the report's numbers: counts, tables 1 and 6 per method, the A* vs baseline
comparison, and links to the figures."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from exploretom.datasets.stories import ReadCounts
from exploretom.report.aggregate import _set_order
from exploretom.report.runs import METHOD_NAMES
from exploretom.sampling.action_sets import ACTION_SETS

YES, NO = "\u2713", "\u2717"  # asymmetry columns, as in the paper (check / cross)
DASH = "\u2013"



def _fmt(x: float | None, digits: int = 2) -> str:
    return DASH if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return DASH if x is None else f"{x:.0%}"


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _set_label(name: str) -> str:
    s = ACTION_SETS.get(name)
    return f"{name}: {s.description}" if s else name


def _orders_text(orders: list[int] | None) -> str:
    if orders is None:
        return "all questions"
    if orders == [1]:
        return "first-order belief questions"
    return "questions of order " + ", ".join(map(str, orders))


def _table1(data: dict[str, Any], method: str) -> list[str]:
    rows = [r for r in data["table1"] if r["method"] == method]
    cols = sorted({(r["target"], r["asymmetric"]) for r in rows})
    sets = sorted({r["action_set"] for r in rows}, key=_set_order)
    by = {(r["target"], r["asymmetric"], r["action_set"]): r for r in rows}
    lowest = {}
    for t in {c[0] for c in cols}:
        accs = [r["accuracy"] for r in rows if r["target"] == t and r["accuracy"] is not None]
        lowest[t] = min(accs) if accs else None
    body = []
    for a in sets:
        line = [_set_label(a)]
        for t, asym in cols:
            r = by.get((t, asym, a))
            if r is None or r["accuracy"] is None:
                line.append(DASH)
                continue
            cell = f"{r['accuracy']:.2f} ({r['questions']})"
            line.append(f"**{cell}**" if r["accuracy"] == lowest[t] else cell)
        body.append(line)
    return _table(["action set", *(f"{t} {YES if asym else NO}" for t, asym in cols)], body)


def _table6(data: dict[str, Any], method: str) -> list[str]:
    rows = [r for r in data["table6"] if r["method"] == method]
    targets = sorted({r["target"] for r in rows})
    keys = sorted({(r["action_set"], r["asymmetric"]) for r in rows},
                  key=lambda k: (_set_order(k[0]), k[1]))
    by = {(r["target"], r["action_set"], r["asymmetric"]): r for r in rows}
    header = ["action set", "asymmetry"]
    for t in targets:
        header += [f"{t} acc. int.", f"{t} acc. \u00acint.", f"{t} % int."]
    body = []
    for a, asym in keys:
        line = [a, YES if asym else NO]
        for t in targets:
            r = by.get((t, a, asym))
            if r is None:
                line += [DASH] * 3
            else:
                line += [_fmt(r["interesting"]["accuracy"]), _fmt(r["not_interesting"]["accuracy"]),
                         _pct(r["interesting_share"])]
        body.append(line)
    total = ["total", DASH]
    for t in targets:
        rs = [r for r in rows if r["target"] == t]
        ci = sum(r["interesting"]["correct"] for r in rs)
        ni = sum(r["interesting"]["questions"] for r in rs)
        cn = sum(r["not_interesting"]["correct"] for r in rs)
        nn = sum(r["not_interesting"]["questions"] for r in rs)
        total += [_fmt(ci / ni if ni else None), _fmt(cn / nn if nn else None),
                  _pct(ni / (ni + nn) if ni + nn else None)]
    body.append(total)
    return _table(header, body)


def markdown(data: dict[str, Any], read: ReadCounts, images: dict[str, str]) -> str:
    what = _orders_text(data["orders"])
    lines = ["# ExploreToM search report", "",
             f"Inputs: {', '.join(f'`{p}` ({n} stories)' for p, n in read.per_file.items())}; "
             f"error lines skipped: {read.errors}. Accuracy is pooled over {what} "
             f"(correct / asked) unless a column says otherwise.", "", "## Counts", ""]
    lines += _table(
        ["method", "target", "stories", "goals found", "evaluations", "evaluations / story",
         "mean actions", "questions", "accuracy", "accuracy (all orders)",
         "mean search accuracy"],
        [[METHOD_NAMES.get(c["method"], c["method"]), c["target"], c["stories"],
          f"{c['found']} ({c['found_share']:.0%})", c["evaluations"],
          f"{c['evaluations_per_story']:.1f}", f"{c['mean_actions']:.1f}", c["questions"],
          _fmt(c["accuracy"], 3), _fmt(c["accuracy_all_orders"], 3),
          _fmt(c["mean_search_accuracy"], 3)] for c in data["counts"]])
    lines += ["", "*Mean search accuracy*: the mean over stories of the accuracy each search "
              "reported on the questions it scored.", ""]
    for m in data["methods"]:
        name = METHOD_NAMES.get(m, m)
        lines += [f"## Table 1: accuracy per action set, {name}", "",
                  f"Accuracy on {what} (questions in parentheses), per target model and "
                  f"without ({NO}) or with ({YES}) asymmetry modifiers (a secret witness or a "
                  f"distracted one). Lowest accuracy per target in bold.", ""]
        lines += _table1(data, m) + [""]
        lines += [f"## Table 6: interesting vs not interesting questions, {name}", "",
                  "A question is interesting when its answer changes with the person asked "
                  "about (it may need theory of mind); the others test state tracking.", ""]
        lines += _table6(data, m) + [""]
    if "table1" in images:
        lines += [f"![accuracy per action set]({images['table1']})", ""]
    lines += ["## A* vs baseline", ""]
    if not data["comparison"]:
        present = ", ".join(METHOD_NAMES.get(m, m) for m in data["methods"])
        lines += [f"Needs runs of both `astar` and `baseline`; these inputs have only: {present}.", ""]
        return "\n".join(lines)
    lines += [f"Per setting (action set, asymmetry, people, important actions, rooms, maximum "
              f"actions) present for both methods: accuracy of A* minus accuracy of the baseline "
              f"on {what}, in points. Negative values mean A* found harder stories.", ""]
    lines += _table(
        ["target", "settings", "mean diff (points)", "median diff", "A* lower", "A* higher",
         "mean actions A*", "mean actions baseline"],
        [[c["target"], c["settings"], _fmt(c["mean_diff_points"], 1),
          _fmt(c["median_diff_points"], 1), c["astar_lower"], c["astar_higher"],
          _fmt(c["mean_actions_astar"], 1), _fmt(c["mean_actions_baseline"], 1)]
         for c in data["comparison"]])
    if "fig6" in images:
        lines += ["", f"![A* minus baseline accuracy per setting]({images['fig6']})"]
    lines.append("")
    return "\n".join(lines)
