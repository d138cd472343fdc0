"""The three-stage quality filter over everything generated so far (paper, section 3.3).

Stage 1 checks format and consistency, stage 2 balances the correct letter and measures option
length bias, stage 3 asks a verifier model (which may be another provider and model than the
generator) to judge each balanced item: only PASS stays. Verdicts are appended to
`<out_dir>/verify/verdicts.jsonl` as they arrive, keyed by entry and item content, so the filter
can be re-run or interrupted at any point without judging an item twice. The surviving items go
to `<out_dir>/filtered/<collection>.jsonl` and each stage's counts and reasons to
`<out_dir>/reports/filter-<collection>.{json,md}`, next to the paper's figures.
"""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from eval.backends.base import Completion
from eval.jsonl import write_json, write_jsonl
from eval.replies import text_problem
from tomsynth.config import Config
from tomsynth.generate import raw_records
from tomsynth.items import Item, Rejected, balance, check_reply, length_bias, letter_distribution, parse_verdict
from tomsynth.prompts import verification_messages
from eval.jsonl import Appender, complete_records
from tomsynth.units import unit_by_id

# The paper's own figures (section 3.3): 27,648 generated, 89 dropped at stage 1, 1,703 of the
# remaining 27,559 dropped at stage 3, 25,856 kept.
PAPER = {"generated": 27648, "stage1_dropped": 89, "stage1_drop_rate": round(89 / 27648, 4),
         "stage3_dropped": 1703, "stage3_drop_rate": round(1703 / 27559, 4), "final": 25856}


def verdicts_path(cfg: Config) -> Path:
    return cfg.out_dir / "verify" / "verdicts.jsonl"


def filtered_path(cfg: Config, collection: str) -> Path:
    return cfg.out_dir / "filtered" / f"{collection}.jsonl"


def stage1(cfg: Config) -> tuple[dict[str, list[Item]], dict[str, dict[str, Any]]]:
    """Items passing stage 1 per collection, and per-collection stage-1 reports."""
    first_ok: dict[str, dict] = {}
    failed: dict[str, str] = {}  # entry -> collection, for entries whose requests failed
    for r in raw_records(cfg):
        eid = r.get("entry_id")
        if not isinstance(eid, str):
            continue
        if r.get("ok") and isinstance(r.get("text"), str):
            first_ok.setdefault(eid, r)
        else:
            failed[eid] = str(r.get("collection"))
    items: dict[str, list[Item]] = defaultdict(list)
    reasons: dict[str, Counter] = defaultdict(Counter)
    repairs: dict[str, Counter] = defaultdict(Counter)
    examples: dict[str, dict[str, str]] = defaultdict(dict)
    for eid in sorted(first_ok):
        r = first_ok[eid]
        try:
            unit = unit_by_id(r["unit"])
        except KeyError:
            reasons[r.get("collection", "?")]["unknown_unit"] += 1
            continue
        if unit.collection not in cfg.collections:
            continue
        try:
            # a cut-off or refused reply is dropped before it is read (eval.replies)
            found = text_problem(r["text"], str(r.get("finish_reason") or ""))
            if found:
                raise Rejected(found)
            item = check_reply(r["text"], unit, int(r["k"]), cfg.filter)
        except Rejected as e:
            reasons[unit.collection][e.reason] += 1
            examples[unit.collection].setdefault(e.reason, eid)
            continue
        items[unit.collection].append(item)
        repairs[unit.collection].update(item.repairs)
    reports = {}
    for c in cfg.collections:
        n_in = len(items[c]) + sum(reasons[c].values())
        pending = sum(1 for e, col in failed.items() if col == c and e not in first_ok)
        reports[c] = {
            "generated": n_in, "generation_failed_pending": pending,
            "in": n_in, "kept": len(items[c]), "dropped": n_in - len(items[c]),
            "drop_rate": round((n_in - len(items[c])) / n_in, 4) if n_in else None,
            "reasons": dict(reasons[c].most_common()), "example_entry_per_reason": examples[c],
            "repairs": dict(repairs[c].most_common()),
        }
    return items, reports


