"""AGIEval v1 (Zhong et al., 2023): human exam questions (SAT, LSAT, Gaokao, LogiQA, JEC-QA, MATH...).

Release format (github.com/ruixiangcui/AGIEval, `data/v1/<task>.jsonl`): `passage` (or null),
`question`, `options` (`"(A)..."` strings, or null for cloze tasks), `label` (a letter, or a list
of letters for the multi-answer tasks gaokao-physics and jec-qa-*), `answer` (the gold of the
cloze tasks math and gaokao-mathcloze), `other`. The task is the file name.

Scoring as in the original (`src/evaluation.py`, `evaluate_single_sample`): exact match of the
chosen letter; multi-answer items need exactly the gold set of letters; cloze answers are compared
for mathematical equivalence (the shared parser's `number` rule). Accuracy is reported per task;
`task_average` is the unweighted mean over the tasks loaded: the original's table averages 21,
sat-en-without-passage included, and so does a folder of the whole release here.
English tasks get English instructions and Chinese tasks Chinese ones, as in the original.

A reply without answer tags is read as the original's `post_process.py` reads its settings'
replies, on the text after the reply's last answer statement ("answer is", "answer:", "答案是")
when it has one (the few-shot readers' `answer is .*?([A-G])`), else on the whole reply (the
zero-shot readers): a single-answer item takes the first option letter
(`find_first_capital_letter`, A-F), a multi-answer item the set of letters
(`parse_qa_multiple_answer`), a cloze item (`parse_math_answer`) its last `\boxed{}`,
else the answer its last statement gives up to the end of its line (the few-shot readers), else
the zero-shot reader's last `$...$`, else what follows the last "=", else the last number (the
part after an "=" inside the box or the dollars). Unlike the original, a letter is one written
alone, not the capital that begins a word (the B of "Based") nor the article A, and a short
one-line cloze reply that is mathematics alone is the answer as a whole (the zero-shot reader
keeps what follows its last "=": "y=\pm\sqrt{3}x" would be "\pm\sqrt{3}x"). A reply in which
that finds no letter keeps the shared careful reader.

A few release labels can never equal what the original's parser returns (a single-answer task
compares one letter with `"AD"`; a multi-answer task compares a set of letters with `{'B', '。'}`
or with the empty label `[]`, which falls back to the null `answer`). Such an item is loaded,
asked, and scored wrong whatever the reply, as there; `meta.unscorable` says why, the metrics
count them and the loader warns once with the count.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from eval import answers
from eval.benchmarks._common import (
    LETTERS, check_unique_ids, fail, has_cjk, letters_for, option_lines, read_jsonl, require, warn,
)
from eval.benchmarks._reading import letter_marks, letter_runs, untagged_reply
from eval.benchmarks.base import (
    Benchmark, BenchmarkFormatError, Record, Row, accuracy_with_breakdowns, default_score, row_chance,
)
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


class Gold(NamedTuple):
    letters: list[str]  # the gold letters, sorted
    unscorable: str | None  # why the original's comparison can never succeed, else None


def _letter(x: Any) -> str | None:
    """The capital letter a label entry names (`"b"`, `" B"`), else None (`"AD"`, `"。"`)."""
    return x.strip().upper() if isinstance(x, str) and re.fullmatch(r"\s*[A-Za-z]\s*", x) else None


def _gold(label: Any, task: str, n_options: int, file: Path, n: int) -> Gold:
    """The gold letters of a release label, judged by the original's comparison: a single-answer
    task compares the parsed letter with the label string (`==`); a multi-answer task compares
    the set of parsed letters with `set(label)` (a list) or `{label}` (a string)."""
    if not isinstance(label, (str, list)):
        fail(file, n, f"field 'label': expected a letter or a list of letters, got {label!r}")
    valid = LETTERS[:n_options]
    entries = label if isinstance(label, list) else [label]
    single = [_letter(x) for x in entries]
    if all(single) and single:
        out = [x for x in single if x not in valid]
        if out:  # a letter the item has no option for: a broken file, not an odd label
            fail(file, n, f"field 'label': {', '.join(out)} not among the options {valid[0]}-{valid[-1]}")
        letters = sorted(set(single))
        if task in MULTI_ANSWER_TASKS or isinstance(label, str):
            return Gold(letters, None)
        return Gold(letters, "a list label in a single-answer task (compared with one letter)")
    # Keep whatever letters the label names (`"A B D"` -> A, B, D) for the record.
    letters = sorted({c for x in entries if isinstance(x, str) for c in x.upper() if c in valid})
    if not entries:
        return Gold(letters, "empty label (the original falls back to the null 'answer')")
    if isinstance(label, str):
        return Gold(letters, f"label {label!r} is not one letter (compared with one letter)")
    return Gold(letters, f"label {label!r} holds entries that are not option letters")


def _task_rows(file: Path) -> tuple[list[Row], dict[str, str], list[int]]:
    task = file.stem
    rows, where, unscorable = [], {}, []
    for n, obj in read_jsonl(file):
        question = require(obj, "question", file, n)
        passage = obj.get("passage")
        if passage is not None and not isinstance(passage, str):
            fail(file, n, f"field 'passage': expected str or null, got {type(passage).__name__}")
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
                fail(file, n, "field 'options': expected a list of strings")
            if len(options_raw) > len(LETTERS):
                fail(file, n, f"field 'options': {len(options_raw)} options, at most {len(LETTERS)}")
            options = [strip_label(o, i) for i, o in enumerate(options_raw)]
            if obj.get("label") is None:
                fail(file, n, "field 'label': missing")
            gold = _gold(obj["label"], task, len(options), file, n)
            multi = task in MULTI_ANSWER_TASKS
            parts += [option_lines(options),
                      text["multi"] if multi else text["single"].format(span=letters_for(len(options)))]
            item_meta.update(kind="multi_answer" if multi else "multiple_choice", gold_letters=gold.letters)
            if gold.unscorable:
                item_meta["unscorable"] = gold.unscorable
                unscorable.append(n)
            # An unscorable row keeps the release label as its answer text (never matched).
            answer = "".join(gold.letters) if not gold.unscorable else _label_text(obj["label"])
            answer_type = "choice" if len(gold.letters) == 1 and not gold.unscorable else "short"
            choices = options
        else:  # cloze
            gold_text = require(obj, "answer", file, n, (str, int, float))
            answer = _cloze_gold(str(gold_text))
            if not answer:
                fail(file, n, "field 'answer': empty")
            parts.append(text["cloze"])
            item_meta["kind"] = "cloze"
            answer_type, choices = "number", []
        rid = f"{NAME}-{task}-{n}"
        rows.append(make_row(id=rid, source=NAME, user="\n\n".join(parts), answer=answer,
                             answer_type=answer_type, choices=choices, meta=item_meta))
        where[rid] = f"line {n}"
    if not rows:
        fail(file, None, "no items")
    return rows, where, unscorable


def _label_text(label: Any) -> str:
    text = " ".join(map(str, label)) if isinstance(label, list) else str(label)
    return text.strip() or "[]"


def load(path: Path) -> list[Row]:
    """Rows from one task file or a folder holding `data/v1/*.jsonl` (or the task files)."""
    path = Path(path)
    if path.is_file():
        files = [path]
    else:
        base = next((p for p in (path / "data" / "v1", path / "v1", path) if p.is_dir() and any(p.glob("*.jsonl"))), None)
        if base is None:
            raise BenchmarkFormatError(f"{path}: no <task>.jsonl files found (expected AGIEval's data/v1/)")
        # sat-en-without-passage (sat-en's questions without their passages) is one of the
        # original's 21 tasks, in its table and its average.
        files = sorted(base.glob("*.jsonl"))
    rows: list[Row] = []
    odd: list[str] = []
    for file in files:
        file_rows, where, unscorable = _task_rows(file)
        check_unique_ids(file_rows, file, where)
        rows += file_rows
        if unscorable:
            odd.append(f"{file.name} line{'s' if len(unscorable) > 1 else ''} "
                       f"{', '.join(map(str, unscorable))}")
    if odd:
        count = sum(1 for r in rows if "unscorable" in meta(r))
        warn(f"agieval: {count} item(s) with a label the original scorer can never match "
             f"({'; '.join(odd)}): loaded and scored wrong, as there")
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


# where a reply states its answer: "the answer is (therefore)", "answer:", "答案是", "答案："
_ANSWER_IS = re.compile(r"(?i)\banswer\s*(?:is\b(?:\s+therefore\b)?|[:：])|答案(?:是|[:：])")


def _answer_part(reply: str) -> str:
    """What follows the reply's last "answer is" / "答案是", else the whole reply."""
    marks = list(_ANSWER_IS.finditer(reply))
    return reply[marks[-1].end():] if marks else reply


