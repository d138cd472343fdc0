"""FANToM (Kim et al., EMNLP 2023): who knows what in a multi-party conversation where someone
left and came back (information asymmetry).

Release format: `fantom_v1.json`, a JSON list of sets (one conversation x one piece of
information the joining speaker missed): `set_id`, `part_id`, `conv_id`, `short_context`,
`full_context`, `factQA` {question, correct_answer}, `beliefQAs` [{question, tom_type,
correct_answer, wrong_answer, missed_info_accessibility}], `answerabilityQA_list` and
`infoAccessibilityQA_list` {question, correct_answer: [names], wrong_answer: [names]},
`answerabilityQAs_binary` and `infoAccessibilityQAs_binary` [{question, correct_answer:
yes | no | no:long}].
Scoring as the release's `eval_fantom.py`, per scenario (`inaccessible` = the test, `accessible`
= the control questions): BeliefQ[choice] accuracy (two options, order randomised: seeded here);
AnswerabilityQ and InfoAccessQ [list] exact set of names; [y/n] weighted F1; the set-level 'ALL'
score (a set counts only when every one of these questions is right); FactQ token F1. With the
short context, questions whose answer is `no:long` (about people absent from the excerpt) are
dropped as the original does. BeliefQ[dist] (free text judged by a sentence-embedding model) and
so 'ALL*' are not computed: they need that embedding model.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval import answers
from eval.benchmarks._tom_common import (
    LETTERS,
    choice_block,
    f1,
    fail,
    files_in,
    get,
    mean,
    read_json,
    seeded_permutation,
    token_f1,
)
from eval.benchmarks.base import Benchmark, Record, Row, default_score
from eval.rows import make_row

NAME = "fantom"
SEED = 0
NOBODY = "nobody"
_NAME_SPLIT = re.compile(r"[,;/&\n]|\band\b", re.I)
_NO_NAMES = frozenset({"nobody", "none", "no one", "noone", "none of them", "no characters"})
SCENARIOS = {"inaccessible": "fantom", "accessible": "control"}

HEADER = (
    "Below is an in-person conversation between people who have just met. Answer the question "
    "about what was said or about what the people in it know and believe."
)


def load(path: Path, *, context: str = "short", seed: int = SEED) -> list[Row]:
    """Rows with the short conversation excerpt (the original default) or the full one."""
    if context not in ("short", "full"):
        raise ValueError(f"context must be 'short' or 'full', got {context!r}")
    rows: list[Row] = []
    for file in files_in(Path(path), "*.json", NAME):
        doc = read_json(file)
        if not isinstance(doc, list):
            fail(file, "", "expected a JSON list of question sets (fantom_v1.json)")
        for i, record in enumerate(doc):
            rows.extend(_set_rows(record, file, i, context, seed))
    return rows


def _set_rows(rec, file: Path, i: int, context: str, seed: int) -> list[Row]:
    where = f"record {i}"
    set_id = get(rec, "set_id", file, where)
    text = get(rec, f"{context}_context", file, where).strip()
    base = {"set_id": set_id, "part_id": rec.get("part_id"), "conv_id": rec.get("conv_id"), "context": context}
    prefix = f"{NAME}/{context}/{set_id}"
    out: list[Row] = []

    def add(kind: str, j: int, ask: str, answer: str, answer_type: str, choices=(), **meta):
        out.append(make_row(
            id=f"{prefix}/{kind}/{j}",
            source=NAME,
            user=f"{HEADER}\n\nConversation:\n{text}\n\n{ask}",
            answer=answer,
            answer_type=answer_type,
            choices=choices,
            meta={**base, "question_type": kind, **meta},
        ))

    fact = rec.get("factQA")
    fact_q = fact_a = ""
    if fact is not None:
        fact_q = get(fact, "question", file, f"{where} factQA").strip()
        fact_a = get(fact, "correct_answer", file, f"{where} factQA").strip()
        add("fact", 0, f"Question: {fact_q}\n\nAnswer in one sentence.", fact_a, "short")

    beliefs = rec.get("beliefQAs") or []
    if not isinstance(beliefs, list):
        fail(file, where, "field 'beliefQAs' must be a list")
    for j, qa in enumerate(beliefs):
        w = f"{where} beliefQAs[{j}]"
        question = get(qa, "question", file, w).strip()
        right, wrong = (get(qa, k, file, w).strip() for k in ("correct_answer", "wrong_answer"))
        order = seeded_permutation(2, f"{prefix}/belief_choice/{j}", seed)
        options = [[right, wrong][k] for k in order]
        add("belief_choice", j, choice_block(question, options), LETTERS[order.index(0)], "choice",
            options, tom_type=get(qa, "tom_type", file, w),
            accessibility=get(qa, "missed_info_accessibility", file, w))

    for kind, key, lead in (
        ("answerability", "answerabilityQA", f"Target question: {fact_q}"),
        ("info_accessibility", "infoAccessibilityQA", f"Information: {fact_q} {fact_a}"),
    ):
        qa = rec.get(f"{key}_list")
        if qa is not None:
            w = f"{where} {key}_list"
            question = get(qa, "question", file, w).strip()
            right, wrong = (get(qa, k, file, w, list, nonempty=False) for k in ("correct_answer", "wrong_answer"))
            if not all(isinstance(n, str) and n.strip() for n in right + wrong):
                fail(file, w, "fields 'correct_answer' and 'wrong_answer' must list character names")
            access = get(qa, "missed_info_accessibility", file, w)
            if context == "full" and wrong:
                access = "inaccessible"  # the original's rule for the full conversation
            add(f"{kind}_list", 0,
                f"{lead}\nQuestion: {question}\n\nAnswer with the names separated by commas, or "
                f"'{NOBODY}' if no one does.",
                ", ".join(n.strip() for n in right) or NOBODY, "short",
                names=[n.strip() for n in right], other_names=[n.strip() for n in wrong],
                accessibility=access)

        binaries = rec.get(f"{key}s_binary") or []
        if not isinstance(binaries, list):
            fail(file, where, f"field '{key}s_binary' must be a list")
        golds = []
        for j, qa in enumerate(binaries):
            w = f"{where} {key}s_binary[{j}]"
            gold = get(qa, "correct_answer", file, w)
            if gold not in ("yes", "no", "no:long"):
                fail(file, w, f"field 'correct_answer' must be yes, no or no:long, got {gold!r}")
            golds.append(gold)
        full_access = "inaccessible" if any(g != "yes" for g in golds) else None
        for j, qa in enumerate(binaries):
            if context == "short" and golds[j] == "no:long":
                continue  # about someone absent from the excerpt: the original drops these
            w = f"{where} {key}s_binary[{j}]"
            access = get(qa, "missed_info_accessibility", file, w)
            if context == "full":
                access = full_access or access
            add(f"{kind}_binary", j,
                f"{lead}\nQuestion: {get(qa, 'question', file, w).strip()}\n\nAnswer yes or no.",
                golds[j].split(":")[0], "yes_no", accessibility=access, long_absent=golds[j] == "no:long")
    return out


def names_of(answer: str | None) -> set[str] | None:
    """The set of normalised names an answer lists ('Sara and Javier' -> {'sara', 'javier'});
    the empty set for 'nobody'; None when there is no answer."""
    if answer is None:
        return None
    names = {answers.normalize(part) for part in _NAME_SPLIT.split(answer)}
    names.discard("")
    return set() if names <= _NO_NAMES else names - _NO_NAMES


def score(row: Row, response: str) -> Record:
    meta = json.loads(row["meta"])
    kind = meta["question_type"]
    if not kind.endswith("_list"):
        rec = default_score(row, response)
        if kind == "fact":
            rec["token_f1"] = token_f1(row["answer"].lower(), (rec["extracted"] or "").lower())
        elif kind.endswith("_binary"):
            rec["binary"] = next((yn for yn in ("yes", "no") if answers.is_correct(
                rec["extracted"], yn, "yes_no")), None)
        return rec
    extracted = answers.extract_answer(response)
    named = names_of(extracted)
    gold = {answers.normalize(n) for n in meta["names"]}
    others = {answers.normalize(n) for n in meta["other_names"]}
    return {
        "extracted": extracted,
        "correct": named == gold,
        "format_ok": answers.check_format(response),
        "missed_aware": bool(named is None or gold - named),
        "included_unaware": bool(named and named & others),
    }


def _scenario(records: list[Record]) -> dict[str, Any]:
    by_type: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        by_type[r["meta"]["question_type"]].append(r)

    def all_correct(types: tuple[str, ...]) -> float | None:
        sets: dict[str, list[bool]] = defaultdict(list)
        for r in records:
            if r["meta"]["question_type"].startswith(types):
                sets[r["meta"]["set_id"]].append(bool(r["correct"]))
        return mean(all(v) for v in sets.values()) if sets else None

    def acc(kind: str) -> float | None:
        return mean(r["correct"] for r in by_type[kind]) if by_type[kind] else None

    def binary_f1(kind: str) -> float | None:
        recs = by_type[kind]
        if not recs:
            return None
        return f1([r["gold"] for r in recs], [r.get("binary") or "unparsed" for r in recs], "weighted")

    out = {
        "all": all_correct(("belief_choice", "answerability", "info_accessibility")),
        "belief_choice": acc("belief_choice"),
        "answerability_all": all_correct(("answerability",)),
        "answerability_list": acc("answerability_list"),
        "answerability_binary_f1": binary_f1("answerability_binary"),
        "info_accessibility_all": all_correct(("info_accessibility",)),
        "info_accessibility_list": acc("info_accessibility_list"),
        "info_accessibility_binary_f1": binary_f1("info_accessibility_binary"),
        "n": len(records),
    }
    return {k: v for k, v in out.items() if v is not None}


def aggregate(records: list[Record]) -> dict[str, Any]:
    """The original report: scores for the inaccessible (test) scenario at the top level, the
    accessible (control) ones under `control`; fact token F1; accuracy per question type and per
    belief-question ToM type."""
    tom = [r for r in records if r["meta"]["question_type"] != "fact"]
    facts = [r for r in records if r["meta"]["question_type"] == "fact"]
    out: dict[str, Any] = _scenario([r for r in tom if r["meta"].get("accessibility") == "inaccessible"])
    out["n_inaccessible"] = out.pop("n")
    out.update(accuracy=mean(r["correct"] for r in records), n=len(records))
    control = [r for r in tom if r["meta"].get("accessibility") == "accessible"]
    if control:
        out["control"] = _scenario(control)
    if facts:
        out["fact_token_f1"] = mean(r.get("token_f1", 0.0) for r in facts)
    for key in ("question_type", "tom_type"):
        groups: dict[str, list[bool]] = defaultdict(list)
        for r in records:
            if r["meta"].get(key) is not None:
                groups[r["meta"][key]].append(bool(r["correct"]))
        out[f"by_{key}"] = {k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(groups.items())}
    return out


BENCHMARK = Benchmark(
    name=NAME,
    category="tom",
    load=load,
    default_dir="fantom",
    hub_id=None,  # released as a tarball on Google Cloud Storage, linked from skywalker023/fantom
    breakdowns=("question_type", "tom_type"),
    primary_metric="all",
    score=score,
    aggregate=aggregate,
    notes="Per set, 'ALL' = every belief (choice), answerability and info-accessibility question "
    "right; list questions need the exact set of names, yes/no scored by weighted F1, facts by "
    "token F1; short context, no:long questions dropped.",
)
