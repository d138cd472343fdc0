"""`python -m exploretom report`: read the runs, aggregate, draw the figures, write report.md
and report.json into DIR (`make_report`)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from exploretom.cli_args import orders_arg
from exploretom.report.aggregate import aggregate
from exploretom.report.markdown import _fmt, markdown
from exploretom.report.plots import plot_fig6, plot_table1
from exploretom.report.runs import METHOD_NAMES, read_runs



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
