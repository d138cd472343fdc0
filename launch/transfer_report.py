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
answer (summary.json: `benchmarks.<name>.shortcuts`). Where a checkpoint thinks before it
answers, "What the thinks hold" says whether the thinking collapsed or looped, and how often its
claims of who was in the room are true on ToMi (`eval.think_report`; summary.json: `thinks`).
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
from eval.results import load_results, read_samples  # noqa: E402
from eval.selection import item_of  # noqa: E402
from eval.shortcut_report import INTRO as SHORTCUT_INTRO  # noqa: E402
from eval.shortcut_report import markdown_table as shortcut_table  # noqa: E402
from eval.shortcut_report import BENCHMARKS as SHORTCUT_BENCHMARKS  # noqa: E402
from eval.shortcut_report import table_of_runs  # noqa: E402
from eval.think_report import markdown as think_markdown  # noqa: E402
from eval.think_report import tables_of as think_tables  # noqa: E402
from eval.stats import paired_bootstrap, wilson  # noqa: E402

CHECKPOINTS = ("base", "sft", "grpo")
# The goal of the real-model recipe (issue 29): these gain >= 10 points beyond the interval
# (`make demo`'s quick profile asks ToMi +15 and Hi-ToM +8: --goal tomi=15 --goal hitom=8)
GOALS = {"tomi": 10.0, "hitom": 10.0}


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


def summarise(runs: dict[str, dict[str, Any]], goal_points: dict[str, float] | None = None) -> dict[str, Any]:
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
    out["goals"] = goals(out, ckpts, goal_points or GOALS)
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


def goals(summary: dict[str, Any], ckpts: list[str], goal_points: dict[str, float]) -> dict[str, Any]:
    """The recipe's goal: the final checkpoint against the base gains the given points (with its
    interval above zero) on each goal benchmark, and no benchmark falls beyond its interval."""
    final = ckpts[-1]
    key = f"{final}-{ckpts[0]}"
    gains = {}
    for name, points in goal_points.items():
        p = summary["benchmarks"].get(name, {}).get("paired", {}).get(key)
        gains[name] = {"goal_points": points} if p is None else {
            "goal_points": points, "diff_points": 100 * p["diff"], "ci_low_points": 100 * p["ci_low"],
            "ci_high_points": 100 * p["ci_high"], "met": 100 * p["diff"] >= points and p["ci_low"] > 0}
    fell = sorted(n for n, b in summary["benchmarks"].items()
                  if b["paired"].get(key, {}).get("verdict") == "loss")
    return {"final": final, "against": ckpts[0], "gains": gains, "fell": fell,
            "met": all(g.get("met") for g in gains.values()) and not fell}


def goal_lines(summary: dict[str, Any]) -> list[str]:
    """The goal as a Markdown table and a line on what fell (the report's first section, and what
    the demo prints when it ends)."""
    g = summary["goals"]
    lines = [f"| goal: {g['final']} - {g['against']} | points | 95% interval | goal | met |",
             "|---|---:|---|---:|---|"]
    for name, gain in g["gains"].items():
        if "diff_points" not in gain:
            lines.append(f"| {display(name)} | – | not evaluated | +{gain['goal_points']:g} | no |")
            continue
        lines.append(f"| {display(name)} | {gain['diff_points']:+.1f} | {gain['ci_low_points']:+.1f} to "
                     f"{gain['ci_high_points']:+.1f} | +{gain['goal_points']:g} | "
                     f"{'**yes**' if gain['met'] else 'no'} |")
    lines += ["", "Benchmarks that fell beyond their interval: "
              + (", ".join(display(n) for n in g["fell"]) if g["fell"] else "none") + ".",
              f"Goal {'**met**' if g['met'] else '**not met**'} (every goal benchmark gains its "
              "points with its interval above zero, and none falls)."]
    return lines


SHORTCUT_GAIN = 10.0  # points on true beliefs that, without false beliefs, read as the last-container shortcut
BELIEF_PROGRESS = 5.0


