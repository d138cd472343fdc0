"""The charts of the demo's report and of the transfer report (matplotlib, written as PNG files
next to the Markdown that shows them)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.charts import pyplot
from eval.report import display


def _integer_steps(ax) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers


def plot_curves(grpo_log: list[dict], sft_log: list[dict], path: Path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    series = {label: [(e["step"], float(e[key])) for e in grpo_log if key in e]
              for key, label in (("reward", "total reward"),
                                 ("rewards/format_reward/mean", "format reward"),
                                 ("rewards/outcome_reward/mean", "outcome reward"))}
    total = series.pop("total reward")
    if total:
        # Drawn wide and pale under the parts, so it shows even where it equals one of them
        # (a model that never answers right: total = format reward).
        same = next((label for label, pts in series.items() if pts == total), None)
        axes[0].plot(*zip(*total), color="tab:grey", lw=6, alpha=0.35, zorder=1,
                     label="total reward" + (f" (= {same})" if same else ""))
    for (label, pts), color in zip(series.items(), ("tab:blue", "tab:orange")):
        if pts:
            axes[0].plot(*zip(*pts), label=label, marker=".", color=color, zorder=2)
    axes[0].set(title="GRPO rewards (training batches)", xlabel="step", ylabel="mean reward")
    axes[0].axhline(0, color="grey", lw=0.5)
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize="small", framealpha=0.8)
    pts = [(e["step"], float(e["loss"])) for e in sft_log if "loss" in e]
    if pts:
        axes[1].plot(*zip(*pts), marker=".", color="tab:purple")
    axes[1].set(title="SFT loss", xlabel="step", ylabel="loss")
    for ax in axes:
        _integer_steps(ax)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_checkpoints(acc: dict[str, tuple[float, float, float]], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    names = list(acc)
    means = [acc[n][0] for n in names]
    err = [[acc[n][0] - acc[n][1] for n in names], [acc[n][2] - acc[n][0] for n in names]]
    ax.bar(names, means, yerr=err, capsize=6, color=["#bbb", "#6a9fd8", "#e07b39"][:len(names)])
    for i, n in enumerate(names):
        ax.text(i, acc[n][2] + 0.01, f"{acc[n][0]:.1%}", ha="center", va="bottom")
    if not any(means):
        ax.text(0.5, 0.6, "every checkpoint answers 0%\n(no bars to draw)", ha="center",
                transform=ax.transAxes, color="grey")
    ax.set(ylim=(0, 1), ylabel="accuracy (95% Wilson)", title="ExploreToM test split")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def all_zero(table: dict[str, dict[str, float]]) -> bool:
    return all(v == 0 for per in table.values() for v in per.values())


def plot_breakdown(table: dict[str, dict[str, float]], title: str, path: Path) -> None:
    plt = pyplot()
    groups = sorted({g for per in table.values() for g in per})
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(groups) + 2), 3.6))
    width = 0.8 / max(1, len(table))
    for i, (ckpt, per) in enumerate(table.items()):
        ax.bar([x + i * width for x in range(len(groups))], [per.get(g, 0) for g in groups],
               width, label=ckpt)
    ax.set_xticks([x + width * (len(table) - 1) / 2 for x in range(len(groups))], groups,
                  rotation=20)
    ax.set(ylim=(0, 1), ylabel="accuracy", title=title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_search(pairs: list[tuple[str, float, float]], path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    diffs = [100 * (a - b) for _, a, b in pairs]
    ax.hist(diffs, bins=min(15, max(5, len(diffs) // 2)), color="tab:green")
    ax.axvline(0, color="k", lw=0.8)
    ax.set(xlabel="A* minus baseline accuracy (points; < 0: A* harder)", ylabel="settings",
           title="Difficulty: A* vs overgenerate-and-filter (equal budget)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_transfer(s: dict[str, Any], path: Path) -> None:
    """Accuracy per benchmark and checkpoint with Wilson intervals, chance dotted (the transfer
    report's summary.json as `s`)."""
    plt = pyplot()
    names = list(s["benchmarks"])
    ckpts = s["checkpoints"]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(names) + 2), 3.8))
    width = 0.8 / len(ckpts)
    colours = ["#bbb", "#6a9fd8", "#e07b39", "#7aa35a", "#9b6bc2", "#c9a227", "#3aa6a0"]
    for i, c in enumerate(ckpts):
        per = [s["benchmarks"][n]["checkpoints"][c] for n in names]
        acc = [100 * (p["accuracy"] or 0) for p in per]
        err = [[a - 100 * p["ci_low"] for a, p in zip(acc, per)],
               [100 * p["ci_high"] - a for a, p in zip(acc, per)]]
        ax.bar([x + i * width for x in range(len(names))], acc, width, yerr=err, capsize=2,
               label=c, color=colours[i % len(colours)])
    for x, n in enumerate(names):
        chance = s["benchmarks"][n]["checkpoints"][ckpts[0]]["chance"]
        if chance is not None:
            ax.hlines(100 * chance, x - width / 2, x + width * (len(ckpts) - 0.5), colors="k",
                      linestyles="dotted", lw=1)
    ax.set_xticks([x + width * (len(ckpts) - 1) / 2 for x in range(len(names))],
                  [display(n) for n in names], rotation=25, ha="right")
    ax.set(ylim=(0, 100), ylabel="accuracy per item (%)",
           title="Transfer to outside benchmarks (dotted: chance)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
