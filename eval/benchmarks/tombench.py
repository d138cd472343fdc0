"""ToMBench (Chen et al., ACL 2024): 20 tasks over the ATOMS abilities, bilingual zh/en.

Release format: `data/<Task name>.jsonl`, one item per line; English fields `STORY`, `QUESTION`,
`OPTION-A`..`OPTION-D` (C and D null/NaN for two-option items), gold letter `"答案\\nANSWER"`,
ability string `"能力\\nABILITY"` (one or more `Category: ability` parts).
Scoring as in the official evaluation (zhchen18/ToMBench `run_huggingface.py` / `run_api.py`
and `get_results.py`): the options are shuffled (here with a fixed seed, so runs are
reproducible), the model's letter is mapped back to the original option, and with several
shuffles per item (`permutations`; the original's default is 5, ours 1) the majority vote
decides, a tie going to the answer given first. A reply without answer tags is read as the
original's `extract_answer` reads every reply: a `[[X]]` mark (the first of A, B, C, D that occurs),
else a `[X]` mark, else the last option letter A-D in the reply, so "A or C" votes C and "B.
Skiing ... The answer is D. Skiing." votes D; unlike the original, a letter is a letter written
alone, not the capital that begins a word (the original reads the C of "Chen" in "A. Chen can
...", the A of "After" in "B. After counting ..."). A reply in which that finds no letter is read
by the shared careful reader (the text of one option). A reply that names no single option is a
vote for the option shown as A, as the original's `extract_answer` returns "A" when it finds no
letter (`unparsed_votes` counts them; `accuracy_unparsed_wrong` scores them as wrong instead).
Accuracy per task and per ability (an item with two abilities counts in both), per ability
category, and per raw ability string as the original keys its results (`by_original_ability`).
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from eval import answers
from eval.benchmarks._common import (
    LETTERS,
    choice_block,
    fail,
    files_in,
    get,
    mean,
    permutation_str_seed,
    read_jsonl,
    short_repr,
)
from eval.benchmarks._reading import letter_marks, untagged_reply
from eval.benchmarks.base import Benchmark, Record, Row, answer_given, default_score
from eval.rows import make_row, meta as meta_of

NAME = "tombench"
SEED = 0
ABILITY_KEY = "能力\nABILITY"
ANSWER_KEY = "答案\nANSWER"
INDEX_KEY = "序号\nINDEX"
CATEGORIES = ("Emotion", "Desire", "Intention", "Knowledge", "Belief", "Non-Literal Communication")
_CATEGORY = re.compile(
    r"\b(" + "|".join(re.escape(c) for c in CATEGORIES) + r")\s*:\s*", re.IGNORECASE
)
_LETTER_PREFIX = re.compile(r"^[A-D]\s*[.．、]\s*")

INSTRUCTION = (
    "Read the story and answer the multiple-choice question about it. Pick the option that is "
    "most likely given what happens in the story."
)


def split_abilities(text: str) -> list[str]:
    """`"Belief: Content false beliefs Belief: Second-order beliefs"` ->
    `["Belief: Content false beliefs", "Belief: Second-order beliefs"]` (category names made
    canonical, e.g. "Non-literal communication" -> "Non-Literal Communication")."""
    marks = list(_CATEGORY.finditer(text))
    if not marks:
        return [" ".join(text.split())]
    out = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        category = next(c for c in CATEGORIES if c.lower() == m.group(1).lower())
        out.append(f"{category}: {' '.join(text[m.end():end].split())}")
    return out


def _option(value: Any) -> str | None:
    """Option text without a leading 'A. ' (some items carry one); None for an absent option."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if not isinstance(value, str):
        return None
    text = _LETTER_PREFIX.sub("", value.strip())
    return text or None


def load(path: Path, *, permutations: int = 1, seed: int = SEED) -> list[Row]:
    """Rows from a task file or the `data/` folder (or the release root holding `data/`).
    `permutations` > 1 asks each item that many times with different option orders."""
    if permutations < 1:
        raise ValueError(f"permutations must be >= 1, got {permutations}")
    path = Path(path)
    if path.is_dir() and (path / "data").is_dir():
        path = path / "data"
    rows: list[Row] = []
    for file in files_in(path, "*.jsonl", NAME):
        task = file.stem
        for lineno, item in read_jsonl(file):
            rows.extend(_rows(item, file, lineno, task, permutations, seed))
    return rows


def _rows(item, file: Path, lineno: int, task: str, permutations: int, seed: int) -> list[Row]:
    where = f"line {lineno}"
    story = get(item, "STORY", file, where)
    question = get(item, "QUESTION", file, where)
    ability = get(item, ABILITY_KEY, file, where)
    gold_raw = get(item, ANSWER_KEY, file, where)
    options = []
    for letter in "ABCD":
        if f"OPTION-{letter}" not in item:
            fail(file, where, f"missing field 'OPTION-{letter}'")
        options.append(_option(item[f"OPTION-{letter}"]))
    present = [o for o in options if o is not None]
    if len(present) < 2 or options[: len(present)] != present:
        fail(file, where, "fields 'OPTION-A'..'OPTION-D' must hold 2-4 options from A on")
    gold = gold_raw.strip()[:1].upper()
    if gold not in LETTERS[: len(present)]:
        fail(file, where, f"field {ANSWER_KEY!r} {short_repr(gold_raw)} is not an option letter")
    abilities = split_abilities(ability)
    item_id = f"{NAME}/{task}/{lineno}"
    rows = []
    for p in range(permutations):
        order = permutation_str_seed(len(present), f"{item_id}/{p}", seed)
        shown = [present[i] for i in order]
        rows.append(make_row(
            id=item_id if permutations == 1 else f"{item_id}/p{p}",
            source=NAME,
            user=f"{INSTRUCTION}\n\nStory:\n{story.strip()}\n\n{choice_block(question.strip(), shown)}",
            answer=LETTERS[order.index(LETTERS.index(gold))],
            answer_type="choice",
            choices=shown,
            meta={
                "task": task,
                "abilities": abilities,
                "ability_raw": ability,  # the original's result key
                "ability_categories": sorted({a.split(":")[0] for a in abilities}),
                "item": item_id,
                "index": item.get(INDEX_KEY),
                "permutation": p,
                # original letter of the option shown at each position, to map answers back
                "shown_as": [LETTERS[i] for i in order],
                "original_answer": gold,
            },
        ))
    return rows


