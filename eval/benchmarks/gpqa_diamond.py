"""GPQA Diamond (Rein et al., 2023): 198 graduate-level science questions, 4 options.

Release format: the official `gpqa_diamond.csv` (78 columns; `Question`, `Correct Answer`,
`Incorrect Answer 1-3`, `Record ID`, `High-level domain`, `Subdomain`, ...). The release keeps the
correct answer in a fixed column, so the original evaluation shuffles the four options with a
seeded RNG; here the order of each item is a function of (SHUFFLE_SEED, Record ID) only, so it is
the same in every run and does not change when other items are added or removed.

Reading a reply without answer tags as the original does (`baselines/utils.py`,
`parse_sampled_answer`, whose prompts label the options `(A)` ...): the letter of the first
"answer is (X)", else "Answer: (X)", else "answer: (X)", else "answer (X)", else of the first
"(X)" anywhere in the reply, X one of A-D; so "(B) <option text> because ..." answers B, whatever
capitals the option text holds ("A = benzoquinone, B = ..."). A reply without such a mark is read
by the shared careful reader (a leading "B." label, an option's text).

The authors ask that the questions not be shown in plain text online: keep samples and reports
that quote them out of public places.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

from eval.benchmarks._common import (
    LETTERS, check_unique_ids, fail, option_lines, permutation_sha256,
)
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import Benchmark, BenchmarkFormatError, Record, Row, default_score
from eval.rows import make_row

NAME = "gpqa_diamond"
SHUFFLE_SEED = 0
OPTION_COLUMNS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")
REQUIRED = ("Question", *OPTION_COLUMNS, "Record ID")


def _file(path: Path) -> Path:
    if path.is_file():
        return path
    for name in ("gpqa_diamond.csv", "dataset/gpqa_diamond.csv"):
        if (path / name).is_file():
            return path / name
    csvs = sorted(path.rglob("*.csv"))
    if len(csvs) == 1:
        return csvs[0]
    raise BenchmarkFormatError(f"{path}: no gpqa_diamond.csv found")


def load(path: Path, seed: int = SHUFFLE_SEED) -> list[Row]:
    file = _file(Path(path))
    rows: list[Row] = []
    where: dict[str, str] = {}
    try:
        with file.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                fail(file, 1, f"header lacks column(s) {', '.join(map(repr, missing))}")
            start = reader.line_num + 1
            for rec in reader:
                # Fields may span lines: name the line the record starts on.
                loc = f"line {start}"
                start = reader.line_num + 1
                if None in rec or any(rec[c] is None for c in header):
                    fail(file, loc, f"expected {len(header)} fields, got a different number")
                for c in REQUIRED:
                    if not rec[c].strip():
                        fail(file, loc, f"field {c!r}: empty")
                record_id = rec["Record ID"].strip()
                options = [rec[c].strip() for c in OPTION_COLUMNS]
                order = permutation_sha256(4, NAME, seed, record_id)
                shown = [options[i] for i in order]
                user = "\n\n".join([rec["Question"].strip(), option_lines(shown),
                                    "Answer with the letter of the correct option."])
                rid = f"{NAME}-{record_id}"
                rows.append(make_row(
                    id=rid, source=NAME, user=user, answer=LETTERS[order.index(0)],
                    answer_type="choice", choices=shown,
                    meta={"record_id": record_id, "domain": (rec.get("High-level domain") or "").strip() or None,
                          "subdomain": (rec.get("Subdomain") or "").strip() or None, "shuffle_seed": seed},
                ))
                where[rid] = loc
    except csv.Error as e:
        fail(file, f"line {reader.line_num}", f"malformed CSV ({e})")
    except UnicodeDecodeError as e:
        fail(file, None, f"not UTF-8 text ({e.reason})")
    if not rows:
        fail(file, None, "no records")
    check_unique_ids(rows, file, where)
    return rows


# The system message of the benchmark's own convention (a suite's or the command line's
# system_prompt setting overrides it): reason, then state the answer in the form its scorer reads.
SYSTEM_PROMPT = (
    "Answer the multiple-choice question. Reason step by step, then end with a line of the form "
    "'The answer is (X)', where X is the letter of the correct option."
)


# the marks the original looks for, most specific first; each is followed by "(X)"
_MARKS = [re.compile(re.escape(lead) + r"\((.)\)") for lead in
          ("answer is ", "Answer: ", "answer: ", "answer ", "")]


def original_letter(reply: str) -> str | None:
    """The letter the original's parse_sampled_answer reads: for each mark in turn, its first
    occurrence in the reply, taken when the bracketed character is A, B, C or D."""
    for mark in _MARKS:
        m = mark.search(reply)
        if m and m.group(1) in "ABCD":
            return m.group(1)
    return None


def original_score(row: Row, response: str) -> Record:
    """The shared parser's verdict; a reply without answer tags that holds one of the original's
    marks (`original_letter`) answers that letter."""
    rec = default_score(row, response)
    reply = untagged_reply(response)
    letter = original_letter(reply) if reply is not None else None
    if letter is not None:
        rec.update(extracted=letter, read="fallback", correct=letter == row["answer"])
    return rec


BENCHMARK = Benchmark(
    display="GPQA Diamond",
    rank=140,
    name=NAME,
    category="iq",
    load=load,
    default_dir="gpqa_diamond",
    hub_id="Idavidrein/gpqa",
    breakdowns=("domain", "subdomain"),
    score=default_score,
    original_score=original_score,
    notes="4-way multiple-choice accuracy; the options are shuffled per item with a fixed seed.",
    extra={"hub_config": "gpqa_diamond", "shuffle_seed": SHUFFLE_SEED},
    system_prompt=SYSTEM_PROMPT,
)