def original_letter(reply: str) -> str | None:
    """The single-answer reading: after "answer is", the first of the letters A-G; else the
    first of A-F in the reply; letters written alone (`letter_marks`)."""
    part = _answer_part(reply)
    if part is not reply:
        found = letter_marks(part, "ABCDEFG")
        if found:
            return found[0][1]
    found = letter_marks(reply, "ABCDEF")
    return found[0][1] if found else None


def original_letters(reply: str) -> frozenset[str] | None:
    """The multi-answer reading: every letter A-F given alone or in a run ("AC") after "answer
    is", else in the whole reply; None when there is none."""
    letters = {c for _, run in letter_runs(_answer_part(reply), "ABCDEF") for c in run}
    return frozenset(letters) or None


_THEREFORE = ("The answer is therefore", "答案是")
_DOLLARS = re.compile(r"\$(.*)\$")
_NUMBER = re.compile(r"(?:\$)?\d+(?:\.\d+)?(?![\w\d])")


def _last_boxed(text: str) -> str | None:
    """The content of the last `\\boxed{...}` (braces balanced), else None."""
    start = text.rfind("\\boxed")
    open_at = text.find("{", start) if start >= 0 else -1
    if open_at < 0 or text[start + len("\\boxed"):open_at].strip():
        return None
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1:i]
    return None


