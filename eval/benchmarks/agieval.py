"""AGIEval v1 (Zhong et al., 2023): human exam questions (SAT, LSAT, Gaokao, LogiQA, JEC-QA, MATH...).

Release format (github.com/ruixiangcui/AGIEval, `data/v1/<task>.jsonl`): `passage` (or null),
`question`, `options` (`"(A)..."` strings, or null for cloze tasks), `label` (a letter, or a list
of letters for the multi-answer tasks gaokao-physics and jec-qa-*), `answer` (the gold of the
cloze tasks math and gaokao-mathcloze), `other`. The task is the file name.

Scoring as in the original: exact match of the chosen letter; multi-answer items need exactly the
gold set of letters; cloze answers are compared for mathematical equivalence (the shared parser's
`number` rule). Accuracy is reported per task; `task_average` is the unweighted mean over tasks.
English tasks get English instructions and Chinese tasks Chinese ones, as in the original.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from eval import answers
from eval.benchmarks._formats import (
    LETTERS, check_unique_ids, fail, has_cjk, letters_for, option_lines, read_jsonl, require,
)
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Record, Row, accuracy_with_breakdowns, default_score
from eval.rows import make_row, meta

NAME = "agieval"
ENGLISH_TASKS = frozenset({
    "aqua-rat", "gaokao-english", "logiqa-en", "lsat-ar", "lsat-lr", "lsat-rc", "math",
    "sat-en", "sat-en-without-passage", "sat-math",
})
CHINESE_TASKS = frozenset({
    "gaokao-biology", "gaokao-chemistry", "gaokao-chinese", "gaokao-geography", "gaokao-history",
    "gaokao-mathcloze", "gaokao-mathqa", "gaokao-physics", "jec-qa-ca", "jec-qa-kd", "logiqa-zh",
})
MULTI_ANSWER_TASKS = frozenset({"gaokao-physics", "jec-qa-ca", "jec-qa-kd"})

_TEXT = {
    "en": {
        "question": "Question: {q}",
        "single": "Answer with the letter of the correct option ({span}).",
        "multi": "One or more options may be correct. Answer with the letters of all correct "
                 "options together, for example AC.",
        "cloze": "Give the final answer as a mathematical expression. If there are several "
                 "blanks, give their answers in order, separated by semicolons.",
    },
    "zh": {
        "question": "问题：{q}",
        "single": "请只回答正确选项的字母（{span}）。",
        "multi": "本题可能有一个或多个正确选项。请把所有正确选项的字母连在一起作答，例如 AC。",
        "cloze": "请给出最终答案（数学表达式）。如有多个空，请按顺序作答，用分号分隔。",
    },
}

# "(A)text", "(A) text": always a label. "A text", "A．text": a label only when the letter is the
# option's own position, so an option that merely starts with a capital letter is left alone.
_PAREN_LABEL = re.compile(r"^\s*[(（]\s*[A-Z]\s*[)）]\s*")
_BARE_LABEL = re.compile(r"^\s*([A-Z])(?:\s*[.．、:：]\s*|\s+)")


def strip_label(option: str, position: int) -> str:
    m = _PAREN_LABEL.match(option)
    if m:
        return option[m.end():].strip()
    m = _BARE_LABEL.match(option)
    if m and m.group(1) == LETTERS[position]:
        return option[m.end():].strip()
    return option.strip()


def _language(task: str, text: str) -> str:
    if task in ENGLISH_TASKS:
        return "en"
    if task in CHINESE_TASKS:
        return "zh"
    return "zh" if has_cjk(text) else "en"


_TEXT_WRAPPED = re.compile(r"^\\(?:text|textbf|mathrm)\s*\{([^{}]*)\}$")


def _cloze_gold(answer: str) -> str:
    """The canonical gold of a cloze item. The release writes answers in `$...$` (one per blank,
    `;`-separated) and MATH wraps word answers in `\\text{...}`: keep the expression alone."""
    parts = [p.strip().strip("$").strip() for p in answer.split(";")] if "$" in answer else [answer.strip()]
    parts = [_TEXT_WRAPPED.sub(r"\1", p).strip() for p in parts]
    return ";".join(p for p in parts if p)


def _gold_letters(label: Any, n_options: int, file: Path, n: int) -> list[str]:
    labels = label if isinstance(label, list) else [label]
    if not labels or not all(isinstance(x, str) and x.strip() for x in labels):
        raise fail(file, n, f"field 'label': expected a letter or a list of letters, got {label!r}")
    letters = sorted({x.strip().upper() for x in labels})
    valid = LETTERS[:n_options]
    bad = [x for x in letters if len(x) != 1 or x not in valid]
    if bad:
        raise fail(file, n, f"field 'label': {', '.join(bad)} not among the options {valid[0]}-{valid[-1]}")
    return letters


def _task_rows(file: Path) -> tuple[list[Row], dict[str, str]]:
    task = file.stem
    rows, where = [], {}
    for n, obj in read_jsonl(file):
        question = require(obj, "question", file, n)
        passage = obj.get("passage")
        if passage is not None and not isinstance(passage, str):
            raise fail(file, n, f"field 'passage': expected str or null, got {type(passage).__name__}")
        lang = _language(task, question)
        text = _TEXT[lang]
        parts = [passage.strip()] if passage and passage.strip() else []
        parts.append(text["question"].format(q=question.strip()))
        item_meta: dict[str, Any] = {"task": task, "language": lang, "line": n}
        other = obj.get("other") if isinstance(obj.get("other"), dict) else {}
        if "level" in other:
            item_meta["level"] = other["level"]
        if "type" in other:
            item_meta["subject"] = other["type"]
        options_raw = obj.get("options")
        if options_raw:  # multiple choice
            if not isinstance(options_raw, list) or not all(isinstance(o, str) for o in options_raw):
                raise fail(file, n, "field 'options': expected a list of strings")
            if len(options_raw) > len(LETTERS):
                raise fail(file, n, f"field 'options': {len(options_raw)} options, at most {len(LETTERS)}")
            options = [strip_label(o, i) for i, o in enumerate(options_raw)]
            gold = _gold_letters(require(obj, "label", file, n, (str, list)), len(options), file, n)
            multi = task in MULTI_ANSWER_TASKS or isinstance(obj["label"], list) and len(gold) > 1
            parts += [option_lines(options),
                      text["multi"] if multi else text["single"].format(span=letters_for(len(options)))]
            item_meta.update(kind="multi_answer" if multi else "multiple_choice", gold_letters=gold)
            answer, answer_type, choices = "".join(gold), ("choice" if len(gold) == 1 else "short"), options
        else:  # cloze
            gold_text = require(obj, "answer", file, n, (str, int, float))
            answer = _cloze_gold(str(gold_text))
            if not answer:
                raise fail(file, n, "field 'answer': empty")
            parts.append(text["cloze"])
            item_meta["kind"] = "cloze"
            answer_type, choices = "number", []
        rid = f"{NAME}-{task}-{n}"
        rows.append(make_row(id=rid, source=NAME, user="\n\n".join(parts), answer=answer,
                             answer_type=answer_type, choices=choices, meta=item_meta))
        where[rid] = f"line {n}"
    if not rows:
        raise fail(file, None, "no items")
    return rows, where


def load(path: Path) -> list[Row]:
    """Rows from one task file or a folder holding `data/v1/*.jsonl` (or the task files)."""
    path = Path(path)
    if path.is_file():
        files = [path]
    else:
        base = next((p for p in (path / "data" / "v1", path / "v1", path) if p.is_dir() and any(p.glob("*.jsonl"))), None)
        if base is None:
            raise BenchmarkFormatError(f"{path}: no <task>.jsonl files found (expected AGIEval's data/v1/)")
        # The passage-less SAT copy repeats sat-en's questions: opt in by naming the file.
        files = sorted(p for p in base.glob("*.jsonl") if p.stem != "sat-en-without-passage")
    rows: list[Row] = []
    for file in files:
        file_rows, where = _task_rows(file)
        check_unique_ids(file_rows, file, where)
        rows += file_rows
    return rows


def _letter_set(text: str | None) -> frozenset[str] | None:
    """{'A', 'C'} from 'AC', 'A, C', 'A和C', '(A)(C)'; None when anything else is in the answer."""
    if not text:
        return None
    cleaned = re.sub(r"(?i)\band\b|[\s,，、;；/&和及()（）]", "", text.strip().rstrip(".。"))
    if not cleaned or not re.fullmatch(r"[A-Za-z]+", cleaned) or len(cleaned) > len(LETTERS):
        return None
    letters = cleaned.upper()
    return frozenset(letters) if len(set(letters)) == len(letters) else None


def score(row: Row, response: str) -> Record:
    """The shared parser's verdict, except that a multi-answer item compares the set of letters
    in the extracted answer with the gold set (the original's exact-set rule)."""
    m = meta(row)
    if m.get("kind") != "multi_answer" or len(m.get("gold_letters", [])) < 2:
        return default_score(row, response)
    extracted = answers.extract_answer(response)
    picked = _letter_set(extracted)
    correct = picked is not None and picked == frozenset(m["gold_letters"])
    return {"extracted": extracted, "correct": correct, "format_ok": answers.check_format(response)}


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    out = accuracy_with_breakdowns(records, ("task", "language", "kind"))
    tasks = out.get("by_task", {})
    out["task_average"] = sum(t["accuracy"] for t in tasks.values()) / len(tasks) if tasks else 0.0
    return out


BENCHMARK = Benchmark(
    name=NAME,
    category="iq",
    load=load,
    default_dir="agieval",
    hub_id=None,  # the hub holds only per-task re-exports in other layouts; use the GitHub release
    breakdowns=("task", "language", "kind"),
    score=score,
    aggregate=aggregate,
    notes="Per task: letter accuracy (multi-answer items need the exact set of letters); cloze "
          "items (math, gaokao-mathcloze) by mathematical equivalence.",
)
