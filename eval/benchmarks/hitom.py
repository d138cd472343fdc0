"""Hi-ToM (He et al., Findings of EMNLP 2023): higher-order beliefs, orders 0 to 4.

Release format: `Hi-ToM_data.json` = `{"data": [item, ...]}`; an item has `prompting_type`
(`VP`/`CoTP`), `deception` (bool), `story_length` (1-3), `question_order` (0-4), `sample_id`,
`story` (numbered lines), `question`, `choices` (ONE string `"A. x, B. y, ..."`, 15 containers)
and `answer` (the correct option's text).
Scoring: multiple choice; the prediction is right when its option is the one whose text is
`answer`. Accuracy per ToM order (the paper's headline), story length and deception setting.
"""
from __future__ import annotations

import re
from pathlib import Path

from eval.benchmarks._tom_common import choice_block, fail, files_in, get, read_json, short_repr
from eval.benchmarks.base import Benchmark, Row
from eval.rows import make_row

NAME = "hitom"
OPTION = re.compile(r"([A-Z])\. (.*?)(?=, [A-Z]\. |$)", re.S)

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


def load(path: Path) -> list[Row]:
    rows: list[Row] = []
    for file in files_in(Path(path), "*.json", NAME):
        doc = read_json(file)
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            fail(file, "", "expected a JSON object with a 'data' list (Hi-ToM_data.json)")
        for i, item in enumerate(doc["data"]):
            rows.append(_row(item, file, i))
    return rows


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
        f"{RULES}\n\nStory:\n{story.strip()}\n\n{choice_block(question.strip(), options)}"
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


BENCHMARK = Benchmark(
    name=NAME,
    category="tom",
    load=load,
    default_dir="hitom",
    hub_id=None,  # released on GitHub (ying-hui-he/Hi-ToM_dataset)
    breakdowns=("order", "story_length", "deception"),
    notes="15-way multiple choice over containers; accuracy per ToM order 0-4 "
    "(also per story length and deception setting).",
)
