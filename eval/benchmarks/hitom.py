"""Hi-ToM (He et al., Findings of EMNLP 2023): higher-order beliefs, orders 0 to 4.

Release format: `Hi-ToM_data.json` = `{"data": [item, ...]}`; an item has `prompting_type`
(`VP`/`CoTP`), `deception` (bool), `story_length` (1-3), `question_order` (0-4), `sample_id`,
`story` (numbered lines), `question`, `choices` (ONE string `"A. x, B. y, ..."`, 15 containers)
and `answer` (the correct option's text).
Scoring: multiple choice; the prediction is right when its option is the one whose text is
`answer`. Accuracy per ToM order (the paper's headline), story length and deception setting.

Every VP item is a CoTP item again: the same story (behind the release's own instruction line,
"Read the following story ... without explanations.", which contradicts our think-then-answer
prompt and is cut off), question and choices. Most carry the same gold; some carry another one
that the story does not support (record 342 of the release: VP green_bathtub, CoTP
blue_cupboard). By default each distinct (story, question, choices) item is asked and scored
once, with the CoTP gold; the metrics report how many records were merged (`merged`) and how
many of them disagreed on the gold (`gold_conflicts`). The loader option `merge: false`
(`--bench-option hitom.merge=false`) keeps every record of the release with its own gold.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from eval.benchmarks._common import choice_block, fail, files_in, get, read_json, short_repr
from eval.benchmarks.base import Benchmark, Record, Row, accuracy_with_breakdowns
from eval.rows import make_row, meta

BREAKDOWNS = ("order", "story_length", "deception")

NAME = "hitom"
OPTION = re.compile(r"([A-Z])\. (.*?)(?=, [A-Z]\. |$)", re.S)
# The story lines are numbered ("1 Amelia entered the laundry."); VP stories open with an
# instruction line that is not, and a few CoTP stories end in a `***` separator line (records
# 42, 60, 61, 62, 80 and 81 of the release), which is no part of the story either.
NUMBERED = re.compile(r"\s*\d+\s")
SEPARATOR = re.compile(r"\s*\*+\s*")

# The release's prompt note states how to read the stories (who saw what, who may lie); without
# it higher orders are ambiguous, so every prompt carries the same rules, in our words.
RULES = (
    "Assume the following when answering:\n"
    "1. A person sees everything that happens in a room, including every move of an object, "
    "until they leave it.\n"
    "2. A person can reason about what another person thinks only if they were in the same room "
    "at some point or talked with each other, in private or in public.\n"
    "3. People may lie, and what someone is told does not change what they really believe. "
    "A person tends to trust someone who left the room later than they did; everyone knows the "
    "order in which people left.\n"
    "4. In a private conversation, the speakers know nobody else hears them; a public statement "
    "can be heard by everyone."
)


def parse_options(text: str) -> list[str]:
    """`"A. red_box, B. blue_basket"` -> `["red_box", "blue_basket"]`; [] when malformed."""
    found = OPTION.findall(text.strip())
    letters = [letter for letter, _ in found]
    if not found or letters != [chr(ord("A") + i) for i in range(len(found))]:
        return []
    return [option.strip() for _, option in found]


def story_text(story: str) -> str:
    """The numbered story lines, without the instruction line(s) VP items start with and
    without separator lines (`***`) that some CoTP stories end with: the same story told by a
    VP and a CoTP record reads the same, so the two records are one item."""
    lines = [line for line in story.strip().split("\n") if not SEPARATOR.fullmatch(line)]
    first = next((n for n, line in enumerate(lines) if NUMBERED.match(line)), 0)
    return "\n".join(lines[first:]).strip()


def load(path: Path, *, merge: bool = True) -> list[Row]:
    """Rows of the release; with `merge` (the default) one per distinct item, the CoTP record's
    gold winning over a VP record's (see the module's docstring)."""
    rows: list[Row] = []
    keys: list[str] = []
    for file in files_in(Path(path), "*.json", NAME):
        doc = read_json(file)
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            fail(file, "", "expected a JSON object with a 'data' list (Hi-ToM_data.json)")
        for i, item in enumerate(doc["data"]):
            row = _row(item, file, i)
            rows.append(row)
            # the user turn holds the story without its instruction, the question and options
            keys.append(row["prompt"][-1]["content"])
    return merge_duplicates(rows, keys) if merge else rows


def merge_duplicates(rows: list[Row], keys: list[str]) -> list[Row]:
    """One row per key (the item as asked: story, question, choices): the first CoTP row of the
    group, else its first row; `meta.merged` counts the records folded into it,
    `meta.merged_golds` lists their golds where they differ from the kept one."""
    groups: dict[str, list[Row]] = {}
    for r, key in zip(rows, keys):
        groups.setdefault(key, []).append(r)
    out = []
    for group in groups.values():
        keep = next((r for r in group if meta(r)["prompting_type"] == "CoTP"), group[0])
        others = [r for r in group if r is not keep]
        if others:
            m = meta(keep)
            m["merged"] = len(others)
            m["merged_records"] = [meta(r)["record"] for r in others]
            conflicts = sorted({meta(r)["answer_text"] for r in others} - {m["answer_text"]})
            if conflicts:
                m["merged_golds"] = conflicts
            keep = dict(keep, meta=json.dumps(m, ensure_ascii=False))
        out.append(keep)
    return out



def _row(item: dict, file: Path, i: int) -> Row:
    where = f"record {i}"
    story = get(item, "story", file, where)
    question = get(item, "question", file, where)
    answer = get(item, "answer", file, where).strip()
    order = get(item, "question_order", file, where, int)
    if not 0 <= order <= 4:
        fail(file, where, f"field 'question_order' must be 0-4, got {order}")
    options = parse_options(get(item, "choices", file, where))
    if not options:
        fail(file, where, "field 'choices' is not an 'A. x, B. y, ...' list")
    if answer not in options:
        fail(file, where, f"field 'answer' {short_repr(answer)} is not among the choices")
    prompting = get(item, "prompting_type", file, where)
    deception = get(item, "deception", file, where, bool)
    length = get(item, "story_length", file, where, int)
    sample_id = get(item, "sample_id", file, where, int)
    user = (
        "Read the story and answer the multiple-choice question about it.\n\n"
        f"{RULES}\n\nStory:\n{story_text(story)}\n\n{choice_block(question.strip(), options)}"
    )
    return make_row(
        id=f"{NAME}/{prompting}/{'tell' if deception else 'no_tell'}/len{length}/{sample_id}",
        source=NAME,
        user=user,
        answer=chr(ord("A") + options.index(answer)),
        answer_type="choice",
        choices=options,
        meta={
            "order": order,
            "story_length": length,
            "deception": deception,
            "prompting_type": prompting,
            "sample_id": sample_id,
            "answer_text": answer,
            "record": i,
        },
    )


def aggregate(records: list[Record]) -> dict:
    out = accuracy_with_breakdowns(records, BREAKDOWNS)
    out["merged"] = sum(r.get("meta", {}).get("merged", 0) for r in records)
    out["gold_conflicts"] = sum(len(r.get("meta", {}).get("merged_golds", [])) > 0 for r in records)
    return out


BENCHMARK = Benchmark(
    display="Hi-ToM",
    rank=20,
    name=NAME,
    category="tom",
    load=load,
    default_dir="hitom",
    hub_id=None,  # released on GitHub (ying-hui-he/Hi-ToM_dataset)
    breakdowns=BREAKDOWNS,
    aggregate=aggregate,
    notes="15-way multiple choice over containers; accuracy per ToM order 0-4 "
    "(also per story length and deception setting); each distinct item once, CoTP gold preferred "
    "('merged' records folded in, 'gold_conflicts' among them).",
)