def _kind_rows(groups: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The shortcut report's rows of one question kind: the kind itself or each of its orders."""
    return [e for g, e in groups.items() if g == kind or g.startswith(f"{kind}, order ")]


def _pooled(figures: list[tuple[int, float]]) -> float | None:
    """The mean of (n, share) figures weighted by n; None without any."""
    n = sum(k for k, _ in figures)
    return sum(k * a for k, a in figures) / n if n else None


def belief_kinds(groups: dict[str, Any], ckpts: list[str]) -> dict[str, dict[str, float | None]]:
    """Accuracy per checkpoint on true and false beliefs of every order pooled, reality and memory."""
    out: dict[str, dict[str, float | None]] = {}
    for kind in ("true belief", "false belief", "reality", "memory"):
        rows = _kind_rows(groups, kind)
        per = {c: _pooled([(e["models"][c]["n"], e["models"][c]["accuracy"]) for e in rows
                           if c in e.get("models", {}) and e["models"][c]["accuracy"] is not None])
               for c in ckpts}
        if any(v is not None for v in per.values()):
            out[kind] = per
    return out


def shortcut_accuracy(groups: dict[str, Any], kind: str, shortcut: str) -> float | None:
    """What one shortcut (`last`, `first`, `most_named`, `true_place`) scores on a question kind,
    its orders pooled by n."""
    return _pooled([(e["n"], e["shortcuts"][shortcut]) for e in _kind_rows(groups, kind)
                    if (e.get("shortcuts") or {}).get(shortcut) is not None])


def kind_verdict(kinds: dict[str, dict[str, float | None]], ckpts: list[str],
                 last_on_true: float | None = None) -> str | None:
    """A sentence when the gain on beliefs is on true beliefs alone: what answering the object's
    true place scores (every true belief, no false one), not belief tracking. `last_on_true`, what
    the last container named scores on the true-belief questions, names that shortcut where it is
    the same one (all of ToMi's, a quarter of Hi-ToM's)."""
    first, last = ckpts[0], ckpts[-1]
    tb, fb = kinds.get("true belief", {}), kinds.get("false belief", {})
    if None in (tb.get(first), tb.get(last), fb.get(first), fb.get(last)):
        return None
    d_tb, d_fb = 100 * (tb[last] - tb[first]), 100 * (fb[last] - fb[first])
    if d_tb >= SHORTCUT_GAIN and d_fb < BELIEF_PROGRESS:
        here = (f" Here that is also the last container the story names (right on "
                f"{100 * last_on_true:.0f}% of the true-belief questions)."
                if last_on_true is not None and last_on_true >= 0.9 else "")
        return (f"The gain is on true beliefs ({d_tb:+.1f} points) and not on false beliefs ({d_fb:+.1f}): "
                "answering where the object really is scores every true-belief question and no "
                f"false-belief one, so this is that shortcut, not belief tracking.{here}")
    return (f"True beliefs {d_tb:+.1f} points, false beliefs {d_fb:+.1f}: the gain is not on true beliefs "
            "alone." if d_tb >= SHORTCUT_GAIN else None)


def habit_line(groups: dict[str, Any], ckpts: list[str]) -> str | None:
    """Where each checkpoint names the last and the first container: on the questions where that
    container is the answer / where it is not, over every location question. Accuracy can rise
    with a habit (answering the first container named scores many false beliefs); naming a
    container as often where it is wrong as where it is right is a habit, not a reading; and
    naming no container of the story (an option it favours, a room) is not a reading either."""
    models = (groups.get("all") or {}).get("models", {})
    names = {c: (models.get(c) or {}).get("names") or {} for c in ckpts}
    parts = []
    for shortcut, label in (("last", "the last container named"), ("first", "the first")):
        cells = [f"{c} {_pct(names[c][shortcut]['right'])} / {_pct(names[c][shortcut]['wrong'])}"
                 for c in ckpts if (names[c].get(shortcut) or {}).get("wrong") is not None]
        if cells:
            parts.append(f"{label}: " + ", ".join(cells))
    if not parts:
        return None
    off = [(c, (models.get(c) or {}).get("off_story")) for c in ckpts]
    line = ("Names, where it is the answer / where it is not (%): " + "; ".join(parts)
            + ". A reader of minds names a container only where it is the answer.")
    if any(share for _, share in off):
        line += (" Answers naming no container of the story (a room, a person, an option the "
                 "story never mentions; not read from it) (%): "
                 + ", ".join(f"{c} {_pct(share)}" for c, share in off if share is not None) + ".")
    return line


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
    lines = ["# Transfer report", "", *goal_lines(s), "", "![accuracy per benchmark and checkpoint](transfer.png)", ""]
    for name, b in s["benchmarks"].items():
        groups = b.get("shortcuts") or {}
        kinds = belief_kinds(groups, ckpts)
        if kinds:
            lines.append(f"- {display(name)} by question kind ({' -> '.join(ckpts)}): " + "; ".join(
                f"{kind} " + " -> ".join(_pct(per.get(c)) for c in ckpts) for kind, per in kinds.items()) + ".")
            verdict = kind_verdict(kinds, ckpts, shortcut_accuracy(groups, "true belief", "last"))
            if verdict:
                lines.append(f"  {verdict}")
            habit = habit_line(groups, ckpts)
            if habit:
                lines.append(f"  {habit}")
    lines += ["", "Models:", "", *facts, "",
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
    if s.get("caveats"):
        lines += ["", "Gains that need not be Theory of Mind:", ""]
        lines += [f"- {display(n)}: " + "; ".join(notes) + "." for n, notes in s["caveats"].items()]
    shortcut_names = [n for n, b in s["benchmarks"].items() if b.get("shortcuts")]
    if shortcut_names:
        lines += ["", "## Question kinds and shortcut baselines", "", SHORTCUT_INTRO, ""]
        for name in shortcut_names:
            lines += [f"### {display(name)}", "",
                      *shortcut_table(s["benchmarks"][name]["shortcuts"], ckpts), ""]
    thinks = s.get("thinks") or {}
    if any((t.get("think") or 0) > 0 for per in thinks.values() for t in per.values()):
        lines += ["", "## What the thinks hold", "",
                  "In percent of the replies (`python -m eval.think_report`, docs/eval.md): a "
                  "collapsed think is empty or repeats another item's word for word; an unclosed "
                  "one was cut at the token limit. On ToMi, the think's claims of who was in the "
                  "room at each step it names, checked against the story.", "",
                  think_markdown(thinks)]
    lines += ["", "## How the replies were read", "",
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


def build(out: Path, checkpoints: tuple[str, ...] = CHECKPOINTS,
          goal_points: dict[str, float] | None = None) -> dict[str, Any]:
    runs = {}
    for ckpt in checkpoints:
        folder = out / "eval" / ckpt
        if (folder / "results.json").is_file():
            runs[ckpt] = load_checkpoint(folder)
    if len(runs) < 2:
        raise ReportError(f"{out / 'eval'}: need results of at least two of "
                          f"{', '.join(checkpoints)} (eval run -o {out / 'eval'}/<checkpoint>)")
    s = summarise(runs, goal_points)
    samples = {c: read_samples(out / "eval" / c)[1] for c in runs}  # read once, used twice
    kinds = table_of_runs({c: {n: lines for n, lines in per.items() if n in SHORTCUT_BENCHMARKS}
                           for c, per in samples.items()})
    for name, groups in kinds.items():
        if name in s["benchmarks"]:
            s["benchmarks"][name]["shortcuts"] = groups
            s["benchmarks"][name]["kinds"] = belief_kinds(groups, list(runs))
    s["thinks"] = {c: think_tables(per) for c, per in samples.items()}
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
    p.add_argument("--goal", action="append", type=_goal, metavar="NAME=POINTS",
                   help="a goal benchmark and the points the last checkpoint must gain over the base, "
                        "interval above zero (repeatable; default: tomi=10 hitom=10)")
    args = p.parse_args(argv)
    try:
        s = build(Path(args.out), tuple(args.checkpoints), dict(args.goal) if args.goal else None)
    except (ReportError, OSError, ValueError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    print(f"report: {Path(args.out) / 'report' / 'report.md'} (and report.html)")
    print("goal " + ("met" if s["goals"]["met"] else "not met") + ": " + json.dumps(s["goals"]))
    return 0


def _goal(text: str) -> tuple[str, float]:
    name, sep, points = text.partition("=")
    try:
        if sep and name:
            return name, float(points)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"--goal takes NAME=POINTS (e.g. tomi=15), got {text!r}")


if __name__ == "__main__":
    sys.exit(main())
