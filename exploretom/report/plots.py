"""The report's figures: table 1 as bars (`plot_table1`) and the histogram of A* minus baseline
accuracy per setting (`plot_fig6`)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.charts import pyplot
from exploretom.report.aggregate import _set_order
from exploretom.report.markdown import _orders_text
from exploretom.report.runs import METHOD_NAMES



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
