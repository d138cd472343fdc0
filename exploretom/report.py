"""`python -m exploretom report`: the paper's tables and figure from adversarial-search runs.

Input: search-run JSONL files (one labelled story per line plus `method`, `setting`, `target`,
`evaluations`, `found`, `accuracy`, and `correct` on every question). Output in DIR:
- `report.md`: counts per method and target; table 1 (accuracy per action set, columns target
  x asymmetry); table 6 (accuracy on interesting vs not interesting questions, % interesting);
  A* vs baseline per setting (figure 6's numbers, mean story length per method);
- `table1_accuracy.png` (table 1 as bars), `fig6_astar_vs_baseline.png` (histogram of per-setting
  accuracy differences, when both methods are present);
- `report.json`: every number of the report.

Accuracy is pooled over questions (correct / asked) of the chosen orders: first-order belief
questions by default, as in the paper's tables 1 and 6.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from eval.benchmarks.base import mean
from eval.charts import pyplot
from eval.jsonl import InputError
from exploretom.sampling.action_sets import ACTION_SETS
from exploretom.cli_args import orders_arg
from exploretom.datasets.stories import ReadCounts, story_records

ASTAR, BASELINE = "astar", "baseline"
METHOD_NAMES = {ASTAR: "A*", BASELINE: "baseline (overgenerate and filter)"}
SETTING_KEYS = ("people", "moves", "rooms", "max_actions")
YES, NO = "\u2713", "\u2717"  # asymmetry columns, as in the paper (check / cross)
DASH = "\u2013"


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


@dataclass
class RunStory:
    method: str
    target: str
    action_set: str
    asymmetric: bool
    setting: tuple  # (action set, asymmetric, people, moves, rooms, max actions)
    actions: int
    evaluations: int
    found: bool
    accuracy: float  # the search's own figure on its scored questions
    questions: list[tuple[int, bool, bool]]  # (order, interesting, correct)


# ------------------------------------------------------------------------------------------
# Reading


def _field(rec: dict, name: str, types, at: str):
    if name not in rec:
        raise InputError(f"{at}: missing field '{name}'")
    value = rec[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise InputError(f"{at}: field '{name}' has the wrong type ({type(value).__name__})")
    return value


def _tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def parse_record(rec: dict[str, Any], at: str) -> RunStory:
    method = _field(rec, "method", str, at)
    target = _field(rec, "target", str, at)
    setting = _field(rec, "setting", dict, at)
    action_set = setting.get("action_set", rec.get("action_set"))
    if not isinstance(action_set, str):
        raise InputError(f"{at}: missing field 'setting.action_set'")
    asym = setting.get("asymmetric", rec.get("asymmetric", False))
    if not isinstance(asym, bool):
        raise InputError(f"{at}: field 'setting.asymmetric' must be true or false")
    questions = []
    for i, q in enumerate(_field(rec, "questions", list, at)):
        qat = f"{at}: questions[{i}]"
        if not isinstance(q, dict):
            raise InputError(f"{qat}: expected an object")
        order = _field(q, "order", int, qat)
        questions.append((order, bool(_field(q, "interesting", bool, qat)),
                          _field(q, "correct", bool, qat)))
    return RunStory(
        method=method, target=target, action_set=action_set, asymmetric=asym,
        setting=(action_set, asym, *(setting.get(k) for k in SETTING_KEYS)),
        actions=len(_field(rec, "actions", list, at)),
        evaluations=_field(rec, "evaluations", int, at),
        found=_field(rec, "found", bool, at),
        accuracy=float(_field(rec, "accuracy", (int, float), at)),
        questions=questions,
    )


def read_runs(paths: Sequence[str | Path]) -> tuple[list[RunStory], ReadCounts]:
    counts = ReadCounts()
    stories: list[RunStory] = []
    seen: dict[tuple, str] = {}
    for path, at, rec in story_records(paths, counts):
        story = parse_record(rec, at)
        key = (story.method, story.target, str(rec["id"]))
        if key in seen:
            raise InputError(f"{at}: story {rec['id']!r} ({story.method}, {story.target}) "
                             f"already read at {seen[key]}")
        seen[key] = at
        stories.append(story)
        counts.per_file[path] += 1
    if not stories:
        raise InputError(f"no search results in {', '.join(map(str, paths))} "
                         f"({counts.errors} error lines)")
    return stories, counts


# ------------------------------------------------------------------------------------------
# Aggregating


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


# ------------------------------------------------------------------------------------------
# Markdown


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


# ------------------------------------------------------------------------------------------
# Images


def plot_table1(data: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    methods = data["methods"]
    fig, axes = plt.subplots(len(methods), 1, figsize=(10, 3.2 * len(methods)), squeeze=False)
    for ax, m in zip(axes[:, 0], methods):
        rows = [r for r in data["table1"] if r["method"] == m and r["accuracy"] is not None]
        sets = sorted({r["action_set"] for r in rows}, key=_set_order)
        cols = sorted({(r["target"], r["asymmetric"]) for r in rows})
        width = 0.8 / max(len(cols), 1)
        by = {(r["target"], r["asymmetric"], r["action_set"]): r["accuracy"] for r in rows}
        colour = {t: f"C{i % 10}" for i, t in enumerate(data["targets"])}
        for j, (t, asym) in enumerate(cols):
            xs = [i + (j - (len(cols) - 1) / 2) * width for i in range(len(sets))]
            ax.bar(xs, [by.get((t, asym, a), 0.0) for a in sets], width, color=colour[t],
                   label=f"{t}, {'with' if asym else 'without'} asymmetry",
                   hatch="//" if asym else None, edgecolor="black", linewidth=0.5)
        ax.set_xticks(range(len(sets)), sets)
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.set_title(f"{METHOD_NAMES.get(m, m)}: accuracy per action set "
                     f"({_orders_text(data['orders'])})", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_fig6(data: dict[str, Any], path: Path) -> None:
    plt = pyplot()
    from matplotlib.ticker import MaxNLocator

    comps = data["comparison"]
    fig, axes = plt.subplots(1, len(comps), figsize=(5.5 * len(comps), 3.6), squeeze=False)
    for ax, c in zip(axes[0], comps):
        diffs = [p["diff_points"] for p in c["pairs"]]
        if diffs:
            lo, hi = min(min(diffs), 0.0), max(max(diffs), 0.0)
            ax.hist(diffs, bins=min(20, max(5, len(diffs) // 2)), range=(lo - 1, hi + 1),
                    color="#4c72b0", edgecolor="black", linewidth=0.5)
            ax.axvline(0, color="black", linewidth=1)
            ax.axvline(c["mean_diff_points"], color="#c44e52", linestyle="--",
                       label=f"mean {c['mean_diff_points']:+.1f} points")
            ax.legend(fontsize=8)
        ax.set_xlabel("accuracy difference, A* minus baseline (points)")
        ax.set_ylabel("settings")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"{c['target']}: {c['settings']} settings", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ------------------------------------------------------------------------------------------
# Command


def make_report(paths: Sequence[str | Path], out: Path, orders: set[int] | None) -> dict[str, Any]:
    stories, read = read_runs(paths)
    data = aggregate(stories, orders)
    out.mkdir(parents=True, exist_ok=True)
    images: dict[str, str] = {}
    if data["table1"]:
        plot_table1(data, out / "table1_accuracy.png")
        images["table1"] = "table1_accuracy.png"
    if data["comparison"]:
        plot_fig6(data, out / "fig6_astar_vs_baseline.png")
        images["fig6"] = "fig6_astar_vs_baseline.png"
    (out / "report.md").write_text(markdown(data, read, images), encoding="utf-8")
    data["inputs"] = read.per_file
    data["error_lines"] = read.errors
    (out / "report.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="RUN.jsonl",
                   help="search-run files (python -m exploretom search / bench-search)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder for report.md, report.json and the PNG figures")
    p.add_argument("--orders", type=orders_arg, default=[1],
                   help="question orders counted in the tables, e.g. 1 or 1,2 or all "
                        "(default 1: first-order beliefs, as in the paper)")


def run(args: argparse.Namespace) -> int:
    orders = set(args.orders) if args.orders is not None else None
    data = make_report(args.inputs, Path(args.output), orders)
    for c in data["counts"]:
        print(f"{METHOD_NAMES.get(c['method'], c['method'])} / {c['target']}: {c['stories']} "
              f"stories, accuracy {_fmt(c['accuracy'], 3)}", file=sys.stderr)
    for c in data["comparison"]:
        print(f"A* - baseline ({c['target']}, {c['settings']} settings): "
              f"{_fmt(c['mean_diff_points'], 1)} points", file=sys.stderr)
    print(f"wrote {Path(args.output) / 'report.md'}", file=sys.stderr)
    return 0
