"""EmoBench (Sabour et al., ACL 2024): emotional intelligence in English and Chinese.

Release format (github.com/Sahandfer/EmoBench, `data/`): `EA.jsonl` (Emotional Application: pick
the most effective response or action) and `EU.jsonl` (Emotional Understanding: which emotion the
subject feels, and why). Each line is one scenario in one language; the gold is the option text.

Scoring as the original (`src/data.py`, prompts in `src/configs/prompts.yaml`): an EA item is
right when its letter is the label's; an EU item asks both questions in one prompt (question 1
the emotion, question 2 its cause) and is right only when both letters are. An EU row's answer is
the two letters, `"B; D"`; `score` reads the reply's two parts (labelled `Q1: B, Q2: D`,
`1. B` / `2. D`, JSON `answer_q1`/`answer_q2`, or two parts split by `;`, a line break or a comma)
and each part with the shared parser's multiple-choice rule against its own options.

The original asks for a JSON reply (`{"answer": "B"}`, `{"answer_q1": "B", "answer_q2": "D"}`, in
a ```json block or alone; `utils.parse_json_response`) and compares each value with the gold
letter as written; any other reply is empty there, and wrong. A reply without answer tags that
is such JSON is read by its values here too (each value by the multiple-choice rule, so "B) Fear"
is B where the original wants exactly "B"); any other untagged reply is read by the shared
reader, an EU reply as its two parts whatever its length (a perfect reply that writes both
options out, "B. Relief & Annoyance & Guilt; D. I had the ability to solve ...", is longer than the
shared fallback's 200 characters).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from eval import answers
from eval.benchmarks._common import (
    LETTERS, check_unique_ids, fail, option_lines, read_jsonl, require, string_list,
)
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import (
    Benchmark, BenchmarkFormatError, Record, Row, accuracy_with_breakdowns, default_score, row_chance,
)
from eval.rows import make_row, meta as meta_of

NAME = "emobench"
LANGUAGES = ("en", "zh")

_EA_QUESTION = {
    "en": "In this situation, which {kind} would be the most effective for {subject}?",
    "zh": "在这个情境中，对{subject}来说，哪一种{kind}最为有效？",
}
_EA_KIND = {"en": {"Response": "response", "Action": "action"}, "zh": {"Response": "回应", "Action": "行动"}}
_EU_QUESTIONS = {  # question 1 (the emotion) and question 2 (its cause), asked together
    "en": ("Question 1: Which emotion or emotions would {subject} ultimately feel in this situation?",
           "Question 2: Why would {subject} feel that way in this situation?"),
    "zh": ("问题 1：在这个情境中，{subject}最终会产生怎样的情绪？",
           "问题 2：{subject}为什么会在这个情境中产生这种情绪？"),
}
_SCENARIO = {"en": "Scenario: {scenario}", "zh": "情境：{scenario}"}
_INSTRUCTION = {
    "en": "Answer with the letter of the correct option.",
    "zh": "请只回答正确选项的字母。",
}
_EU_INSTRUCTION = {
    "en": "Answer both questions: the letter for question 1, then the letter for question 2, "
          "separated by a semicolon (for example: B; D).",
    "zh": "请回答两个问题：先写问题 1 的选项字母，再写问题 2 的选项字母，用分号隔开（例如：B; D）。",
}
PARTS = ("emotion", "cause")


def _user(lang: str, scenario: str, question: str, options: list[str]) -> str:
    return "\n\n".join(
        [_SCENARIO[lang].format(scenario=scenario.strip()), question,
         option_lines([o.strip() for o in options]), _INSTRUCTION[lang]]
    )


def _eu_user(lang: str, scenario: str, subject: str, options: dict[str, list[str]]) -> str:
    q1, q2 = (q.format(subject=subject) for q in _EU_QUESTIONS[lang])
    return "\n\n".join(
        [_SCENARIO[lang].format(scenario=scenario.strip()),
         q1, option_lines([o.strip() for o in options["emotion"]]),
         q2, option_lines([o.strip() for o in options["cause"]]), _EU_INSTRUCTION[lang]]
    )


def _gold_letter(options: list[str], label: str, path: Path, n: int, name: str) -> str:
    # The release stores the gold as option text; an exact match is what the original code uses.
    if options.count(label) != 1:
        found = "not among" if label not in options else "more than once in"
        fail(path, n, f"field {name!r}: gold text {found} the options")
    return LETTERS[options.index(label)]


def _common(obj: dict, path: Path, n: int) -> tuple[str, str, str, str]:
    qid = require(obj, "qid", path, n, (str, int))
    lang = require(obj, "language", path, n)
    if lang not in LANGUAGES:
        fail(path, n, f"field 'language': {lang!r} is not one of {', '.join(LANGUAGES)}")
    return str(qid), lang, require(obj, "scenario", path, n), require(obj, "subject", path, n)


def _ea_rows(path: Path, languages: Sequence[str]) -> tuple[list[Row], dict[str, str]]:
    rows, where = [], {}
    for n, obj in read_jsonl(path):
        qid, lang, scenario, subject = _common(obj, path, n)
        if lang not in languages:
            continue
        category = require(obj, "category", path, n)
        qtype = require(obj, "question type", path, n)
        if qtype not in _EA_KIND["en"]:
            fail(path, n, f"field 'question type': {qtype!r} is not Response or Action")
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


def _eu_rows(path: Path, languages: Sequence[str]) -> tuple[list[Row], dict[str, str]]:
    rows, where = [], {}
    for n, obj in read_jsonl(path):
        qid, lang, scenario, subject = _common(obj, path, n)
        coarse = require(obj, "coarse_category", path, n)
        fine = require(obj, "finegrained_category", path, n)
        options, gold = {}, {}
        for part in PARTS:
            options[part] = string_list(obj, f"{part}_choices", path, n)
            gold[part] = _gold_letter(options[part], require(obj, f"{part}_label", path, n),
                                      path, n, f"{part}_label")
        if lang not in languages:
            continue
        rid = f"{NAME}-EU-{lang}-{qid}"
        rows.append(make_row(
            id=rid, source=NAME, user=_eu_user(lang, scenario, subject, options),
            answer=f"{gold['emotion']}; {gold['cause']}",
            answer_type="short",  # two letters; `score` reads them (the row has no one option list)
            meta={"task": "EU", "qid": qid, "language": lang, "category": coarse,
                  "finegrained_category": fine, "options": options, "gold": gold},
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
        fail(file, n, "neither an EA record (field 'choices') nor an EU record (field 'emotion_choices')")
    fail(file, None, "empty file")


def load(path: Path, *, languages: Sequence[str] = LANGUAGES) -> list[Row]:
    """Rows from the release folder (containing `data/` or `EA.jsonl`/`EU.jsonl`) or one file;
    `languages` keeps only those (the release has every scenario in en and zh)."""
    languages = [languages] if isinstance(languages, str) else list(languages)
    if not languages or any(lang not in LANGUAGES for lang in languages):
        raise ValueError(f"emobench: languages must be some of {', '.join(LANGUAGES)}, got {languages!r}")
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
        file_rows, where = _READERS[_task_of(file)](file, languages)
        if not file_rows and not any(True for _ in read_jsonl(file)):
            fail(file, None, "no records")
        check_unique_ids(file_rows, file, where)
        rows += file_rows
    return rows


# "Q1: B", "question 2 -", "answer_q1": "B", "问题1：", or "1." / "2)" opening a line
_PART_LABEL = re.compile(
    r"(?i)(?:\b(?:q|question|answer_q)\s*|问题\s*)([12])(?![0-9])\s*[\"']?\s*[:：.)=\-]?"
    r"|(?m:^)[ \t]*([12])[ \t]*[.)：:]"
)
_SPLITS = (re.compile(r"[;；\n]"), re.compile(r"[,，、/|]|\band\b|和"))
_TWO_LETTERS = re.compile(r"\s*\(?([A-Z])\)?\s*\(?([A-Z])\)?\s*")
_JUNK = " \t\n\"'{}[],，。.；：;:"


def answer_parts(answer: str | None) -> tuple[str, str] | None:
    """The two parts of an EU answer (question 1's, question 2's), or None when it does not
    read as exactly two: after the first "1" label and the first "2" label that follows it
    (each part up to the next label), else split by `;`, a line break or a comma."""
    if not isinstance(answer, str) or not answer.strip():
        return None
    labels = [(m.group(1) or m.group(2), m) for m in _PART_LABEL.finditer(answer)]
    first = next((k for k, (n, _) in enumerate(labels) if n == "1"), None)
    second = next((k for k, (n, _) in enumerate(labels) if n == "2" and first is not None
                   and k > first), None)
    if first is not None and second is not None:
        m1, m2 = labels[first][1], labels[second][1]
        end = labels[second + 1][1].start() if second + 1 < len(labels) else len(answer)
        return answer[m1.end():m2.start()].strip(_JUNK), answer[m2.end():end].strip(_JUNK)
    for split in _SPLITS:
        parts = [p.strip(_JUNK) for p in split.split(answer) if p.strip(_JUNK)]
        if len(parts) == 2:
            return parts[0], parts[1]
    m = _TWO_LETTERS.fullmatch(answer)  # "B D", "BD", "(B)(D)"
    return (m.group(1), m.group(2)) if m else None


_JSON_BLOCK = re.compile(r"```json\s*([\s\S]*?)```")


def json_answer(reply: str) -> dict | None:
    """The JSON object of a reply as the original's parse_json_response reads it: its first
    ```json block, else the whole reply; None when that is no JSON object."""
    text = reply
    if "```json" in text:
        m = _JSON_BLOCK.search(text)
        if not m:
            return None
        text = m.group(1)
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _option_of(text: str | None, options: Sequence[str]) -> str | None:
    """The option letter a part of an answer gives (a label, the option's text)."""
    if not isinstance(text, str) or not text.strip():
        return None
    return answers.chosen_option(answers.read_answer(text, "choice", options).answer, options)


