"""Shortcut baselines beside a model's score, per benchmark and question kind.

    python -m eval.shortcut_report RUN_DIR [RUN_DIR ...] [--data exploretom=DIR [--split train]]
                                   [-o report.md] [--json summary.json]

RUN_DIR is an `eval run` output (results.json and samples/<benchmark>.jsonl); `--data` measures a
dataset (rows, no model) instead or as well. For ToMi, Hi-ToM and our ExploreToM rows
(`eval.shortcuts`), per question kind (true / false belief per order, reality, memory):

- n, the chance level (one in the number of containers the story names, averaged) and the
  accuracy of each shortcut: a reader that always answers the last container the story mentions,
  the first, the most named, or where the object really is;
- per run: its accuracy, the share of its answers equal to each shortcut's answer and the most
  frequent answer with its share (a habit shows as one answer far above chance), how often it
  names each shortcut's answer where that answer is right and where it is wrong (`names`: a
  habit names it as often either way, a reader of minds only where it is right), and the share
  of its answers that name no container of the story (`off_story`: a room, a person, or an option
  the story never mentions, such as a word the model favours; not read from the story).

Figures are per sample line: a run with several samples or option orders per item counts each.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from eval.jsonl import InputError
from eval.results import read_samples
from eval.shortcuts import BENCHMARKS, KINDS, SHORTCUTS, ShortcutItem, answered_place, item

LABELS = {"last": "last", "first": "first", "most_named": "most named", "true_place": "true place"}
ALL = "all"


ROW_KINDS = ("reality", "memory", "belief", "true belief", "false belief")


def group_key(group: str) -> tuple:
    """Table order: reality, memory, then per order the beliefs pooled, the true and the false
    ones; `all` last."""
    if group == ALL:
        return (99,)
    kind, _, order = group.partition(", order ")
    return (int(order or 0), ROW_KINDS.index(kind) if kind in ROW_KINDS else 9)


def groups_of(it: ShortcutItem) -> list[str]:
    """The rows an item counts in: its kind (and order), beliefs of its order pooled (a reader
    does not know whether it faces a true or a false one: the rows the export balances), all."""
    out = [it.group]
    if it.kind.endswith("belief"):
        out.append(f"belief, order {it.order}")
    return out + [ALL]


def baseline(items: Sequence[ShortcutItem]) -> dict[str, Any]:
    """n, mean chance and each shortcut's accuracy (gold equals its answer) over `items`."""
    n = len(items)
    return {"n": n, "chance": sum(i.chance for i in items) / n if n else None,
            "shortcuts": {s: (sum(i.gold is not None and i.answers.get(s) == i.gold for i in items)
                              / n if n else None) for s in SHORTCUTS}}


def answers_of(pairs: Sequence[tuple[ShortcutItem, dict[str, Any]]]) -> dict[str, Any]:
    """A run's figures over (item, sample line) pairs: accuracy, the share of answers equal to
    each shortcut's, and the most frequent answer with its share (unanswered lines count in n)."""
    n = len(pairs)
    placed = [(it, answered_place(line, it.candidates)) for it, line in pairs]
    top = Counter(p for _, p in placed if p is not None).most_common(1)
    return {
        "n": n,
        "accuracy": sum(bool(line.get("correct")) for _, line in pairs) / n if n else None,
        "equals": {s: (sum(p is not None and p == it.answers.get(s) for it, p in placed) / n
                       if n else None) for s in SHORTCUTS},
        "names": {s: names_shortcut(placed, s) for s in SHORTCUTS},
        "top_answer": top[0][0] if top else None,
        "top_share": top[0][1] / n if top and n else None,
        "unanswered": sum(p is None for _, p in placed) / n if n else None,
        "off_story": (sum(p is not None and p not in it.candidates for it, p in placed) / n
                      if n else None),
    }


def names_shortcut(placed: Sequence[tuple[ShortcutItem, str | None]], shortcut: str) -> dict[str, Any]:
    """How often a run names one shortcut's answer where that answer is right and where it is
    wrong: a reader that tracks minds names it only where it is right; a habit (always the last
    container named) names it as often either way, whatever its accuracy."""
    out: dict[str, Any] = {}
    for side, right in (("right", True), ("wrong", False)):
        hits = [p == it.answers[shortcut] for it, p in placed
                if it.gold is not None and it.answers.get(shortcut) is not None
                and (it.answers[shortcut] == it.gold) == right]
        out[side] = sum(hits) / len(hits) if hits else None
        out[f"n_{side}"] = len(hits)
    return out


def by_group(items: Iterable[ShortcutItem]) -> dict[str, list[ShortcutItem]]:
    groups: dict[str, list[ShortcutItem]] = defaultdict(list)
    for it in items:
        for g in groups_of(it):
            groups[g].append(it)
    return {g: groups[g] for g in sorted(groups, key=group_key)}


