"""The datasets: ToM-Synth-27K, ToM-Synth-27K-Contrast and ToM-Synth-Merged-55K.

Each is a Hugging Face `DatasetDict` saved under `<out_dir>/datasets/<name>/`, in the row
contract of DESIGN.md (`answer_type` "choice", `choices` = the 4 option texts, `answer` = the
letter) with the unit factors in `meta`, and a dataset card (`README.md`) with the statistics per
dimension, domain, format and filter stage. Rows are sorted by id, so two runs that generated the
same entries build identical datasets.
"""
from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from eval.rows import features, make_row, meta
from tomsynth.config import Config
from tomsynth.generate import raw_records
from tomsynth.items import Item
from tomsynth.prompts import question_text
from tomsynth.quality import PAPER, filtered_path, load_filtered, verdicts_path
from eval.jsonl import complete_records
from tomsynth.units import unit_by_id

NAMES = {"main": "ToM-Synth-27K", "contrast": "ToM-Synth-27K-Contrast", "merged": "ToM-Synth-Merged-55K"}
SOURCE = "tomsynth"


class NothingToBuild(RuntimeError):
    """`build` was run before `filter`."""



def item_row(it: Item, generator: str, verifier: str) -> dict[str, Any]:
    unit = unit_by_id(it.unit)
    return make_row(
        id=it.entry_id, source=SOURCE, user=question_text(it.format, it.text, it.question, it.options),
        answer=it.answer, answer_type="choice", choices=it.options,
        meta={**unit.factors(), "entry": it.k, "story": it.text, "question": it.question,
              "analysis": it.analysis, "original_options": it.original_options,
              "original_answer": it.original_answer, "generator": generator, "verifier": verifier},
    )


