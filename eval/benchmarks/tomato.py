"""ToMATO (Shinoda et al., AAAI 2025): mental states behind turns of two-party conversations.

Release format: a JSON list (`tomato.json`, `tomato_fb.json`, `tomato_first.json`, ...) of
questions with `conversation` (`Name: "utterance"` lines), `q`, options `a0`..`a3`, the correct
index `a_idx` (and its text `a_str`), `mental_state` (belief, desire, emotion, intention,
knowledge), `order` (1 or 2), `false_belief` (bool), `q_id`, `u_id` and speaker metadata.
Scoring: 4-way multiple choice, accuracy per mental state and per order (and for the
false-belief subset). The release's own scripts (`code/run_gpt.py`, `code/run_local_llm.py`) label
the options `[A]`..`[D]` and read a reply's first bracketed letter `[A]`..`[D]`; a reply without
one is wrong there. A reply without answer tags is read that way here when it holds such a mark,
else by the shared careful reader (our prompt labels the options `A.`, so "A. <option text>" is
read as A where the original reads nothing).
"""
from __future__ import annotations

import re
from pathlib import Path

from eval.benchmarks._common import choice_block, fail, files_in, get, read_json
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import Benchmark, Record, Row, default_score
from eval.rows import make_row

NAME = "tomato"
MENTAL_STATES = ("belief", "desire", "emotion", "intention", "knowledge")

INSTRUCTION = (
    "Read the conversation between two people and answer the multiple-choice question about "
    "what one of them thinks, feels, wants, intends or knows at the utterance it quotes."
)


def load(path: Path) -> list[Row]:
    rows: list[Row] = []
    seen: set[str] = set()
    for file in files_in(Path(path), "tomato*.json", NAME):
        doc = read_json(file)
        if not isinstance(doc, list):
            fail(file, "", "expected a JSON list of questions")
        in_file: set[str] = set()
        for i, item in enumerate(doc):
            row = _row(item, file, i)
            if row["id"] in in_file:
                fail(file, f"record {i}", f"duplicate field 'q_id' {row['id'].split('/', 1)[1]!r}")
            in_file.add(row["id"])
            # tomato.json repeats every question of the subset files: ask each one once
            if row["id"] not in seen:
                seen.add(row["id"])
                rows.append(row)
    return rows


def _row(item, file: Path, i: int) -> Row:
    where = f"record {i}"
    conversation = get(item, "conversation", file, where)
    question = get(item, "q", file, where)
    options = [get(item, f"a{k}", file, where).strip() for k in range(4)]
    gold = get(item, "a_idx", file, where, int)
    if not 0 <= gold < 4:
        fail(file, where, f"field 'a_idx' must be 0-3, got {gold}")
    if "a_str" in item and isinstance(item["a_str"], str) and item["a_str"].strip() != options[gold]:
        fail(file, where, "field 'a_str' differs from the option that 'a_idx' points to")
    state = get(item, "mental_state", file, where)
    if state not in MENTAL_STATES:
        fail(file, where, f"field 'mental_state' must be one of {', '.join(MENTAL_STATES)}, got {state!r}")
    order = get(item, "order", file, where, int)
    false_belief = get(item, "false_belief", file, where, bool)
    q_id = get(item, "q_id", file, where)
    return make_row(
        id=f"{NAME}/{q_id}",
        source=NAME,
        user=f"{INSTRUCTION}\n\nConversation:\n{conversation.strip()}\n\n{choice_block(question.strip(), options)}",
        answer=chr(ord("A") + gold),
        answer_type="choice",
        choices=options,
        meta={
            "mental_state": state,
            "order": order,
            "false_belief": false_belief,
            "q_id": q_id,
            "u_id": item.get("u_id"),
            "file": file.name,
            "record": i,
        },
    )


_BRACKETED = re.compile(r"\[([A-D])\]")


def original_score(row: Row, response: str) -> Record:
    """The shared parser's verdict; a reply without answer tags that holds a bracketed letter
    `[X]` answers the first one, as the release's scripts read replies."""
    rec = default_score(row, response)
    reply = untagged_reply(response)
    m = _BRACKETED.search(reply) if reply is not None else None
    if m:
        rec.update(extracted=m.group(1), read="fallback", correct=m.group(1) == row["answer"])
    return rec


BENCHMARK = Benchmark(
    display="ToMATO",
    rank=50,
    name=NAME,
    category="tom",
    load=load,
    default_dir="tomato",
    hub_id=None,  # released on GitHub (nttmdlab-nlp/ToMATO)
    breakdowns=("mental_state", "order", "false_belief"),
    score=default_score,
    original_score=original_score,
    notes="4-way multiple choice; accuracy per mental state (belief, desire, emotion, intention, "
    "knowledge), per order and for false-belief questions.",
)
