"""EmoBench (Sabour et al., ACL 2024): emotional intelligence in English and Chinese.

Release format (github.com/Sahandfer/EmoBench, `data/`): `EA.jsonl` (Emotional Application: pick
the most effective response or action) and `EU.jsonl` (Emotional Understanding: which emotion the
subject feels, and why). Each line is one scenario in one language; the gold is the option text.

The original asks both EU questions in one prompt and scores an EU item correct only when the
emotion and the cause are both right. Our rows carry one answer each, so an EU line becomes two
rows (`part` emotion / cause) and `aggregate` joins them back: EU-both is the original EU score.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.benchmarks._formats import (
    LETTERS, check_unique_ids, fail, option_lines, read_jsonl, require, string_list,
)
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Row, accuracy_with_breakdowns
from eval.rows import make_row

NAME = "emobench"
LANGUAGES = ("en", "zh")

_EA_QUESTION = {
    "en": "In this situation, which {kind} would be the most effective for {subject}?",
    "zh": "在这个情境中，对{subject}来说，哪一种{kind}最为有效？",
}
_EA_KIND = {"en": {"Response": "response", "Action": "action"}, "zh": {"Response": "回应", "Action": "行动"}}
_EU_QUESTION = {
    "emotion": {
        "en": "Which emotion or emotions would {subject} ultimately feel in this situation?",
        "zh": "在这个情境中，{subject}最终会产生怎样的情绪？",
    },
    "cause": {
        "en": "What is the reason {subject} would feel that way in this situation?",
        "zh": "在这个情境中，{subject}产生这种情绪的原因是什么？",
    },
}
_SCENARIO = {"en": "Scenario: {scenario}", "zh": "情境：{scenario}"}
_INSTRUCTION = {
    "en": "Answer with the letter of the correct option.",
    "zh": "请只回答正确选项的字母。",
}


def _user(lang: str, scenario: str, question: str, options: list[str]) -> str:
    return "\n\n".join(
        [_SCENARIO[lang].format(scenario=scenario.strip()), question, option_lines(options),
         _INSTRUCTION[lang]]
    )


def _gold_letter(options: list[str], label: str, path: Path, n: int, name: str) -> str:
    # The release stores the gold as option text; an exact match is what the original code uses.
    if options.count(label) != 1:
        found = "not among" if label not in options else "more than once in"
        raise fail(path, n, f"field {name!r}: gold text {found} the options")
    return LETTERS[options.index(label)]


def _common(obj: dict, path: Path, n: int) -> tuple[str, str, str, str]:
    qid = require(obj, "qid", path, n, (str, int))
    lang = require(obj, "language", path, n)
    if lang not in LANGUAGES:
        raise fail(path, n, f"field 'language': {lang!r} is not one of {', '.join(LANGUAGES)}")
    return str(qid), lang, require(obj, "scenario", path, n), require(obj, "subject", path, n)


def _ea_rows(path: Path) -> tuple[list[Row], dict[str, str]]:
    rows, where = [], {}
    for n, obj in read_jsonl(path):
        qid, lang, scenario, subject = _common(obj, path, n)
        category = require(obj, "category", path, n)
        qtype = require(obj, "question type", path, n)
        if qtype not in _EA_KIND["en"]:
            raise fail(path, n, f"field 'question type': {qtype!r} is not Response or Action")
        options = string_list(obj, "choices", path, n)
        gold = _gold_letter(options, require(obj, "label", path, n), path, n, "label")
        question = _EA_QUESTION[lang].format(kind=_EA_KIND[lang][qtype], subject=subject)
        rid = f"{NAME}-EA-{lang}-{qid}"
        rows.append(make_row(
            id=rid, source=NAME, user=_user(lang, scenario, question, options), answer=gold,
            answer_type="choice", choices=options,
            meta={"task": "EA", "qid": qid, "language": lang, "category": category,
                  "question_type": qtype},
        ))
        where[rid] = f"line {n}"
    return rows, where


def _eu_rows(path: Path) -> tuple[list[Row], dict[str, str]]:
    rows, where = [], {}
    for n, obj in read_jsonl(path):
        qid, lang, scenario, subject = _common(obj, path, n)
        coarse = require(obj, "coarse_category", path, n)
        fine = require(obj, "finegrained_category", path, n)
        for part in ("emotion", "cause"):
            options = string_list(obj, f"{part}_choices", path, n)
            gold = _gold_letter(options, require(obj, f"{part}_label", path, n), path, n, f"{part}_label")
            question = _EU_QUESTION[part][lang].format(subject=subject)
            rid = f"{NAME}-EU-{lang}-{qid}-{part}"
            rows.append(make_row(
                id=rid, source=NAME, user=_user(lang, scenario, question, options), answer=gold,
                answer_type="choice", choices=options,
                meta={"task": "EU", "part": part, "qid": qid, "language": lang,
                      "category": coarse, "finegrained_category": fine},
            ))
            where[rid] = f"line {n}"
    return rows, where


_READERS = {"EA": _ea_rows, "EU": _eu_rows}


def _task_of(file: Path) -> str:
    """EA or EU from the file name, else from the first record's fields."""
    stem = file.stem.upper()
    if stem in _READERS:
        return stem
    for n, obj in read_jsonl(file):
        if "emotion_choices" in obj:
            return "EU"
        if "choices" in obj:
            return "EA"
        raise fail(file, n, "neither an EA record (field 'choices') nor an EU record (field 'emotion_choices')")
    raise fail(file, None, "empty file")