def in_test(unit_id: str, fraction: float) -> bool:
    """Whole units go to the test split, chosen by a hash of the unit id (stable across runs)."""
    if fraction <= 0:
        return False
    h = int(hashlib.sha256(unit_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return h < fraction


def dataset_dict(rows: list[dict[str, Any]], test_fraction: float):
    from datasets import Dataset, DatasetDict

    rows = sorted(rows, key=lambda r: r["id"])
    splits = {"train": [r for r in rows if not in_test(meta(r)["unit"], test_fraction)]}
    if test_fraction > 0:
        splits["test"] = [r for r in rows if in_test(meta(r)["unit"], test_fraction)]
    # An empty split cannot be saved and loaded back by `datasets`: leave it out.
    return DatasetDict({k: Dataset.from_list(v, features=features()) for k, v in splits.items() if v})


def run(cfg: Config) -> dict[str, Path]:
    """Build every dataset whose collections were generated; returns name -> directory."""
    missing = [c for c in cfg.collections if not filtered_path(cfg, c).exists()]
    if missing:
        raise NothingToBuild(f"no filtered entries for collection(s) {', '.join(missing)} in {cfg.out_dir}: "
                             f"run `python -m tomsynth generate` and `filter` first")
    gen, ver = cfg.generator.model, cfg.verifier.model
    rows = {c: [item_row(it, gen, ver) for it in load_filtered(cfg, c)] for c in cfg.collections}
    reports = {c: _read_json(cfg.out_dir / "reports" / f"filter-{c}.json") for c in cfg.collections}
    built: dict[str, Path] = {}
    plan = [(NAMES[c], [c]) for c in cfg.collections]
    if set(cfg.collections) == {"main", "contrast"}:
        plan.append((NAMES["merged"], ["main", "contrast"]))
    usage = usage_totals(cfg)
    for name, cols in plan:
        all_rows = [r for c in cols for r in rows[c]]
        if not all_rows:
            continue  # every entry was filtered out (datasets cannot save an empty DatasetDict)
        dd = dataset_dict(all_rows, cfg.build.test_fraction)
        target = cfg.out_dir / "datasets" / name
        tmp = target.with_name(target.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        dd.save_to_disk(str(tmp))
        (tmp / "README.md").write_text(card(name, cols, dd, {c: reports[c] for c in cols}, cfg, usage),
                                       encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        built[name] = target
    if not built:
        raise NothingToBuild(f"no entry of {', '.join(cfg.collections)} passed the filter: nothing to build")
    return built


def _read_json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def usage_totals(cfg: Config) -> dict[str, dict[str, Any]]:
    """Requests, tokens and cost per role, summed from the logged records themselves.

    Every generator and verifier record carries its own token counts, so the totals stay right
    however often a run was killed and resumed (a killed run never writes its usage report).
    Replies served from the response cache are counted apart: they were not billed again.
    """
    totals: dict[str, Counter] = {}
    unpriced: dict[str, set[str]] = {}
    for role, records in (("generator", raw_records(cfg)), ("verifier", complete_records(verdicts_path(cfg)))):
        for r in records:
            t = totals.setdefault(role, Counter())
            t["requests"] += 1
            if not r.get("ok"):
                t["errors"] += 1
            prompt, completion = r.get("prompt_tokens") or 0, r.get("completion_tokens") or 0
            if r.get("cached"):
                t["cached"] += 1
                continue
            t["prompt_tokens"] += prompt
            t["completion_tokens"] += completion
            price = cfg.prices.get(r.get("model", ""))
            if price is None:
                if prompt or completion:
                    unpriced.setdefault(role, set()).add(r.get("model", "?"))
            else:
                t["cost_usd"] += (prompt * price.input + completion * price.output) / 1e6
    out = {}
    for role, t in totals.items():
        u: dict[str, Any] = {k: t[k] for k in ("requests", "cached", "errors", "prompt_tokens", "completion_tokens")}
        # A cost over some models only would understate the total: say it is unknown instead.
        u["cost_usd"] = None if role in unpriced else round(t["cost_usd"], 6)
        u["unpriced_models"] = sorted(unpriced.get(role, ()))
        out[role] = u
    return out


def distributions(rows: list[dict[str, Any]]) -> dict[str, Counter]:
    out: dict[str, Counter] = {k: Counter() for k in ("dimension", "domain", "format", "mental_state", "answer")}
    for r in rows:
        m = meta(r)
        for k in ("dimension", "domain", "format", "mental_state"):
            out[k][m[k]] += 1
        out["answer"][r["answer"]] += 1
    return out


def _table(title: str, counts: Counter, total: int) -> list[str]:
    lines = [f"| {title} | entries | share |", "|---|---|---|"]
    lines += [f"| {k} | {v} | {100 * v / total:.1f}% |" for k, v in sorted(counts.items())]
    return lines + [""]


def card(name: str, collections: list[str], dd, reports: dict[str, dict | None], cfg: Config,
         usage: dict[str, dict[str, Any]]) -> str:
    rows = [r for split in dd.values() for r in split]
    n = len(rows)
    dist = distributions(rows)
    size = "n<1K" if n < 1000 else "1K<n<10K" if n < 10000 else "10K<n<100K"
    units = len({meta(r)["unit"] for r in rows})
    lines = [
        "---", f"pretty_name: {name}", "language:", "- en", "task_categories:", "- multiple-choice",
        "- question-answering", "size_categories:", f"- {size}", "tags:", "- theory-of-mind",
        "- synthetic", "---", "", f"# {name}", "",
        "Multiple-choice Theory of Mind items written by a language model for structured social units "
        "(mental state x social situation x presentation format), following the ToM-Synth recipe, "
        "then passed through a three-stage quality filter (format and consistency, answer-letter "
        "balancing, cross-model verification). Built by `python -m tomsynth build` of this project.", "",
        f"- Collections: {', '.join(collections)}; {units} units, {n} entries "
        f"({', '.join(f'{k}: {len(v)}' for k, v in dd.items())}).",
        f"- Generator: {cfg.generator.backend} `{cfg.generator.model}`; verifier: {cfg.verifier.backend} "
        f"`{cfg.verifier.model}`; entries requested per unit: "
        + ", ".join(f"{c} {cfg.entries_per_unit[c]}" for c in collections) + ".",
        "- Rows follow the project's row contract: `prompt` (system + user turns), `answer` (a letter), "
        "`answer_type` = `choice`, `choices` (the 4 option texts), `meta` (JSON: unit, collection, "
        "dimension, mental_state, domain, situation, format, entry, story, question, analysis, "
        "original_options/original_answer before balancing; the analysis refers to the original letters).",
        "- Before publishing, check the terms of use of the models that wrote and judged the data and "
        "choose a license accordingly.", "",
        "## Filter stages", "",
        "| collection | generated | stage 1 dropped | stage 3 dropped | kept |", "|---|---|---|---|---|",
    ]
    for c in collections:
        r = reports.get(c)
        if r:
            s1, s3 = r["stage1"], r["stage3"]
            lines.append(f"| {c} | {s1['generated']} | {s1['dropped']} ({_pct(s1['drop_rate'])}) | "
                         f"{s3['dropped']} ({_pct(s3['drop_rate'])}) | {r['final']} |")
    lines += [f"| paper (27K) | {PAPER['generated']} | {PAPER['stage1_dropped']} ({_pct(PAPER['stage1_drop_rate'])}) | "
              f"{PAPER['stage3_dropped']} ({_pct(PAPER['stage3_drop_rate'])}) | {PAPER['final']} |", ""]
    for c in collections:
        r = reports.get(c)
        if r:
            reasons = r["stage1"]["reasons"]
            judgments = r["stage3"]["judgments"]
            lines += [f"Stage 1 reasons ({c}): " + (", ".join(f"{k} {v}" for k, v in reasons.items()) or "none") + ".",
                      f"Stage 3 judgments ({c}): " + (", ".join(f"{k} {v}" for k, v in judgments.items()) or "none") + ".",
                      f"Option length ({c}): correct option longest in "
                      f"{_pct(r['stage2']['length_bias']['correct_longest_rate'])}, shortest in "
                      f"{_pct(r['stage2']['length_bias']['correct_shortest_rate'])} (chance 25%).", ""]
    lines += ["## Distributions", ""]
    if n:
        for key, title in (("dimension", "dimension"), ("domain", "domain"), ("format", "format"),
                           ("answer", "answer letter")):
            lines += _table(title, dist[key], n)
        lines += _table("mental state", dist["mental_state"], n)
    else:
        lines += ["(empty)", ""]
    if usage:
        lines += ["## Tokens and cost", "",
                  "Summed over every logged request of every run (resumed runs included); replies served "
                  "from the response cache are not billed again.", "",
                  "| role | requests | from cache | failed | prompt tokens | completion tokens | cost (USD) |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {role} | {u['requests']} | {u['cached']} | {u['errors']} | {u['prompt_tokens']} | "
                  f"{u['completion_tokens']} | {_cost(u)} |" for role, u in sorted(usage.items())]
        lines.append("")
    return "\n".join(lines)


def _cost(u: dict[str, Any]) -> str:
    if u["cost_usd"] is None:
        return "unknown (no price for " + ", ".join(f"`{m}`" for m in u["unpriced_models"]) + ")"
    return f"{u['cost_usd']:.2f}"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"
