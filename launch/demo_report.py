"""The report of the embedded default (launch/demo.py): Markdown and self-contained HTML.

    python launch/demo_report.py --out runs/demo

Reads what the stages wrote under OUT and writes OUT/report/: report.md, report.html (images
embedded), the PNG plots and summary.json. Accuracies come with Wilson 95% intervals; GRPO
against SFT is compared on the same test questions (paired bootstrap interval of the
difference and an exact McNemar test), so the claim "GRPO beats SFT" is made only when the
interval of the difference excludes zero. summary.json holds, per checkpoint, every question group
(all, each property, order, property and order, false_belief, interesting, container_belief) as
{n, accuracy, ci_low, ci_high}, and the chance level of each group (uniform guessing among the
answers the question admits). `derived` holds, per trained checkpoint and group, the share
answered right with a think text that the trace checker (exploretom.semantics.trace_check, written
apart from the tracker) accepts as a derivation, from the per-sample verdicts of `eval run`: a right
answer after a wrong derivation is a guess that accuracy counts and this does not. A run of `launch/demo.py --profile smoke` is labelled as
such: its sizes are toys and the report draws no conclusion from them.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.jsonl import InputError, numbered_records
from eval.paths import describe_error
from eval.report_html import html
from report_plots import all_zero, plot_breakdown, plot_checkpoints, plot_curves, plot_search
from eval.stats import mcnemar_exact, paired_bootstrap, wilson

CHECKPOINTS = ("base", "sft", "grpo")
STAGE_ORDER = ("data", "compare", "export", "model", "sft", "grpo", "eval", "report")
BREAKDOWNS = (("order", "order"), ("property", "property"), ("kind", "kind"),
              ("interesting", "interesting"), ("answer_type", "answer type"))


class ReportError(RuntimeError):
    pass


# ------------------------------------------------------------------------- statistics
# ------------------------------------------------------------------------- groups
def groups_of(record: dict[str, Any]) -> list[str]:
    """The question groups a test record belongs to (the keys of summary.json's `groups`)."""
    meta = record.get("meta") or {}
    prop, order = meta.get("property"), meta.get("order")
    out = ["all", f"property={prop}", f"order={order}", f"property={prop},order={order}"]
    if meta.get("false_belief"):
        out.append("false_belief")
    if meta.get("interesting"):
        out.append("interesting")
    if prop == "container_location" and order in (1, 2):
        out.append("container_belief")  # where someone thinks an object is: needs who saw what
    return out


def chance(record: dict[str, Any]) -> float:
    """Probability that a uniform guess among the answers the question admits is right: one of
    two for yes/no and knowledge questions, one of the options for a choice, and for a location
    one of the containers or rooms that the story text names (not all of its setting's: the
    stricter baseline)."""
    meta = record.get("meta") or {}
    if record.get("choices"):
        return 1 / len(record["choices"])
    context = (meta.get("story") or {}).get("context") or {}
    names = {"container_location": context.get("containers"),
             "room_location": context.get("rooms")}.get(meta.get("property"))
    if not names:
        return 0.5
    text = " ".join(m.get("content", "") for m in record.get("prompt") or []
                    if isinstance(m, dict))
    named = [n for n in names if n in text]
    return 1 / len(named or names)


def group_table(rows: dict[str, dict[str, Any]], ids: list[str]) -> dict[str, dict[str, Any]]:
    """group -> {n, accuracy, ci_low, ci_high} over the records `ids`."""
    return _rates({i: bool(rows[i]["correct"]) for i in ids}, rows, "accuracy")


def _rates(hit: dict[str, bool], rows: dict[str, dict[str, Any]], name: str) -> dict[str, dict[str, Any]]:
    """group -> {n, <name>, ci_low, ci_high} over the records of `hit`."""
    hits: dict[str, list[bool]] = defaultdict(list)
    for i, ok in hit.items():
        for g in groups_of(rows[i]):
            hits[g].append(ok)
    out = {}
    for g in sorted(hits, key=lambda g: (g != "all", g)):
        k, n = sum(hits[g]), len(hits[g])
        lo, hi = wilson(k, n)
        out[g] = {"n": n, name: k / n, "ci_low": lo, "ci_high": hi}
    return out


def derived_table(rows: dict[str, dict[str, Any]], ids: list[str]) -> dict[str, dict[str, Any]]:
    """group -> {n, derived, ci_low, ci_high}: the share of the group's questions answered right
    with a derivation the checker accepts (the `derived` verdict `eval run` wrote per sample), over
    the questions that have a story to check against."""
    hit = {i: bool(rows[i]["derived"]) for i in ids if rows[i].get("derived") is not None}
    return _rates(hit, rows, "derived")


# ------------------------------------------------------------------------- inputs
def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a run's JSONL file, [] before it exists; a line cut short by a kill is
    passed over."""
    if not path.exists():
        return []
    try:
        return [record for _, record in numbered_records(path, skip_torn=True)]
    except InputError as e:
        raise ReportError(str(e)) from None


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


# ------------------------------------------------------------------------- report
def build(out: Path) -> dict[str, Any]:
    rep = out / "report"
    rep.mkdir(parents=True, exist_ok=True)
    run_path = out / "demo.json"  # written by launch/demo.py: the profile and its sizes
    run = json.loads(run_path.read_text()) if run_path.exists() else {}
    summary: dict[str, Any] = {"profile": run.get("profile"),
                               "smoke": run.get("profile") == "smoke", "stages": {}}
    for stage in STAGE_ORDER:
        path = out / "stages" / f"{stage}.json"
        if path.exists():
            entry = json.loads(path.read_text())
            summary["stages"][stage] = entry["seconds"]
            if "cpu_seconds" in entry:
                summary.setdefault("stage_cpu_seconds", {})[stage] = entry["cpu_seconds"]
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
    summary["groups"] = {c: group_table(rows, ids if c in trained else sorted(rows))
                         for c, rows in per_ckpt.items()}
    summary["derived"] = {c: table for c in trained
                          if (table := derived_table(per_ckpt[c], ids))}
    if not summary["derived"] and any("story" in (r.get("meta") or {}) and "derived" not in r
                                      for c in trained for r in per_ckpt[c].values()):
        summary["derived_missing"] = True  # samples written before eval run checked derivations
    first = per_ckpt[trained[0]]
    by_group: dict[str, list[float]] = defaultdict(list)
    for i in ids:
        for g in groups_of(first[i]):
            by_group[g].append(chance(first[i]))
    summary["chance"] = {g: sum(v) / len(v) for g, v in by_group.items()}

    verdict = ""
    if "sft" in per_ckpt and "grpo" in per_ckpt:
        paired = {}
        for g in ("all", "container_belief", "false_belief"):
            sel = [i for i in ids if g in groups_of(first[i])]
            if not sel:
                continue
            a = [bool(per_ckpt["sft"][i]["correct"]) for i in sel]
            b = [bool(per_ckpt["grpo"][i]["correct"]) for i in sel]
            diff, lo, hi = paired_bootstrap(a, b)
            paired[g] = {"n": len(sel), "diff": diff, "ci95": [lo, hi],
                         "mcnemar_p": mcnemar_exact(a, b)}
        summary["paired"] = paired
        summary["grpo_minus_sft"] = {k: paired["all"][k] for k in ("diff", "ci95", "mcnemar_p")}
        diff, (lo, hi), p = paired["all"]["diff"], paired["all"]["ci95"], paired["all"]["mcnemar_p"]
        if summary["smoke"]:
            verdict = (f"Smoke run: GRPO minus SFT is {100 * diff:+.1f} points on {len(ids)} "
                       "questions after a few steps at toy sizes; no conclusion is drawn.")
        elif lo > 0:
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
        chart = rep / f"accuracy_by_{label.replace(' ', '_')}.png"
        chart.unlink(missing_ok=True)  # no stale chart from an earlier report
        if not all_zero(breakdown[label]):  # bars of height zero show nothing: said in words
            plot_breakdown(breakdown[label], f"accuracy by {label}", chart)
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


GROUP_NAMES = {"all": "all questions", "container_belief": "container beliefs (orders 1-2)",
               "false_belief": "false beliefs", "interesting": "interesting"}


DERIVED_GROUPS = ("all", "container_belief", "false_belief", "order=0", "order=1", "order=2",
                  "order=3", "order=4")
IN_GROUPS = ("order", "property", "interesting")  # breakdowns the group table already has


def _cell(v: dict[str, Any] | None, with_n: bool = False) -> str:
    if v is None:
        return "-"
    cell = f"{_pct(v['accuracy'])} ({100 * v['ci_low']:.1f}-{100 * v['ci_high']:.1f})"
    return cell + (f", n={v['n']}" if with_n else "")


def markdown(s: dict[str, Any], data: dict[str, Any], grpo_log: list[dict]) -> str:
    lines = ["# The embedded default: ExploreToM data -> tiny model -> SFT -> GRPO", ""]
    if s.get("smoke"):
        lines += ["**Smoke run** (`launch/demo.py --profile smoke`): every stage at toy sizes (a "
                  "few training steps, a few dozen questions) to check that the pipeline runs. "
                  "The figures below are not measurements of anything; `make demo` runs the "
                  "real sizes.", ""]
    total = sum(s["stages"].values())
    lines += ["Stages (seconds): " + ", ".join(f"{k} {v:.0f}" for k, v in s["stages"].items())
              + f"; total {total:.0f} s ({total / 60:.1f} min).", ""]
    if s.get("stage_cpu_seconds"):  # on shared cores wall time overstates the cost
        cpu = s["stage_cpu_seconds"]
        lines += ["CPU seconds of the stages' processes: "
                  + ", ".join(f"{k} {v:.0f}" for k, v in cpu.items())
                  + f"; total {sum(cpu.values()):.0f} s.", ""]
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
                  f"baseline {_pct(c['baseline'])} (lower is harder).", "",
                  "![A* vs baseline](astar_vs_baseline.png)", ""]
    lines += ["## Accuracy on the held-out test split", "",
              f"{s['n_test']} test questions (stories never seen in training; the random base "
              "model on a sample of them), greedy decoding; 95% Wilson intervals.",
              "", "| checkpoint | questions | accuracy | 95% interval | well-formatted replies |",
              "|---|---|---|---|---|"]
    for c, v in s["accuracy"].items():
        lo, hi = v["ci95"]
        lines.append(f"| {c} | {v['n']} | {_pct(v['accuracy'])} | {_pct(lo)} - {_pct(hi)} | "
                     f"{_pct(s['format_ok'][c])} |")
    lines += ["", f"**{s['verdict']}**" if s["verdict"] and not s.get("smoke") else s["verdict"],
              "", "![accuracy per checkpoint](accuracy_by_checkpoint.png)", ""]
    groups = s.get("groups", {})
    trained = [c for c in ("sft", "grpo") if c in groups]
    ref = groups[trained[0]] if trained else next(iter(groups.values()), {})
    if ref:
        ckpts = list(groups)
        lines += ["### By question group", "",
                  "Accuracy (95% interval) per group; n counts the test questions of the trained "
                  "checkpoints (the base model's own sample size is given in its cells). Chance: "
                  "a uniform guess among the answers the question admits (yes/no; the containers "
                  "or rooms the story names).", "",
                  "| group | n | chance | " + " | ".join(ckpts) + " |",
                  "|---|---|---|" + "---|" * len(ckpts)]
        for g, v in ref.items():
            cells = [_cell(groups[c].get(g), with_n=groups[c].get(g, v)["n"] != v["n"])
                     for c in ckpts]
            lines.append(f"| {GROUP_NAMES.get(g, g)} | {v['n']} | "
                         f"{_pct(s['chance'].get(g, 0))} | " + " | ".join(cells) + " |")
        lines.append("")
        last = groups[trained[-1]] if trained else ref
        fb = last.get("false_belief")
        if fb:
            c = s["chance"]["false_belief"]
            above = fb["ci_low"] > c
            fb_derived = (s.get("derived") or {}).get(trained[-1] if trained else "", {}).get(
                "false_belief")
            lines += [f"False-belief questions ({fb['n']}), final checkpoint: {_cell(fb)} "
                      f"against chance {_pct(c)}: "
                      + ("above chance by more than the interval" if above
                         else "NOT above chance by more than the interval")
                      + (f"; right with a checked derivation: {_pct(fb_derived['derived'])}."
                         if fb_derived else "."), ""]
    derived = s.get("derived") or {}
    if s.get("derived_missing"):
        lines += ["No share right with a checked derivation: these samples were written before "
                  "`eval run` recorded a `derived` verdict per sample. To re-score them, remove "
                  "`stages/eval.json` and `stages/report.json` from the run's folder and run the "
                  "demo again with the same options: the evaluation reuses its cached replies.", ""]
    if derived:
        ckpts = list(derived)
        lines += ["### Right with a checked derivation", "",
                  "The share of questions answered right with a think text that the trace "
                  "checker (`exploretom.semantics.trace_check`, written apart from the tracker) "
                  "accepts: every step it names, who saw it and what each mind then holds is what the "
                  "story implies, and no step that matters is missing. A right answer after a "
                  "wrong derivation counts in the accuracy above, not here.", "",
                  "| group | n | " + " | ".join(ckpts) + " |", "|---|---|" + "---|" * len(ckpts)]
        ref = derived[ckpts[0]]
        for g in [g for g in DERIVED_GROUPS if g in ref]:
            cells = [_pct(derived[c][g]["derived"]) + f" ({100 * derived[c][g]['ci_low']:.1f}-"
                     f"{100 * derived[c][g]['ci_high']:.1f})" for c in ckpts]
            lines.append(f"| {GROUP_NAMES.get(g, g)} | {ref[g]['n']} | " + " | ".join(cells) + " |")
        lines.append("")
    if s.get("paired"):
        lines += ["### GRPO minus SFT on the same questions", "",
                  "| group | n | difference (points) | paired 95% interval | McNemar p |",
                  "|---|---|---|---|---|"]
        for g, v in s["paired"].items():
            lo, hi = v["ci95"]
            lines.append(f"| {GROUP_NAMES.get(g, g)} | {v['n']} | {100 * v['diff']:+.1f} | "
                         f"{100 * lo:+.1f} to {100 * hi:+.1f} | {v['mcnemar_p']:.2g} |")
        lines.append("")
    for label, table in s["breakdowns"].items():
        lines += [f"### By {label}", ""]
        if label not in IN_GROUPS:  # the others have their rows, with intervals, above
            cols = sorted({g for per in table.values() for g in per})
            lines += ["| checkpoint | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
            for ckpt, per in table.items():
                lines.append(f"| {ckpt} | " + " | ".join(_pct(per.get(g, 0)) for g in cols)
                             + " |")
            lines.append("")
        if all_zero(table):
            lines += ["(No chart: every checkpoint scores 0% in every group.)", ""]
        else:
            lines += [f"![by {label}](accuracy_by_{label.replace(' ', '_')}.png)", ""]
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
