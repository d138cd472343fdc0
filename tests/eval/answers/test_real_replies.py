"""The shared reader against a careful human reading of real model replies (issue 30).

`real_replies.jsonl` holds 300 replies of SmolLM2-135M-Instruct and of its fine-tuned variants,
taken from the sample files of `runs/real/`, `runs/gpu-sweep1/`, `runs/gpu-sweep2/` and
`runs/demo-real/` (field `source`), mostly untagged replies of the base model, some tagged ones.
Each was read by hand before the parser's reading was looked at: `reader` is the answer a careful
reader finds in the reply (an option letter for a `choice` row, `yes`/`no`, the candidate named
for a `short` row with candidates, the answer text of an open `short` row, the value of a
`number` row; for an EmoBench EU row the two letters `emotion; cause`, `-` for a part not given),
or null when a careful reader cannot find one answer; `why` says why where it is not obvious.
Only replies, options, candidates and golds are stored, never a benchmark's story or question
(replies that reproduce a licensed benchmark's text at length, FANToM's conversation dumps, were
left out; ExploreToM's retellings are of our own generated stories).

The parser's reading is put in the same terms: the option `chosen_option` finds in the answer
`read_answer` returns, the one of yes/no or the one candidate that answer is credited with, the
answer text itself for open `short` and `number` rows (the same answer when the `short` /
`number` rule matches it with the reader's), and EmoBench's own two-part reader for its EU rows.
The goal of issue 30 is 98% agreement overall.
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from eval.answers import chosen_option, is_correct, read_answer, score
from eval.answers.reading import NONE
from eval.benchmarks import get_benchmark

DATA = Path(__file__).with_name("real_replies.jsonl")
GOAL = 0.98  # issue 30's goal for overall agreement
# The agreement the parser reaches (295 of 300 when last measured): the test fails below the goal.
REACHED = GOAL
# Replies in which a careful reader finds no answer but which the parser credits: none.
CREDITED_TODAY: set[tuple[str, str]] = set()


def _cases() -> list[dict]:
    lines = DATA.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


CASES = _cases()


def kind_of(case: dict) -> str:
    t = case["answer_type"]
    if case.get("parts"):
        return "emotion+cause"
    if t == "short":
        return "short (candidates)" if case["candidates"] else "short (open)"
    return t


def _eu_row(case: dict) -> dict:
    emotion, cause = (p.strip() for p in case["gold"].split(";"))
    meta = {"task": "EU", "options": case["parts"], "gold": {"emotion": emotion, "cause": cause}}
    return {"id": case["id"], "answer": case["gold"], "answer_type": "short", "choices": [],
            "meta": json.dumps(meta), "prompt": []}


def parser_reading(case: dict) -> str | None:
    """The parser's answer to `case`, in the reader's terms."""
    kind = kind_of(case)
    reply, choices, cands = case["reply"], case["choices"], case["candidates"]
    if kind == "emotion+cause":
        rec = get_benchmark("emobench").score(_eu_row(case), reply)
        e, c = rec["emotion_choice"], rec["cause_choice"]
        return None if not (e or c) else f"{e or '-'}; {c or '-'}"
    read = read_answer(reply, case["answer_type"], choices, cands)
    if read.how == NONE or read.answer is None:
        return None
    if kind == "choice":
        return chosen_option(read.answer, choices)
    if kind == "yes_no":
        said = [w for w in ("yes", "no") if is_correct(read.answer, w, "yes_no")]
        return said[0] if len(said) == 1 else None
    if kind == "short (candidates)":
        named = [c for c in cands if is_correct(read.answer, c, "short", cands)]
        return named[0] if len(named) == 1 else None
    return read.answer  # open short, number: the text read


def agrees(case: dict, parsed: str | None) -> bool:
    reader = case["reader"]
    if reader is None or parsed is None:
        return reader is None and parsed is None
    kind = kind_of(case)
    if kind == "short (open)":
        return is_correct(parsed, reader, "short")
    if kind == "number":
        return is_correct(parsed, reader, "number")
    return parsed == reader


def _agreement() -> tuple[dict[str, list[bool]], list[tuple[dict, str | None]]]:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    misses = []
    for case in CASES:
        parsed = parser_reading(case)
        ok = agrees(case, parsed)
        by_kind[kind_of(case)].append(ok)
        by_kind[f"benchmark {case['benchmark']}"].append(ok)
        if not ok:
            misses.append((case, parsed))
    return by_kind, misses


def test_the_file_is_well_formed():
    assert len(CASES) == 300
    keys = {"benchmark", "id", "source", "answer_type", "choices", "candidates", "gold", "reply",
            "reader", "why"}
    seen = set()
    for case in CASES:
        assert keys <= set(case), case["id"]
        assert (case["source"], case["id"]) not in seen
        seen.add((case["source"], case["id"]))
        assert len(case["reply"]) <= 1500
        if case["reader"] is None:
            assert case["why"], f"{case['id']}: a null reading says why"
        elif kind_of(case) == "choice":
            assert case["reader"] in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(case["choices"])]
        elif kind_of(case) == "yes_no":
            assert case["reader"] in ("yes", "no")
        elif kind_of(case) == "short (candidates)":
            assert case["reader"] in case["candidates"]
    kinds = Counter(kind_of(c) for c in CASES)
    assert {"choice", "yes_no", "short (candidates)", "short (open)", "number",
            "emotion+cause"} <= set(kinds)


def test_agreement_with_a_careful_reader():
    by_kind, misses = _agreement()
    total = sum(len(v) for k, v in by_kind.items() if not k.startswith("benchmark "))
    agreed = total - len(misses)
    print(f"\nagreement with the careful reader: {agreed}/{total} = {agreed / total:.1%}"
          f" (goal {GOAL:.0%})")
    for k in sorted(by_kind):
        v = by_kind[k]
        print(f"  {k}: {sum(v)}/{len(v)} = {sum(v) / len(v):.1%}")
    for case, parsed in misses:
        print(f"- {case['benchmark']} {case['id']} ({case['source']}): reader {case['reader']!r},"
              f" parser {parsed!r}; reply {case['reply'][:160]!r}; why: {case['why']}")
    assert agreed / total >= REACHED


def test_no_credit_where_a_careful_reader_finds_no_answer():
    credited = []
    for case in CASES:
        if case["reader"] is not None:
            continue
        if kind_of(case) == "emotion+cause":
            right = get_benchmark("emobench").score(_eu_row(case), case["reply"])["correct"]
        else:
            right = score(case["reply"], case["gold"], case["answer_type"], case["choices"],
                          case["candidates"]).correct
        if right:
            credited.append((case["source"], case["id"]))
    print(f"\ncredited though a careful reader finds no answer: {credited}")
    assert set(credited) <= CREDITED_TODAY, f"newly credited: {set(credited) - CREDITED_TODAY}"


@pytest.mark.parametrize("case", [c for c in CASES if c["reader"] is not None and
                                  kind_of(c) in ("choice", "yes_no", "short (candidates)")],
                         ids=lambda c: f"{c['source']}:{c['id']}")
def test_a_careful_reading_scores_as_the_gold_says(case):
    """Where the parser reads what the reader reads, the verdict is the reader's answer against
    the gold (a sanity check of the comparison, not of the reading)."""
    parsed = parser_reading(case)
    if parsed != case["reader"]:
        pytest.skip("a disagreement, reported by test_agreement_with_a_careful_reader")
    v = score(case["reply"], case["gold"], case["answer_type"], case["choices"], case["candidates"])
    expected = case["reader"] == case["gold"] if kind_of(case) != "yes_no" else (
        case["reader"] == case["gold"].strip().lower())
    assert v.correct == expected
