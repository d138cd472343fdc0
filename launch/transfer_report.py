"""The transfer report: checkpoints of one model (base, SFT, GRPO) on benchmarks none of them was
trained on, paired against each other on the same items.

    python launch/transfer_report.py --out runs/demo-real [--checkpoints base sft grpo]

Reads OUT/eval/<checkpoint>/ (an `eval run` output: results.json and samples/*.jsonl) and writes
OUT/report/: report.md, report.html (plots embedded), transfer.png and summary.json.

Every figure is per item: a multiple-choice item asked in several option orders (`eval run
--permutations`) scores the share of its orders answered right, a FANToM set the share of its
questions, so a habit of answering one position scores chance and items weigh the same. Per
benchmark and checkpoint: items, accuracy with a Wilson 95% interval, the chance level, the share
of replies read by their answer tags, by the fallback for untagged replies and not at all, and the
share of the most-chosen option position. Each trained checkpoint is paired with the base, and the
last with the one before it (GRPO against SFT), on the items both answered: the mean difference and
its 95% paired bootstrap interval. A difference counts as a gain (or a loss) only when its interval
excludes zero. The benchmarks' own headline metrics (OpenToM's macro-F1, FANToM's ALL) are listed
beside; the paired figures are accuracy.

ToMi, Hi-ToM and our ExploreToM rows are also split by question kind (true / false belief per
order, reality, memory) with the shortcut baselines beside each row (`eval.shortcut_report`): what
a reader that always answers the last, first or most mentioned container, or the true place,
would score, and per checkpoint the share of its answers equal to each and its most frequent
answer (summary.json: `benchmarks.<name>.shortcuts`).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval.report_html import html  # noqa: E402
from report_plots import plot_transfer  # noqa: E402

from eval.jsonl import InputError, read_jsonl  # noqa: E402
from eval.paths import describe_error  # noqa: E402
from eval.report import display  # noqa: E402
from eval.results import load_results  # noqa: E402
from eval.selection import item_of  # noqa: E402
from eval.shortcut_report import INTRO as SHORTCUT_INTRO  # noqa: E402
from eval.shortcut_report import markdown_table as shortcut_table  # noqa: E402
from eval.shortcut_report import run_samples, table_of_runs  # noqa: E402
from eval.stats import paired_bootstrap, wilson  # noqa: E402

CHECKPOINTS = ("base", "sft", "grpo")
# The goal of the real-model recipe (issue 29): these gain >= 10 points beyond the interval
GOAL_BENCHMARKS = ("tomi", "hitom")
GOAL_POINTS = 10.0


class ReportError(RuntimeError):
    pass


def load_checkpoint(folder: Path) -> dict[str, Any]:
    """Per benchmark: the results entry, each item's score and how its replies were read."""
    results = load_results(folder)
    out: dict[str, Any] = {"label": results.get("label"), "model": results.get("model"),
                           "benchmarks": {}}
    for name, entry in results["benchmarks"].items():
        path = folder / entry.get("samples_file", f"samples/{name}.jsonl")
        if not path.is_file():
            raise ReportError(f"{path}: missing (the samples of {name})")
        scores: dict[str, list[float]] = defaultdict(list)
        try:
            for line in read_jsonl(path):
                scores[item_of(line)].append(float(bool(line.get("correct"))))
        except InputError as e:
            raise ReportError(str(e)) from None
        out["benchmarks"][name] = {
            "entry": entry,
            "items": {k: sum(v) / len(v) for k, v in scores.items()},
        }
    return out


def _shares(entry: dict[str, Any]) -> dict[str, float | None]:
    read = entry.get("read") or {}
    total = sum(read.values())
    return {k: (read.get(k, 0) / total if total else None) for k in ("tag", "fallback", "unparsed")}