def original_letter(reply: str) -> str | None:
    """The letter the original's `extract_answer` (get_results.py) reads in a reply, in our
    words: the first of `[[A]]`..`[[D]]` present, else of `[A]`..`[D]`, else the last of the
    letters A-D written alone (`letter_marks`: not the first letter of a word, not the article
    A); None where it finds none (the original then answers "A")."""
    for mark in ("[[{}]]", "[{}]"):
        for letter in "ABCD":
            if mark.format(letter) in reply:
                return letter
    marks = letter_marks(reply, "ABCD")
    return marks[-1][1] if marks else None


def score(row: Row, response: str) -> Record:
    """The careful reading: the shared parser's verdict and its vote in the original order (the
    original letter of the option chosen); a reply that gives no single option votes for none,
    a vote that is never right (`parsed` false)."""
    rec = default_score(row, response)
    shown = answers.chosen_option(rec["extracted"], row["choices"]) if answer_given(rec) else None
    rec["parsed"] = shown is not None
    rec["original_choice"] = meta_of(row)["shown_as"][LETTERS.index(shown)] if shown else None
    return rec


def original_score(row: Row, response: str) -> Record:
    """The original's reading: the shared parser's verdict (an untagged reply read by the
    original's rule, `original_letter`, when it finds a letter) plus the vote in the original
    order: the original letter of the option chosen, or of the option shown as A when the reply
    names no single option."""
    rec = default_score(row, response)
    meta = meta_of(row)
    reply = untagged_reply(response)
    letter = original_letter(reply) if reply is not None else None
    if letter is not None:
        rec.update(extracted=letter, read="fallback", correct=letter == row["answer"])
        shown = letter if LETTERS.index(letter) < len(row["choices"]) else None
        if shown is None:  # C or D on a two-option item: the original maps it to ""
            rec["parsed"], rec["original_choice"] = True, ""
            return rec
        rec["parsed"] = True
        rec["original_choice"] = meta["shown_as"][LETTERS.index(shown)]
        return rec
    shown = answers.chosen_option(rec["extracted"], row["choices"])
    if shown is None and len(row["choices"]) < 4 and answers.chosen_option(
            rec["extracted"], [*row["choices"], "", ""][:4]) is not None:
        # "C" or "D" on a two-option item: the original maps it to "", a vote never right
        rec["parsed"], rec["original_choice"] = True, ""
        return rec
    rec["parsed"] = shown is not None
    rec["original_choice"] = meta["shown_as"][LETTERS.index(shown if shown else "A")]
    return rec


def aggregate(records: list[Record]) -> dict[str, Any]:
    """Majority vote over each item's permutations (one permutation: the answer itself), then
    accuracy overall, per task, per ability and per ability category."""
    items: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        items[r["meta"]["item"]].append(r)
    verdicts, strict = [], []
    for item, recs in items.items():
        recs.sort(key=lambda r: r["meta"]["permutation"])
        gold = recs[0]["meta"]["original_answer"]
        # Counter keeps first-seen order among equal counts: a tie goes to the earlier answer,
        # as the original's most_common_element (max over an insertion-ordered dict)
        choice = Counter(r["original_choice"] for r in recs).most_common(1)[0][0]
        verdicts.append((recs[0]["meta"], choice == gold))
        parsed = Counter(r["original_choice"] for r in recs if r.get("parsed", True))
        strict.append(bool(parsed) and parsed.most_common(1)[0][0] == gold)
    out: dict[str, Any] = {
        "accuracy": mean(ok for _, ok in verdicts),
        "n": len(verdicts),
        "n_responses": len(records),
        "accuracy_per_response": mean(r["correct"] for r in records),
        "unparsed_votes": sum(1 for r in records if not r.get("parsed", True)),
        "accuracy_unparsed_wrong": mean(strict),
    }
    for key, values_of in (
        ("task", lambda m: [m["task"]]),
        ("ability", lambda m: m["abilities"]),
        ("ability_category", lambda m: m["ability_categories"]),
        ("original_ability", lambda m: [m.get("ability_raw", "")]),
    ):
        groups: dict[str, list[bool]] = defaultdict(list)
        for m, ok in verdicts:
            for value in values_of(m):
                groups[value].append(ok)
        out[f"by_{key}"] = {k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(groups.items())}
    return out


BENCHMARK = Benchmark(
    display="ToMBench",
    rank=30,
    name=NAME,
    category="tom",
    load=load,
    default_dir="tombench",
    hub_id=None,  # released on GitHub (zhchen18/ToMBench)
    breakdowns=("task", "ability", "ability_category", "original_ability"),
    score=score,
    original_score=original_score,
    aggregate=aggregate,
    notes="Multiple choice with options shuffled (fixed seed) and the letter mapped back; "
    "majority vote over permutations (option 'permutations', the original uses 5), an unparsed "
    "reply voting for the option shown as A as in the original; accuracy per task and per ATOMS "
    "ability (split, and as the original's raw ability keys).",
)
