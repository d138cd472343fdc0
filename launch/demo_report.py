"""The report of the embedded default (launch/demo.py): Markdown and self-contained HTML.

    python launch/demo_report.py --out runs/demo

Reads what the stages wrote under OUT and writes OUT/report/: report.md, report.html (images
embedded), the PNG plots and summary.json. Accuracies come with Wilson 95% intervals; GRPO
against SFT is compared on the same test questions (paired bootstrap interval of the
difference and an exact McNemar test), so the claim "GRPO beats SFT" is made only when the
interval of the difference excludes zero.
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.paths import describe_error

CHECKPOINTS = ("base", "sft", "grpo")
STAGE_ORDER = ("data", "compare", "export", "model", "sft", "grpo", "eval", "report")
BREAKDOWNS = (("order", "order"), ("property", "property"), ("kind", "kind"),
              ("interesting", "interesting"), ("answer_type", "answer type"))


class ReportError(RuntimeError):
    pass


# ------------------------------------------------------------------------- statistics
def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_bootstrap(a: list[bool], b: list[bool], reps: int = 5000,
                     seed: int = 0) -> tuple[float, float, float]:
    """Mean of b - a and its 95% percentile interval over resampled questions."""
    rng = random.Random(seed)
    n = len(a)
    diffs = [int(y) - int(x) for x, y in zip(a, b)]
    stats = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(reps))
    return sum(diffs) / n, stats[int(0.025 * reps)], stats[int(0.975 * reps) - 1]


def mcnemar_exact(a: list[bool], b: list[bool]) -> float:
    """Two-sided exact p-value that a and b are equally accurate (discordant pairs binomial)."""
    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


# ------------------------------------------------------------------------- inputs
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ReportError(f"{path}: not a UTF-8 text file ({e.reason})") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by a kill
            if not isinstance(record, dict):
                raise ReportError(f"{path}: line {n}: expected a JSON object")
            out.append(record)
    return out


def training_log(path: Path) -> list[dict[str, Any]]:
    """The logged steps, the last entry per step (a resumed run logs some steps twice)."""
    by_step: dict[int, dict[str, Any]] = {}
    for entry in read_jsonl(path):
        if "step" in entry:
            by_step.setdefault(entry["step"], {}).update(entry)
    return [by_step[s] for s in sorted(by_step)]


def samples(out: Path, ckpt: str) -> dict[str, dict[str, Any]]:
    path = out / "eval" / ckpt / "samples" / "exploretom.jsonl"
    records = read_jsonl(path)
    bad = next((n for n, r in enumerate(records, 1) if not {"id", "correct"} <= r.keys()), None)
    if bad is not None:
        raise ReportError(f"{path}: record {bad} has no 'id' or 'correct' (not `eval run` samples)")
    rows = {r["id"]: r for r in records if r.get("sample", 0) == 0}
    if not rows:
        raise ReportError(f"{path}: no evaluation samples (run the eval stage first)")
    return rows


# ------------------------------------------------------------------------- plots
def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_curves(grpo_log: list[dict], sft_log: list[dict], path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    keys = (("reward", "total reward"), ("rewards/format_reward/mean", "format reward"),
            ("rewards/outcome_reward/mean", "outcome reward"))
    for key, label in keys:
        pts = [(e["step"], float(e[key])) for e in grpo_log if key in e]
        if pts:
            axes[0].plot(*zip(*pts), label=label, marker=".")
    axes[0].set(title="GRPO rewards (training batches)", xlabel="step", ylabel="mean reward")
    axes[0].axhline(0, color="grey", lw=0.5)
    axes[0].legend()
    pts = [(e["step"], float(e["loss"])) for e in sft_log if "loss" in e]
    if pts:
        axes[1].plot(*zip(*pts), marker=".", color="tab:purple")
    axes[1].set(title="SFT loss", xlabel="step", ylabel="loss")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_checkpoints(acc: dict[str, tuple[float, float, float]], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 3.6))
    names = list(acc)
    means = [acc[n][0] for n in names]
    err = [[acc[n][0] - acc[n][1] for n in names], [acc[n][2] - acc[n][0] for n in names]]
    ax.bar(names, means, yerr=err, capsize=6, color=["#bbb", "#6a9fd8", "#e07b39"][:len(names)])
    for i, m in enumerate(means):
        ax.text(i, m + 0.01, f"{m:.1%}", ha="center", va="bottom")
    ax.set(ylim=(0, 1), ylabel="accuracy (95% Wilson)", title="ExploreToM test split")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_breakdown(table: dict[str, dict[str, float]], title: str, path: Path) -> None:
    plt = _plt()
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
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.6))
    diffs = [100 * (a - b) for _, a, b in pairs]
    ax.hist(diffs, bins=min(15, max(5, len(diffs) // 2)), color="tab:green")
    ax.axvline(0, color="k", lw=0.8)
    ax.set(xlabel="A* minus baseline accuracy (points; < 0: A* harder)", ylabel="settings",
           title="Difficulty: A* vs overgenerate-and-filter (equal budget)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------- report
def build(out: Path) -> dict[str, Any]:
    rep = out / "report"
    rep.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"stages": {}}
    for stage in STAGE_ORDER:
        path = out / "stages" / f"{stage}.json"
        if path.exists():
            summary["stages"][stage] = json.loads(path.read_text())["seconds"]
    stats_path = out / "data" / "exploretom" / "export_stats.json"
    data_stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}

    per_ckpt = {c: samples(out, c) for c in CHECKPOINTS if (out / "eval" / c).exists()}
    if not per_ckpt:
        raise ReportError(f"{out / 'eval'}: no evaluation results")
    # The random base model is scored on a sample only; the trained checkpoints on everything.
    trained = [c for c in ("sft", "grpo") if c in per_ckpt] or list(per_ckpt)
    ids = sorted(set.intersection(*(set(per_ckpt[c]) for c in trained)))
    acc, breakdown, n_of = {}, {label: {} for _, label in BREAKDOWNS}, {}
    for ckpt, rows in per_ckpt.items():
        own = ids if ckpt in trained else sorted(rows)
        n_of[ckpt] = len(own)
        k = sum(bool(rows[i]["correct"]) for i in own)
        acc[ckpt] = (k / len(own), *wilson(k, len(own)))
        for key, label in BREAKDOWNS:
            groups: dict[str, list[bool]] = defaultdict(list)
            for i in own:
                meta = rows[i].get("meta", {})
                value = rows[i].get("answer_type") if key == "answer_type" else meta.get(key)
                groups[str(value)].append(bool(rows[i]["correct"]))
            breakdown[label][ckpt] = {g: sum(v) / len(v) for g, v in groups.items()}
        summary.setdefault("format_ok", {})[ckpt] = (
            sum(bool(rows[i].get("format_ok")) for i in own) / len(own))
    summary["n_test"] = len(ids)
    summary["accuracy"] = {c: {"accuracy": a, "ci95": [lo, hi], "n": n_of[c]}
                           for c, (a, lo, hi) in acc.items()}
    summary["breakdowns"] = breakdown

    verdict = ""
    if "sft" in per_ckpt and "grpo" in per_ckpt:
        a = [bool(per_ckpt["sft"][i]["correct"]) for i in ids]
        b = [bool(per_ckpt["grpo"][i]["correct"]) for i in ids]
        diff, lo, hi = paired_bootstrap(a, b)
        p = mcnemar_exact(a, b)
        summary["grpo_minus_sft"] = {"diff": diff, "ci95": [lo, hi], "mcnemar_p": p}
        if lo > 0:
            verdict = (f"GRPO improves on SFT by {100 * diff:+.1f} points (95% CI "
                       f"{100 * lo:+.1f} to {100 * hi:+.1f}, McNemar p = {p:.2g}): the interval "
                       "excludes zero.")
        else:
            verdict = (f"GRPO vs SFT: {100 * diff:+.1f} points (95% CI {100 * lo:+.1f} to "
                       f"{100 * hi:+.1f}, McNemar p = {p:.2g}): NOT a significant improvement.")
    summary["verdict"] = verdict

    grpo_log = training_log(out / "grpo" / "log.jsonl")
    sft_log = training_log(out / "sft" / "log.jsonl")
    plot_curves(grpo_log, sft_log, rep / "training_curves.png")
    plot_checkpoints(acc, rep / "accuracy_by_checkpoint.png")
    for _, label in BREAKDOWNS:
        plot_breakdown(breakdown[label], f"accuracy by {label}",
                       rep / f"accuracy_by_{label.replace(' ', '_')}.png")
    compare = [r for r in read_jsonl(out / "data" / "astar_vs_baseline.jsonl") if "accuracy" in r]
    by_id = {r["id"]: r for r in compare}
    pairs = [(r["id"][len("astar-"):], r["accuracy"], by_id["baseline-" + r["id"][len("astar-"):]]
              ["accuracy"]) for r in compare if r["method"] == "astar"
             and "baseline-" + r["id"][len("astar-"):] in by_id]
    if pairs:
        plot_search(pairs, rep / "astar_vs_baseline.png")
        summary["astar_vs_baseline"] = {
            "settings": len(pairs), "astar": sum(p[1] for p in pairs) / len(pairs),
            "baseline": sum(p[2] for p in pairs) / len(pairs)}
    bench = {}
    for ckpt in per_ckpt:
        res = out / "eval" / ckpt / "results.json"
        if res.exists():
            for name, entry in json.loads(res.read_text())["benchmarks"].items():
                if name != "exploretom":
                    bench.setdefault(name, {})[ckpt] = (entry.get("score"), entry.get("n"))
    summary["other_benchmarks"] = bench
    (rep / "summary.json").write_text(json.dumps(summary, indent=2))
    md = markdown(summary, data_stats, grpo_log)
    (rep / "report.md").write_text(md)
    (rep / "report.html").write_text(html(md, rep))
    return summary


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def markdown(s: dict[str, Any], data: dict[str, Any], grpo_log: list[dict]) -> str:
    lines = ["# The embedded default: ExploreToM data -> tiny model -> SFT -> GRPO", ""]
    total = sum(s["stages"].values())
    lines += ["Stages (seconds): " + ", ".join(f"{k} {v:.0f}" for k, v in s["stages"].items())
              + f"; total {total:.0f} s ({total / 60:.1f} min).", ""]
    if data:
        splits = data.get("splits", {})
        lines += ["## Data", "", "| split | rows | stories |", "|---|---|---|"]
        for name, st in splits.items():
            lines.append(f"| {name} | {st.get('rows')} | {st.get('stories')} |")
        lines.append("")
    if "astar_vs_baseline" in s:
        c = s["astar_vs_baseline"]
        lines += [f"A* vs overgenerate-and-filter against the `world` reasoner over "
                  f"{c['settings']} settings at equal budget: A* accuracy {_pct(c['astar'])}, "
                  f"baseline {_pct(c['baseline'])} (lower is harder). "
                  "![A* vs baseline](astar_vs_baseline.png)", ""]
    lines += ["## Accuracy on the held-out test split", "",
              f"{s['n_test']} test questions (stories never seen in training; the random base "
              "model on a sample of them), greedy decoding.",
              "", "| checkpoint | questions | accuracy | 95% interval | well-formatted replies |",
              "|---|---|---|---|---|"]
    for c, v in s["accuracy"].items():
        lo, hi = v["ci95"]
        lines.append(f"| {c} | {v['n']} | {_pct(v['accuracy'])} | {_pct(lo)} - {_pct(hi)} | "
                     f"{_pct(s['format_ok'][c])} |")
    lines += ["", f"**{s['verdict']}**" if s["verdict"] else "", "",
              "![accuracy per checkpoint](accuracy_by_checkpoint.png)", ""]
    for label, table in s["breakdowns"].items():
        groups = sorted({g for per in table.values() for g in per})
        lines += [f"### By {label}", "", "| checkpoint | " + " | ".join(groups) + " |",
                  "|---|" + "---|" * len(groups)]
        for ckpt, per in table.items():
            lines.append(f"| {ckpt} | " + " | ".join(_pct(per.get(g, 0)) for g in groups) + " |")
        lines += ["", f"![by {label}](accuracy_by_{label.replace(' ', '_')}.png)", ""]
    if grpo_log:
        first, last = grpo_log[0], grpo_log[-1]
        lines += ["## Training", "",
                  f"GRPO: {last['step']} steps; mean training reward {float(first.get('reward', 0)):.2f}"
                  f" at step {first['step']} -> {float(last.get('reward', 0)):.2f} at step "
                  f"{last['step']}.", "", "![training curves](training_curves.png)", ""]
    if s["other_benchmarks"]:
        lines += ["## Other benchmarks", "", "| benchmark | " + " | ".join(CHECKPOINTS) + " |",
                  "|---|" + "---|" * len(CHECKPOINTS)]
        for name, per in s["other_benchmarks"].items():
            cells = [f"{_pct(per[c][0])} (n={per[c][1]})" if c in per and per[c][0] is not None
                     else "-" for c in CHECKPOINTS]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def html(md: str, folder: Path) -> str:
    """Minimal Markdown to HTML (headings, tables, images inlined, paragraphs)."""
    import html as h
    import re

    body, table = [], []

    def flush_table():
        if table:
            rows = [r for r in table if not re.fullmatch(r"\|[-|]+\|", r)]
            cells = [[h.escape(c.strip()) for c in r.strip("|").split("|")] for r in rows]
            body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in cells[0]) + "</tr>"
                        + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>"
                                  for r in cells[1:]) + "</table>")
            table.clear()

    def image(m):
        path = folder / m.group(2)
        if not path.exists():
            return h.escape(m.group(0))
        data = base64.b64encode(path.read_bytes()).decode()
        return f'<img alt="{h.escape(m.group(1))}" src="data:image/png;base64,{data}">'

    for line in md.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{h.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.strip():
            text = h.escape(line)
            text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
            text = re.sub(r"`(.+?)`", r"<code>\1</code>", text)
            text = re.sub(r"!\[(.*?)\]\((.*?)\)", image, text)
            body.append(f"<p>{text}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
             "img{max-width:100%}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>tomrl demo report</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="the demo's output folder")
    args = p.parse_args(argv)
    out = Path(args.out)
    if not out.is_dir():
        print(f"error: {out}: no such folder", file=sys.stderr)
        return 2
    try:
        s = build(out)
    except (ReportError, OSError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    print(f"report: {out / 'report' / 'report.md'} (and report.html)")
    if s["verdict"]:
        print(s["verdict"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