def table_of_rows(benchmark: str, rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per group, the baseline of a benchmark's rows (no model)."""
    items = [it for it in (item(benchmark, r) for r in rows) if it is not None]
    return {g: baseline(its) for g, its in by_group(items).items()}


def run_samples(folder: Path) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """(label, benchmark -> sample lines) of an `eval run` output, for the benchmarks that have
    a shortcut reader."""
    return read_samples(folder, BENCHMARKS)


def table_of_runs(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    """benchmark -> group -> baseline and per run (label) its figures. The baseline is of the
    first run's items; each run is measured on its own lines."""
    out: dict[str, dict[str, Any]] = {}
    names = [n for n in BENCHMARKS if any(n in r for r in runs.values())]
    for name in names:
        tables: dict[str, dict[str, Any]] = {}
        for label, benches in runs.items():
            pairs = [(it, line) for line in benches.get(name, [])
                     if (it := item(name, line)) is not None]
            grouped: dict[str, list] = defaultdict(list)
            for it, line in pairs:
                for g in groups_of(it):
                    grouped[g].append((it, line))
            for g in sorted(grouped, key=group_key):
                entry = tables.setdefault(g, {"models": {}})
                if "n" not in entry:  # the baseline: the first run's distinct items
                    distinct = list({it.id: it for it, _ in grouped[g]}.values())
                    entry.update(baseline(distinct))
                entry["models"][label] = answers_of(grouped[g])
        out[name] = {g: tables[g] for g in sorted(tables, key=group_key)}
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}"


def markdown_table(groups: dict[str, Any], models: Sequence[str] = ()) -> list[str]:
    """One table: a row per group; n, chance, each shortcut's accuracy, then per model its
    accuracy, = each shortcut's answer (last/first/most named/true place) and its top answer."""
    head = ["question kind", "n", "chance", *(f"{LABELS[s]}" for s in SHORTCUTS)]
    for m in models:
        head += [f"{m} accuracy", f"{m} = last / first / most / true", f"{m} top answer"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for g, e in groups.items():
        cells = [g, str(e["n"]), _pct(e["chance"]), *(_pct(e["shortcuts"][s]) for s in SHORTCUTS)]
        for m in models:
            f = e.get("models", {}).get(m)
            if f is None:
                cells += ["–", "–", "–"]
                continue
            cells += [_pct(f["accuracy"]), " / ".join(_pct(f["equals"][s]) for s in SHORTCUTS),
                      f"{f['top_answer']} {_pct(f['top_share'])}" if f["top_answer"] else "–"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


DISPLAY = {"tomi": "ToMi", "hitom": "Hi-ToM", "exploretom": "ExploreToM (ours)"}


INTRO = ("In percent. `last` / `first` / `most named` / `true place`: the accuracy of a reader "
         "that always answers the container the story mentions last / first / most often, or "
         "where the object really is; chance: one in the number of containers the story names. "
         "Per model: its accuracy, the share of its answers equal to each of those answers "
         "(last / first / most named / true place), and its most frequent answer with its share.")


def markdown(tables: dict[str, dict[str, Any]], models: Sequence[str] = (),
             level: str = "##", intro: bool = True) -> str:
    lines = [INTRO, ""] if intro else []
    for name, groups in tables.items():
        lines += [f"{level} {DISPLAY.get(name, name)}", "", *markdown_table(groups, models), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.shortcut_report", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="*", type=Path, metavar="RUN_DIR",
                   help="eval run outputs (results.json and samples/)")
    p.add_argument("--data", action="append", default=[], metavar="BENCH=PATH",
                   help="rows of a benchmark to measure without a model (e.g. "
                        "exploretom=runs/demo-real/data/exploretom, "
                        "tomi=../shared/benchmarks/tomi)")
    p.add_argument("--split", default="test",
                   help="the split of an exploretom --data (default test)")
    p.add_argument("-o", "--output", type=Path, help="write the Markdown here (default: stdout)")
    p.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = p.parse_args(argv)
    if not args.runs and not args.data:
        p.error("give at least one RUN_DIR or --data BENCH=PATH")
    out: dict[str, Any] = {}
    text = []
    try:
        if args.runs:
            runs = dict(run_samples(folder) for folder in args.runs)
            if len(runs) < len(args.runs):
                raise InputError("two runs have the same label; give runs of distinct labels")
            out["runs"] = table_of_runs(runs)
            text.append(markdown(out["runs"], list(runs)))
        for spec in args.data:
            name, sep, path = spec.partition("=")
            if not sep or name not in BENCHMARKS:
                raise InputError(f"--data {spec!r}: expected BENCH=PATH with BENCH one of "
                                 f"{', '.join(BENCHMARKS)}")
            from eval.benchmarks import get_benchmark
            bench = get_benchmark(name)
            rows = (bench.load(Path(path), split=args.split) if name == "exploretom"
                    else bench.load(Path(path)))
            out.setdefault("data", {})[name] = table_of_rows(name, rows)
            text.append(markdown({name: out["data"][name]}, intro=not text))
    except (InputError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    md = "\n".join(text)
    if args.output:
        args.output.write_text(md, encoding="utf-8")
    else:
        print(md)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