def original_cloze(reply: str) -> str | None:
    """The cloze reading (`parse_math_answer`, zero-shot): see the module docstring."""
    s = reply
    for lead in _THEREFORE:
        if lead in s:
            s = s[s.rfind(lead) + len(lead):].strip()
    if "\\boxed" in s:
        found = _last_boxed(s)
    else:
        dollars = _DOLLARS.findall(s)
        found = dollars[-1] if dollars else None
        if not found:
            if "=" in s:
                return s.split("=")[-1].lstrip(" ").rstrip(".").split("\\n")[0] or None
            numbers = _NUMBER.findall(s)
            return numbers[-1] if numbers else None
    if found is not None and "=" in found:
        found = found.split("=")[-1].lstrip(" ")
    return found or None



SHORT_REPLY_CHARS = 200  # as the shared fallback: a reply this short is an answer as a whole


def _bare(text: str) -> bool:
    """Whether a text is mathematics alone: no word of three letters outside LaTeX commands."""
    return re.search(r"[A-Za-z]{3,}", re.sub(r"\\[A-Za-z]+", " ", text)) is None


def cloze_answer(reply: str) -> str | None:
    """What an untagged reply answers to a cloze item: its last `\\boxed{}` (both original
    readers); else the answer its last "The answer is (therefore) X" / "Answer: X" states, up to the
    end of its line (the few-shot readers take the last line after "The answer is therefore");
    else the zero-shot reader's
    `$...$`, "=" and last-number rules (`original_cloze`), except that a short one-line reply that
    is mathematics alone, or in which those rules find nothing, is the answer as a whole (the
    zero-shot reader keeps what follows the last "=" of "y=\\pm\\sqrt{3}x")."""
    if "\\boxed" in reply:
        return original_cloze(reply)
    marks = list(_ANSWER_IS.finditer(reply))
    if marks:
        stated = reply[marks[-1].end():].split("\n")[0].strip(" \t:：").rstrip(".。").strip()
        if stated:
            return stated
    zero_shot = original_cloze(reply)
    whole = reply.strip()
    if len(whole) <= SHORT_REPLY_CHARS and "\n" not in whole and (zero_shot is None or _bare(whole)):
        return whole
    return zero_shot


