"""SimpleToM (Gu et al., 2024; allenai): does a model apply what it infers about awareness?

Release format (hub `allenai/SimpleToM`): configs `mental-state-qa`, `behavior-qa`, `judgment-qa`
(and `story-data`, which holds no questions), each `<config>/test.jsonl` with one question per
line: `id` (suffix `_aware` = mental state, `_action` = behaviour, `_judge` = judgment), `story`,
`question`, `choices` = `{"text": [two options], "label": ["A", "B"]}`, `answerKey`.
Scoring: the predicted letter equals `answerKey`; accuracy reported separately for mental state,
behaviour and judgment (the paper's point is the gap between the first and the other two).
"""
from __future__ import annotations

from pathlib import Path

from eval.benchmarks._common import (
    choice_block,
    fail,
    files_in,
    get,
    read_jsonl,
    short_repr,
)
from eval.benchmarks.base import Benchmark, Row
from eval.rows import make_row

NAME = "simpletom"
KIND_BY_SUFFIX = {"_aware": "mental_state", "_action": "behavior", "_judge": "judgment"}
KIND_BY_CONFIG = {"mental-state-qa": "mental_state", "behavior-qa": "behavior", "judgment-qa": "judgment"}

INSTRUCTION = "Read the story and answer the multiple-choice question about it."


def load(path: Path) -> list[Row]:
    """Rows from one question file, one config folder, or the dataset root holding the
    `*-qa/` config folders."""
    path = Path(path)
    if path.is_dir() and any(path.glob("*-qa/*.jsonl")):
        files = sorted(path.glob("*-qa/*.jsonl"))
    else:
        files = files_in(path, "*.jsonl", NAME)
    rows: list[Row] = []
    for file in files:
        for lineno, item in read_jsonl(file):
            rows.append(_row(item, file, lineno))
    return rows


def _row(item, file: Path, lineno: int) -> Row:
    where = f"line {lineno}"
    qid = get(item, "id", file, where)
    story = get(item, "story", file, where)
    question = get(item, "question", file, where)
    key = get(item, "answerKey", file, where).strip()
    choices = get(item, "choices", file, where, dict)
    texts = choices.get("text")
    labels = choices.get("label")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t.strip() for t in texts):
        fail(file, where, "field 'choices.text' must be a list of option strings")
    if not isinstance(labels, list) or len(labels) != len(texts):
        fail(file, where, "field 'choices.label' must list one label per option")
    if key not in labels:
        fail(file, where, f"field 'answerKey' {short_repr(key)} is not among the labels {labels}")
    kind = next((k for suffix, k in KIND_BY_SUFFIX.items() if qid.endswith(suffix)), None)
    kind = kind or KIND_BY_CONFIG.get(file.parent.name)
    if kind is None:
        fail(file, where, f"field 'id' {short_repr(qid)} does not end in _aware, _action or _judge")
    # Options are shown in their released order, lettered A, B, ... as the labels are.
    options = [t.strip() for t in texts]
    return make_row(
        id=f"{NAME}/{qid}",
        source=NAME,
        user=f"{INSTRUCTION}\n\nStory:\n{story.strip()}\n\n{choice_block(question.strip(), options)}",
        answer=chr(ord("A") + labels.index(key)),
        answer_type="choice",
        choices=options,
        meta={"question_kind": kind, "story_id": qid.rsplit("_", 1)[0], "file": file.parent.name},
    )


BENCHMARK = Benchmark(
    display="SimpleToM",
    rank=40,
    name=NAME,
    category="tom",
    load=load,
    default_dir="simpletom",
    hub_id="allenai/SimpleToM",
    shared_sample=False,  # its data is only on the hub: the shared folder holds its FORMAT.md
    breakdowns=("question_kind",),
    notes="Two-option multiple choice; accuracy separately for mental state, behaviour and "
    "judgment questions.",
)
