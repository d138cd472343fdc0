"""Social IQa (Sap et al., EMNLP 2019): commonsense about people's motives, reactions and needs.

Release format (AI2's socialiqa-train-dev.zip): `<split>.jsonl` with `context`, `question`,
`answerA/B/C`, and a line-aligned `<split>-labels.lst` holding 1, 2 or 3 (1-based: 1 is answerA).
Scoring: 3-way multiple-choice accuracy. The breakdown by question type follows the ATOMIC
dimensions the questions were templated from (wants, reactions, motivations, needs, effects,
descriptions), recognised from the question wording.

Reading: AI2 released no reader of free-text replies (the leaderboard took a label per item), so
the shared careful reader decides, with two guards of this benchmark's own: an answer that is
exactly one option's text names that option, even when the option begins with a word the reader
would take for a lead-in ("answer the phone", dev-468 and dev-725 of the release); and a reply
that declines ("I'm sorry, but I can't ...") answers nothing, even though it contains the words of
an option ("sorry", dev-923), unless it writes an option letter.
"""
from __future__ import annotations

import re
from pathlib import Path

from eval.benchmarks._common import LETTERS, fail, option_lines, read_jsonl, require
from eval.benchmarks._reading import exact_option, is_refusal, letter_marks, untagged_reply
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Record, Row, default_score
from eval.rows import make_row

NAME = "socialiqa"
OPTION_FIELDS = ("answerA", "answerB", "answerC")

# First match wins; the patterns cover the question templates of the release.
_QUESTION_TYPES = (
    ("wants", r"\bwant(s)? to do\b"),
    ("needs", r"\bneed(s)? to do before\b"),
    ("motivations", r"^why (did|does|would)\b"),
    ("reactions", r"\bfeel\b"),
    ("effects", r"\bwhat will happen to\b|\bwhat happens to\b"),
    ("descriptions", r"\bdescribe\b"),
)


def question_type(question: str) -> str:
    q = question.strip().lower()
    return next((name for name, pat in _QUESTION_TYPES if re.search(pat, q)), "other")


def _files(path: Path) -> tuple[Path, Path]:
    """(items, labels) for a folder (dev split preferred) or an items file."""
    if path.is_dir():
        candidates = [path / "dev.jsonl"] + sorted(p for p in path.glob("*.jsonl") if p.name != "dev.jsonl")
        items = next((p for p in candidates if p.is_file()), None)
        if items is None:
            raise BenchmarkFormatError(f"{path}: no <split>.jsonl found (expected dev.jsonl and dev-labels.lst)")
    else:
        items = path
    labels = items.with_name(f"{items.stem}-labels.lst")
    if not labels.is_file():
        raise BenchmarkFormatError(f"{labels}: no such file (labels for {items.name})")
    return items, labels


def _labels(path: Path) -> list[int]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        value = line.strip()
        if not value:
            continue
        if value not in ("1", "2", "3"):
            fail(path, n, f"label {value!r} is not 1, 2 or 3")
        out.append(int(value))
    return out


def load(path: Path) -> list[Row]:
    items_file, labels_file = _files(Path(path))
    labels = _labels(labels_file)
    split = items_file.stem
    rows: list[Row] = []
    for i, (n, obj) in enumerate(read_jsonl(items_file)):
        if i >= len(labels):
            fail(labels_file, None, f"{len(labels)} labels but {items_file.name} has more items "
                                    f"(first unlabelled at line {n})")
        context = require(obj, "context", items_file, n)
        question = require(obj, "question", items_file, n)
        options = [require(obj, f, items_file, n) for f in OPTION_FIELDS]
        user = "\n\n".join([
            context.strip(), question.strip(), option_lines([o.strip() for o in options]),
            "Answer with the letter of the correct option.",
        ])
        rows.append(make_row(
            id=f"{NAME}-{split}-{i + 1}", source=NAME, user=user, answer="ABC"[labels[i] - 1],
            answer_type="choice", choices=options,
            meta={"split": split, "line": n, "question_type": question_type(question)},
        ))
    if len(rows) != len(labels):
        fail(labels_file, len(rows) + 1, f"{len(labels)} labels for {len(rows)} items in {items_file.name}")
    if not rows:
        fail(items_file, None, "no items")
    return rows


def score(row: Row, response: str) -> Record:
    """The shared parser's verdict, with the two guards of the module docstring."""
    rec = default_score(row, response)
    choices = row["choices"]
    reply = untagged_reply(response)
    exact = exact_option(rec["extracted"], choices)
    if exact is None and reply is not None:
        exact = exact_option(reply, choices)
    if exact is not None:
        letter = LETTERS[exact]
        return {**rec, "extracted": letter, "correct": letter == row["answer"],
                "read": "fallback" if rec["read"] == "none" else rec["read"]}
    said = rec["extracted"] if rec["read"] == "tag" else reply
    if is_refusal(said) and not letter_marks(said, LETTERS[:len(choices)]):
        return {**rec, "extracted": None, "correct": False,
                "read": "tag" if rec["read"] == "tag" else "none"}
    return rec


BENCHMARK = Benchmark(
    display="SocialIQA",
    rank=120,
    name=NAME,
    category="ei",
    load=load,
    default_dir="socialiqa",
    hub_id="allenai/social_i_qa",
    breakdowns=("question_type",),
    score=score,
    notes="3-way multiple-choice accuracy (labels 1-3 in <split>-labels.lst).",
)