def score(row: Row, response: str) -> Record:
    """EA: the shared parser's verdict (an untagged JSON reply by its `answer`). EU: both
    letters must be the gold ones."""
    m = meta_of(row)
    reply = untagged_reply(response)
    obj = json_answer(reply) if reply is not None else None
    if m["task"] != "EU":
        rec = default_score(row, response)
        if obj is not None and "answer" in obj:
            letter = _option_of(str(obj["answer"]), row["choices"])
            rec.update(extracted=letter, read="fallback" if letter else "none",
                       correct=letter == row["answer"])
        return rec
    if obj is not None and ("answer_q1" in obj or "answer_q2" in obj):
        extracted, how = json.dumps(obj, ensure_ascii=False), "fallback"
        parts = (str(obj.get("answer_q1", "")), str(obj.get("answer_q2", "")))
    else:
        reading = answers.read_answer(response, None)
        extracted, how = reading.answer, reading.how
        parts = answer_parts(extracted)
        if parts is None and reply is not None:
            # an untagged reply too long for the shared fallback: its two parts, however long
            extracted, how, parts = reply, "fallback", answer_parts(reply)
        parts = parts or (None, None)
    chosen = {part: (_option_of(text, m["options"][part]) if how == "fallback"
                     else answers.chosen_option(text, m["options"][part]))
              for part, text in zip(PARTS, parts)}
    if how == "fallback" and not any(chosen.values()):
        extracted, how = None, "none"
    right = {part: chosen[part] == m["gold"][part] for part in PARTS}
    return {"extracted": extracted, "correct": all(right.values()),
            "format_ok": answers.check_format(response), "read": how,
            "emotion_choice": chosen["emotion"], "cause_choice": chosen["cause"],
            "emotion_correct": right["emotion"], "cause_correct": right["cause"]}