def load(path: Path) -> list[Row]:
    """Rows from the release folder (containing `data/` or `EA.jsonl`/`EU.jsonl`) or one file."""
    path = Path(path)
    if path.is_file():
        files = [path]
    else:
        base = path / "data" if (path / "data").is_dir() else path
        files = [base / f"{t}.jsonl" for t in _READERS if (base / f"{t}.jsonl").is_file()]
        if not files:
            raise BenchmarkFormatError(f"{path}: no EA.jsonl or EU.jsonl found (expected EmoBench's data/ folder)")
    rows: list[Row] = []
    for file in files:
        file_rows, where = _READERS[_task_of(file)](file)
        if not file_rows:
            raise fail(file, None, "no records")
        check_unique_ids(file_rows, file, where)
        rows += file_rows
    return rows


def _joint_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per EU scenario and language: correct when emotion and cause both are."""
    parts: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for r in records:
        m = r["meta"]
        parts[(m["qid"], m["language"])][m["part"]] = r
    joint = []
    for (qid, lang), p in parts.items():
        if set(p) != {"emotion", "cause"}:
            continue  # a --limit cut through the pair: neither half says anything about "both"
        joint.append({"correct": p["emotion"]["correct"] and p["cause"]["correct"],
                      "meta": {**p["emotion"]["meta"], "part": "both"}})
    return joint


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """EA accuracy, EU emotion / cause / both accuracies, each per language and category;
    `accuracy` is the mean of the EA and EU-both scores (the two numbers the paper reports)."""
    ea = [r for r in records if r["meta"].get("task") == "EA"]
    eu = [r for r in records if r["meta"].get("task") == "EU"]
    by_part = {p: [r for r in eu if r["meta"].get("part") == p] for p in ("emotion", "cause")}
    both = _joint_records(eu)
    keys = ("language", "category")
    tasks = {"EA": ea, "EU-emotion": by_part["emotion"], "EU-cause": by_part["cause"], "EU-both": both}
    details = {name: accuracy_with_breakdowns(recs, keys + (("question_type",) if name == "EA" else ()))
               for name, recs in tasks.items() if recs}
    headline = [details[t]["accuracy"] for t in ("EA", "EU-both") if t in details]
    out: dict[str, Any] = {
        "accuracy": sum(headline) / len(headline) if headline else 0.0,
        "n": len(records),
        "by_task": {t: {"accuracy": d["accuracy"], "n": d["n"]} for t, d in details.items()},
    }
    by_lang = {}
    for lang in sorted({r["meta"]["language"] for r in records}):
        scores = [d["by_language"][lang]["accuracy"] for t, d in details.items()
                  if t in ("EA", "EU-both") and lang in d.get("by_language", {})]
        by_lang[lang] = {"accuracy": sum(scores) / len(scores) if scores else 0.0,
                         "n": sum(1 for r in records if r["meta"]["language"] == lang)}
    out["by_language"] = by_lang
    out["tasks"] = details
    return out


BENCHMARK = Benchmark(
    name=NAME,
    category="ei",
    load=load,
    default_dir="emobench",
    hub_id="SahandSab/EmoBench",
    breakdowns=("task", "part", "language", "category"),
    aggregate=aggregate,
    notes="Multiple-choice accuracy: EA (most effective response/action) and EU, where an item "
          "counts only when both the emotion and its cause are right; per language and category.",
)