def _original_reading(row: Row, m: dict, reply: str) -> Record | None:
    """The record of an untagged reply read by the original's rule, or None when it reads
    nothing there."""
    if m.get("kind") == "cloze":
        said = cloze_answer(reply)
        return None if said is None else {
            "extracted": said, "correct": answers.is_correct(said, row["answer"], "number")}
    if m.get("task") in MULTI_ANSWER_TASKS:
        letters = original_letters(reply)
        return None if letters is None else {
            "extracted": "".join(sorted(letters)),
            "correct": letters == frozenset(m.get("gold_letters") or ())}
    letter = original_letter(reply)
    return None if letter is None else {"extracted": letter, "correct": letter == row["answer"]}


def original_score(row: Row, response: str) -> Record:
    """`score`, except that a reply without answer tags is read by the original's rule where it
    reads something."""
    m = meta(row)
    reply = untagged_reply(response)
    read = _original_reading(row, m, reply) if reply is not None else None
    if read is not None:
        return {**read, "correct": read["correct"] and not m.get("unscorable"),
                "format_ok": answers.check_format(response), "read": "fallback"}
    return score(row, response)


def score(row: Row, response: str) -> Record:
    """The shared parser's verdict, except that a multi-answer item compares the set of letters
    in the extracted answer with the gold set (the original's exact-set rule)."""
    m = meta(row)
    if m.get("unscorable"):
        return {**default_score(row, response), "correct": False}
    if m.get("kind") != "multi_answer" or len(m.get("gold_letters", [])) < 2:
        return default_score(row, response)
    reading = answers.read_answer(response, None)
    picked = _letter_set(reading.answer)
    correct = picked is not None and picked == frozenset(m["gold_letters"])
    return {"extracted": reading.answer, "correct": correct,
            "format_ok": answers.check_format(response), "read": reading.how}


def chance_of(row: Row) -> float | None:
    """A uniform random answerer's chance on a row: 0 where the original can never match the
    label (`unscorable`); in a multi-answer task (any non-empty set of options may be the
    answer) 1/(2^options - 1); else 1/options; None for cloze items (open answers)."""
    m = meta(row)
    if m.get("kind") == "cloze":
        return None
    if m.get("unscorable"):
        return 0.0
    if m.get("task") in MULTI_ANSWER_TASKS:
        return 1 / (2 ** len(row["choices"]) - 1)
    return row_chance(row)


def aggregate(records: list[dict[str, Any]]) -> dict[str, Any]:
    out = accuracy_with_breakdowns(records, ("task", "language", "kind"))
    tasks = out.get("by_task", {})
    out["task_average"] = sum(t["accuracy"] for t in tasks.values()) / len(tasks) if tasks else 0.0
    out["unscorable"] = sum(1 for r in records if r.get("meta", {}).get("unscorable"))
    return out


# The system message of the benchmark's own convention (a suite's or the command line's
# system_prompt setting overrides it): reason, then state the answer in the form its scorer reads.
SYSTEM_PROMPT = (
    "Answer the exam question. Reason step by step if you need to, then end with a line of the "
    "form 'The answer is X', where X is the letter of the correct option (all the correct "
    "letters when several are correct) or the value the question asks for."
)


BENCHMARK = Benchmark(
    display="AGIEval",
    rank=150,
    name=NAME,
    category="iq",
    load=load,
    default_dir="agieval",
    hub_id=None,  # the hub holds only per-task re-exports in other layouts; use the GitHub release
    breakdowns=("task", "language", "kind"),
    score=score,
    original_score=original_score,
    aggregate=aggregate,
    chance=chance_of,
    notes="Per task: letter accuracy (multi-answer items need the exact set of letters); cloze "
          "items (math, gaokao-mathcloze) by mathematical equivalence; task_average over the "
          "tasks loaded (21 in the release); labels the original can never match score wrong.",
    system_prompt=SYSTEM_PROMPT,
)