def chance_of(row: Row) -> float | None:
    """A uniform random answerer's chance on a row: an EU row needs both of its letters, so
    1/(emotion options x cause options); an EA row 1/options."""
    m = meta_of(row)
    if m.get("task") == "EU":
        return 1 / (len(m["options"]["emotion"]) * len(m["options"]["cause"]))
    return row_chance(row)


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    """EA accuracy and EU accuracy (emotion and cause both right, the original's EU score), each
    per language and category, and the accuracy of each EU question alone; `accuracy` is the
    mean of EA and EU (the ToM-Synth paper's single EmoBench number)."""
    ea = [r for r in records if r["meta"].get("task") == "EA"]
    eu = [r for r in records if r["meta"].get("task") == "EU"]
    keys = ("language", "category")
    tasks = {"EA": ea, "EU": eu,
             **{f"EU-{part}": [{**r, "correct": r[f"{part}_correct"]} for r in eu] for part in PARTS}}
    details = {name: accuracy_with_breakdowns(recs, keys + (("question_type",) if name == "EA" else ()))
               for name, recs in tasks.items() if recs}
    headline = [details[t]["accuracy"] for t in ("EA", "EU") if t in details]
    out: dict[str, Any] = {
        "accuracy": sum(headline) / len(headline) if headline else 0.0,
        "n": len(records),
        "by_task": {t: {"accuracy": d["accuracy"], "n": d["n"]} for t, d in details.items()},
    }
    by_lang = {}
    for lang in sorted({r["meta"]["language"] for r in records}):
        scores = [d["by_language"][lang]["accuracy"] for t, d in details.items()
                  if t in ("EA", "EU") and lang in d.get("by_language", {})]
        by_lang[lang] = {"accuracy": sum(scores) / len(scores) if scores else 0.0,
                         "n": sum(1 for r in records if r["meta"]["language"] == lang)}
    out["by_language"] = by_lang
    out["tasks"] = details
    return out


BENCHMARK = Benchmark(
    display="EmoBench",
    rank=110,
    name=NAME,
    category="ei",
    load=load,
    default_dir="emobench",
    hub_id="SahandSab/EmoBench",
    breakdowns=("task", "language", "category"),
    score=score,
    aggregate=aggregate,
    chance=chance_of,
    notes="Multiple-choice accuracy: EA (most effective response/action) and EU, whose emotion "
          "and cause questions are asked together and count only when both are right; per "
          "language and category.",
)
