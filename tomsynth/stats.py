"""`python -m tomsynth stats`: distributions of the built datasets, printed and plotted.

Prints one table per factor (dimension, domain, format, answer letter) for each dataset under
`<out_dir>/datasets/`, the filter funnel per collection, and writes `<out_dir>/stats/stats.json`
plus one PNG per dataset (`<name>.png`: the four distributions, option lengths, the funnel).
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from eval.charts import pyplot
from eval.jsonl import write_json
from eval.rows import meta
from tomsynth.build import NAMES, distributions
from tomsynth.config import Config

COLLECTIONS_OF = {NAMES["main"]: ("main",), NAMES["contrast"]: ("contrast",),
                  NAMES["merged"]: ("main", "contrast")}


def collect(cfg: Config) -> dict[str, Any]:
    from datasets import load_from_disk

    out: dict[str, Any] = {"datasets": {}, "filter": {}}
    for name in NAMES.values():
        path = cfg.out_dir / "datasets" / name
        if not path.exists():
            continue
        dd = load_from_disk(str(path))
        rows = [r for split in dd.values() for r in split]
        dist = distributions(rows)
        out["datasets"][name] = {
            "splits": {k: len(v) for k, v in dd.items()}, "rows": len(rows),
            "units": len({meta(r)["unit"] for r in rows}),
            **{k: dict(sorted(v.items())) for k, v in dist.items()},
            "text_chars": [len(meta(r)["story"]) for r in rows],
            "option_chars": [len(c) for r in rows for c in r["choices"]],
        }
    for c in ("main", "contrast"):
        path = cfg.out_dir / "reports" / f"filter-{c}.json"
        if path.exists():
            r = json.loads(path.read_text(encoding="utf-8"))
            out["filter"][c] = {"generated": r["stage1"]["generated"], "after_stage1": r["stage1"]["kept"],
                                "after_stage3": r["final"], "stage1_reasons": r["stage1"]["reasons"],
                                "stage3_judgments": r["stage3"]["judgments"],
                                "letters_before": r["stage2"]["letters_before"],
                                "letters_after": r["stage2"]["letters_after"],
                                "length_bias": r["stage2"]["length_bias"]}
    return out


def show(stats: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not stats["datasets"]:
        console.print("no datasets built yet (run `python -m tomsynth build`)")
    for name, d in stats["datasets"].items():
        console.print(f"[bold]{name}[/bold]: {d['rows']} rows, {d['units']} units, splits {d['splits']}")
        for key in ("dimension", "domain", "format", "answer"):
            table = Table(title=f"{name} by {key}")
            table.add_column(key)
            table.add_column("entries", justify="right")
            table.add_column("share", justify="right")
            for k, v in d[key].items():
                table.add_row(str(k), str(v), f"{100 * v / max(1, d['rows']):.1f}%")
            console.print(table)
    for c, f in stats["filter"].items():
        table = Table(title=f"filter funnel: {c}")
        for col in ("generated", "after stage 1", "after stage 3"):
            table.add_column(col, justify="right")
        table.add_row(str(f["generated"]), str(f["after_stage1"]), str(f["after_stage3"]))
        console.print(table)
        console.print(f"  stage 1 reasons: {f['stage1_reasons'] or 'none'}")
        console.print(f"  stage 3 judgments: {f['stage3_judgments'] or 'none'}")
        console.print(f"  letters before/after balancing: {f['letters_before']} -> {f['letters_after']}")


def plot(stats: dict[str, Any], out_dir: Path) -> list[Path]:
    plt = pyplot()

    paths = []
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, d in stats["datasets"].items():
        fig, axes = plt.subplots(2, 3, figsize=(16, 9))
        for ax, key in zip(axes.flat, ("dimension", "domain", "format", "answer")):
            items = sorted(d[key].items())
            ax.barh([str(k) for k, _ in items], [v for _, v in items], color="#4c72b0")
            ax.set_title(f"entries per {key}")
            ax.invert_yaxis()
        ax = axes.flat[4]
        if d["text_chars"]:
            ax.hist(d["text_chars"], bins=30, color="#55a868", alpha=0.8, label="story/dialogue")
            ax.hist(d["option_chars"], bins=30, color="#c44e52", alpha=0.6, label="options")
            ax.legend()
        ax.set_title("length in characters")
        ax = axes.flat[5]
        funnel = Counter()
        cols = COLLECTIONS_OF[name]
        for c, f in stats["filter"].items():
            if c not in cols:
                continue
            funnel["generated"] += f["generated"]
            funnel["stage 1"] += f["after_stage1"]
            funnel["stage 3"] += f["after_stage3"]
        if funnel:
            ax.bar(list(funnel), list(funnel.values()), color="#8172b2")
        ax.set_title(f"filter funnel ({' + '.join(cols)})")
        fig.suptitle(f"{name}: {d['rows']} entries, {d['units']} units")
        fig.tight_layout()
        path = out_dir / f"{name}.png"
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def run(cfg: Config, plots: bool = True) -> dict[str, Any]:
    stats = collect(cfg)
    show(stats)
    out_dir = cfg.out_dir / "stats"
    write_json(out_dir / "stats.json", {
        **stats, "datasets": {k: {kk: vv for kk, vv in v.items() if kk not in ("text_chars", "option_chars")}
                              for k, v in stats["datasets"].items()}}, sort_keys=True)
    if plots:
        for p in plot(stats, out_dir):
            print(f"wrote {p}")
    return stats