def stage2(items: list[Item]) -> tuple[list[Item], dict[str, Any]]:
    balanced = [balance(it) for it in items]
    return balanced, {"letters_before": letter_distribution(items),
                      "letters_after": letter_distribution(balanced),
                      "length_bias": length_bias(balanced)}


def stage3(cfg: Config, items: list[Item], progress: bool = True) -> tuple[dict[str, dict], dict[str, Any]]:
    """Verdicts for `items` (asking the verifier only about those not judged yet) and usage."""
    path = verdicts_path(cfg)
    known: dict[tuple[str, str], dict] = {}
    for r in complete_records(path):
        # A verdict counts only for the exact item content and the configured verifier model.
        if r.get("ok") and r.get("backend") == cfg.verifier.backend and r.get("model") == cfg.verifier.model:
            known.setdefault((r.get("entry_id"), r.get("item_hash")), r)
    todo = [it for it in items if (it.entry_id, it.content_hash()) not in known]
    usage: dict[str, Any] = {}
    if todo:
        backend = cfg.backend("verifier")
        gen = cfg.verifier.generation()
        log = Appender(path, exclusive=True, sort_keys=True)

        def on_result(i: int, c: Completion) -> None:
            it = todo[i]
            record = {"entry_id": it.entry_id, "item_hash": it.content_hash(), "ok": c.ok,
                      "error": c.error, "backend": backend.name, "model": backend.model,
                      "prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
                      "cached": c.cached, "reply": c.text[:4000] if c.ok else None}
            if c.ok:
                found = text_problem(c.text, c.finish_reason())
                # a cut-off or refused verdict is no verdict: it drops the item, as UNPARSEABLE does
                record.update({"judgment": found.upper(), "correct_answer": None, "reason": found}
                              if found else parse_verdict(c.text))
                known[(it.entry_id, record["item_hash"])] = record
            log.write(record)

        prompts = [verification_messages(it.format, it.text, it.question, it.options, it.answer) for it in todo]
        try:
            backend.generate(prompts, gen, on_result=on_result, progress=progress)
        finally:
            log.close()
            backend.close()
        usage = {"backend": backend.describe(), **backend.usage_summary()}
        write_json(cfg.out_dir / "reports" / "usage" / f"filter-{time.time_ns()}.json",
                   {"role": "verifier", "backend": backend.describe(), "judged": len(todo),
                    "usage": backend.usage_summary()}, sort_keys=True)
    verdicts = {it.entry_id: known[(it.entry_id, it.content_hash())] for it in items
                if (it.entry_id, it.content_hash()) in known}
    return verdicts, usage


def run(cfg: Config, progress: bool = True) -> dict[str, dict[str, Any]]:
    """All three stages; writes filtered items and reports; returns the reports."""
    items1, reports1 = stage1(cfg)
    balanced: dict[str, list[Item]] = {}
    reports2: dict[str, dict] = {}
    for c in cfg.collections:
        balanced[c], reports2[c] = stage2(items1.get(c, []))
    everything = [it for c in cfg.collections for it in balanced[c]]
    verdicts, usage = stage3(cfg, everything, progress=progress)
    reports: dict[str, dict[str, Any]] = {}
    for c in cfg.collections:
        kept = [it for it in balanced[c] if verdicts.get(it.entry_id, {}).get("judgment") == "PASS"]
        judged = [verdicts[it.entry_id] for it in balanced[c] if it.entry_id in verdicts]
        judgments = Counter(v["judgment"] for v in judged)
        corrections = Counter(f"{it.answer}->{verdicts[it.entry_id].get('correct_answer')}"
                              for it in balanced[c]
                              if verdicts.get(it.entry_id, {}).get("judgment") == "FALSE")
        n_in = len(balanced[c])
        pending = n_in - len(judged)
        dropped = len(judged) - len(kept)
        report = {
            "collection": c,
            "stage1": reports1[c],
            "stage2": reports2[c],
            "stage3": {"in": n_in, "judged": len(judged), "pending": pending, "kept": len(kept),
                       "dropped": dropped, "drop_rate": round(dropped / len(judged), 4) if judged else None,
                       "judgments": dict(judgments.most_common()),
                       "false_label_corrections": dict(corrections.most_common()),
                       "verifier": {"backend": cfg.verifier.backend, "model": cfg.verifier.model},
                       "usage_this_run": usage},
            "final": len(kept),
            "generator": {"backend": cfg.generator.backend, "model": cfg.generator.model},
            "paper": PAPER,
        }
        _write_items(filtered_path(cfg, c), kept)
        write_json(cfg.out_dir / "reports" / f"filter-{c}.json", report, sort_keys=True)
        (cfg.out_dir / "reports" / f"filter-{c}.md").write_text(render_report(report), encoding="utf-8")
        reports[c] = report
    return reports