def summarise(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """summary.json: per benchmark, each checkpoint's figures and the paired differences."""
    names = [n for n in runs[next(iter(runs))]["benchmarks"]
             if all(n in r["benchmarks"] for r in runs.values())]
    ckpts = list(runs)
    out: dict[str, Any] = {"checkpoints": ckpts, "benchmarks": {}}
    for name in names:
        per: dict[str, Any] = {}
        for ckpt, run in runs.items():
            b = run["benchmarks"][name]
            items, entry = b["items"], b["entry"]
            k, n = sum(items.values()), len(items)
            lo, hi = wilson(k, n)
            per[ckpt] = {
                "n": n, "accuracy": k / n if n else None, "ci_low": lo, "ci_high": hi,
                "chance": entry.get("chance"), "read": _shares(entry),
                "top_position": entry.get("top_position"),
                "top_position_share": entry.get("top_position_share"),
                "primary_metric": entry.get("primary_metric"), "score": entry.get("score"),
                "permutations": (entry.get("selection") or {}).get("permutations", 1),
            }
        pairs = [(c, ckpts[0]) for c in ckpts[1:]] + ([(ckpts[-1], ckpts[-2])] if len(ckpts) > 2 else [])
        paired = {}
        for new, old in pairs:
            a_items, b_items = runs[old]["benchmarks"][name]["items"], runs[new]["benchmarks"][name]["items"]
            common = sorted(set(a_items) & set(b_items))
            diff, lo, hi = paired_bootstrap([a_items[i] for i in common], [b_items[i] for i in common])
            paired[f"{new}-{old}"] = {"n": len(common), "diff": diff, "ci_low": lo, "ci_high": hi,
                                      "verdict": "gain" if lo > 0 else "loss" if hi < 0 else "no change"}
        out["benchmarks"][name] = {"checkpoints": per, "paired": paired}
    out["goals"] = goals(out, ckpts)
    out["caveats"] = caveats(out, ckpts)
    return out


ONE_POSITION = 0.95  # a model that picks one option position this often has a habit, not a choice
UNREAD = 0.20  # a base whose replies are this often unreadable scores below what it knows


def caveats(summary: dict[str, Any], ckpts: list[str]) -> dict[str, list[str]]:
    """benchmark -> why a gain over the base may not be Theory of Mind: the trained model answers
    one option position (over permuted orders that scores the chance level), or the base's
    replies were often unreadable (scored wrong, so any readable answer gains)."""
    out: dict[str, list[str]] = {}
    for name, b in summary["benchmarks"].items():
        per, notes, habits = b["checkpoints"], [], []
        gained = [c for c in ckpts[1:]
                  if b["paired"].get(f"{c}-{ckpts[0]}", {}).get("verdict") == "gain"]
        for c in gained:
            share = per[c].get("top_position_share")
            if share is not None and share >= ONE_POSITION:
                habits.append(f"{c} {per[c]['top_position']} {100 * share:.0f}%")
        if habits:
            notes.append(f"one option position ({', '.join(habits)}), a habit that scores about "
                         f"the chance level ({_pct(per[gained[0]]['chance'])}) over the option orders")
        unread = (per[ckpts[0]].get("read") or {}).get("unparsed")
        if gained and unread is not None and unread >= UNREAD:
            notes.append(f"the base's replies were unreadable on {100 * unread:.0f}% (scored "
                         "wrong), so any readable answer gains")
        if notes:
            out[name] = notes
    return out


def goals(summary: dict[str, Any], ckpts: list[str]) -> dict[str, Any]:
    """The recipe's goal: the final checkpoint against the base gains >= 10 points beyond its
    interval on ToMi and Hi-ToM, and no benchmark falls beyond its interval."""
    final = ckpts[-1]
    key = f"{final}-{ckpts[0]}"
    gains = {}
    for name in GOAL_BENCHMARKS:
        p = summary["benchmarks"].get(name, {}).get("paired", {}).get(key)
        gains[name] = None if p is None else {
            "diff_points": 100 * p["diff"], "ci_low_points": 100 * p["ci_low"],
            "met": 100 * p["diff"] >= GOAL_POINTS and p["ci_low"] > 0}
    fell = sorted(n for n, b in summary["benchmarks"].items()
                  if b["paired"].get(key, {}).get("verdict") == "loss")
    return {"final": final, "against": ckpts[0], "gains": gains, "fell": fell,
            "met": all(g and g["met"] for g in gains.values()) and not fell}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _diff(p: dict[str, Any] | None) -> str:
    if not p:
        return "–"
    text = f"{100 * p['diff']:+.1f} ({100 * p['ci_low']:+.1f} to {100 * p['ci_high']:+.1f})"
    return f"**{text}**" if p["verdict"] != "no change" else text


def markdown(s: dict[str, Any], facts: list[str]) -> str:
    ckpts = s["checkpoints"]
    pair_keys = [f"{c}-{ckpts[0]}" for c in ckpts[1:]] + (
        [f"{ckpts[-1]}-{ckpts[-2]}"] if len(ckpts) > 2 else [])
    lines = ["# Transfer report", "", *facts, "",
             "Accuracy per item in percent (95% Wilson interval); differences in points, paired on "
             "the same items (95% bootstrap interval; bold where the interval excludes zero).", "",
             "| benchmark | items | chance | " + " | ".join(ckpts) + " | "
             + " | ".join(k.replace("-", " - ") for k in pair_keys) + " |",
             "|---|---:|---:|" + "---:|" * (len(ckpts) + len(pair_keys))]
    for name, b in s["benchmarks"].items():
        per = b["checkpoints"]
        first = per[ckpts[0]]
        cells = [f"{_pct(per[c]['accuracy'])} ({_pct(per[c]['ci_low'])}-{_pct(per[c]['ci_high'])})"
                 for c in ckpts]
        lines.append(f"| {display(name)} | {first['n']} | {_pct(first['chance'])} | "
                     + " | ".join(cells) + " | "
                     + " | ".join(_diff(b["paired"].get(k)) for k in pair_keys) + " |")
    g = s["goals"]
    lines += ["", "## Goal", ""]
    for name, gain in g["gains"].items():
        if gain is None:
            lines.append(f"- {display(name)}: not evaluated.")
        else:
            lines.append(f"- {display(name)}: {g['final']} - {g['against']} "
                         f"{gain['diff_points']:+.1f} points (interval from "
                         f"{gain['ci_low_points']:+.1f}): goal of +{GOAL_POINTS:.0f} beyond the "
                         f"interval **{'met' if gain['met'] else 'not met'}**.")
    lines.append("- Benchmarks that fell beyond their interval: "
                 + (", ".join(display(n) for n in g["fell"]) if g["fell"] else "none") + ".")
    if s.get("caveats"):
        lines += ["", "Gains that need not be Theory of Mind:", ""]
        lines += [f"- {display(n)}: " + "; ".join(notes) + "." for n, notes in s["caveats"].items()]
    shortcut_names = [n for n, b in s["benchmarks"].items() if b.get("shortcuts")]
    if shortcut_names:
        lines += ["", "## Question kinds and shortcut baselines", "", SHORTCUT_INTRO, ""]
        for name in shortcut_names:
            lines += [f"### {display(name)}", "",
                      *shortcut_table(s["benchmarks"][name]["shortcuts"], ckpts), ""]
    lines += ["", "![accuracy per benchmark and checkpoint](transfer.png)", "",
              "## How the replies were read", "",
              "Share of replies read by their answer tags / by the fallback for untagged replies "
              "/ not at all (scored wrong, counted apart); the most-chosen option position and "
              "its share of the multiple-choice answers (a habit shows as one letter far above "
              "1/options).", "",
              "| benchmark | " + " | ".join(ckpts) + " | most-chosen position |",
              "|---|" + "---|" * (len(ckpts) + 1)]
    for name, b in s["benchmarks"].items():
        per = b["checkpoints"]
        cells = [" / ".join(_pct(per[c]["read"][k]) for k in ("tag", "fallback", "unparsed"))
                 for c in ckpts]
        tops = ", ".join(f"{c} {per[c]['top_position']} {_pct(per[c]['top_position_share'])}%"
                         for c in ckpts if per[c].get("top_position"))
        lines.append(f"| {display(name)} | " + " | ".join(cells) + f" | {tops or '–'} |")
    lines += ["", "## Each benchmark's own headline metric", "",
              "| benchmark | metric | " + " | ".join(ckpts) + " |", "|---|---|" + "---:|" * len(ckpts)]
    for name, b in s["benchmarks"].items():
        per = b["checkpoints"]
        lines.append(f"| {display(name)} | {per[ckpts[0]]['primary_metric']} | "
                     + " | ".join(_pct(per[c]["score"]) for c in ckpts) + " |")
    return "\n".join(lines) + "\n"


def build(out: Path, checkpoints: tuple[str, ...] = CHECKPOINTS) -> dict[str, Any]:
    runs = {}
    for ckpt in checkpoints:
        folder = out / "eval" / ckpt
        if (folder / "results.json").is_file():
            runs[ckpt] = load_checkpoint(folder)
    if len(runs) < 2:
        raise ReportError(f"{out / 'eval'}: need results of at least two of "
                          f"{', '.join(checkpoints)} (eval run -o {out / 'eval'}/<checkpoint>)")
    s = summarise(runs)
    kinds = table_of_runs({c: run_samples(out / "eval" / c)[1] for c in runs})
    for name, groups in kinds.items():
        if name in s["benchmarks"]:
            s["benchmarks"][name]["shortcuts"] = groups
    rep = out / "report"
    rep.mkdir(parents=True, exist_ok=True)
    plot_transfer(s, rep / "transfer.png")
    facts = [f"- {c}: `{runs[c]['model']}`" for c in runs]
    md = markdown(s, facts)
    (rep / "report.md").write_text(md, encoding="utf-8")
    (rep / "report.html").write_text(html(md, rep), encoding="utf-8")
    (rep / "summary.json").write_text(json.dumps(s, indent=1) + "\n", encoding="utf-8")
    return s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--out", required=True, help="the run's folder (its eval/<checkpoint>/ results)")
    p.add_argument("--checkpoints", nargs="+", default=list(CHECKPOINTS),
                   help="checkpoint folders under OUT/eval, the first the base (default: base sft grpo)")
    args = p.parse_args(argv)
    try:
        s = build(Path(args.out), tuple(args.checkpoints))
    except (ReportError, OSError, ValueError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    print(f"report: {Path(args.out) / 'report' / 'report.md'} (and report.html)")
    print("goal " + ("met" if s["goals"]["met"] else "not met") + ": " + json.dumps(s["goals"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