def _write_items(path: Path, items: list[Item]) -> None:
    write_jsonl(path, (it.to_dict() for it in sorted(items, key=lambda x: x.entry_id)),
                sort_keys=True)


def load_filtered(cfg: Config, collection: str) -> list[Item]:
    return [Item.from_dict(r) for r in complete_records(filtered_path(cfg, collection))]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def render_report(r: dict[str, Any]) -> str:
    s1, s2, s3 = r["stage1"], r["stage2"], r["stage3"]
    lines = [f"# ToM-Synth quality filter: collection `{r['collection']}`", "",
             f"Generator: {r['generator']['backend']} `{r['generator']['model']}`; "
             f"verifier: {s3['verifier']['backend']} `{s3['verifier']['model']}`.", "",
             "| | ours | paper |", "|---|---|---|",
             f"| generated entries | {s1['generated']} | {PAPER['generated']} |",
             f"| stage 1 dropped | {s1['dropped']} ({_pct(s1['drop_rate'])}) | {PAPER['stage1_dropped']} ({_pct(PAPER['stage1_drop_rate'])}) |",
             f"| stage 3 dropped | {s3['dropped']} ({_pct(s3['drop_rate'])}) | {PAPER['stage3_dropped']} ({_pct(PAPER['stage3_drop_rate'])}) |",
             f"| final | {r['final']} | {PAPER['final']} |", ""]
    if s1["generation_failed_pending"] or s3["pending"]:
        lines += [f"Pending: {s1['generation_failed_pending']} generation request(s) failed and "
                  f"{s3['pending']} item(s) await a verdict; re-run `generate` / `filter` to retry them.", ""]
    lines += ["## Stage 1: format and consistency", "", "| reason | entries |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s1["reasons"].items()] or ["| (none) | 0 |"]
    if s1["repairs"]:
        lines += ["", "Normalised but kept: " + ", ".join(f"{k} ({v})" for k, v in s1["repairs"].items()) + "."]
    lb = s2["length_bias"]
    lines += ["", "## Stage 2: answer balancing and length bias", "", "| letter | before | after |", "|---|---|---|"]
    lines += [f"| {k} | {s2['letters_before'][k]} | {s2['letters_after'][k]} |" for k in s2["letters_after"]]
    lines += ["", f"Correct option is the longest in {_pct(lb['correct_longest_rate'])} and the shortest in "
              f"{_pct(lb['correct_shortest_rate'])} of items (chance: 25%); mean length "
              f"{lb['mean_correct_chars']} characters for correct options vs {lb['mean_distractor_chars']} for distractors.",
              "", "## Stage 3: cross-model verification", "", "| judgment | entries |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s3["judgments"].items()] or ["| (none) | 0 |"]
    if s3["false_label_corrections"]:
        lines += ["", "FALSE verdicts (labelled -> verifier's answer): "
                  + ", ".join(f"{k} ({v})" for k, v in s3["false_label_corrections"].items()) + "."]
    return "\n".join(lines) + "\n"
