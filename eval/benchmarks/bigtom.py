"""BigToM (Gandhi et al., NeurIPS 2023 D&B): causal templates turned into belief/action tests.

Release format: `bigtom.csv`, `;`-separated, no header, one scenario per row: 0 story (context,
desire, percept, initial belief, causal event; split on '.'), 1/2 the agent perceives / does not
perceive the event, 3/4 action when aware / not aware, 5-7 belief, desire, action questions,
8-10 answers when aware, 11-13 answers when not aware, 14 a random event, 15/16 the agent
perceives / does not perceive it (17-18 bookkeeping).
The evaluated items are generated from each row as the release's `generate_conditions.py` does:
initial belief hidden or shown x {forward belief, forward action, backward belief} x
{true belief, false belief, true control, false control} = 24 two-option questions per row.
(The generator's `percept_to_belief` variable is not built: the paper does not evaluate it, and
its gold answer is the 'aware' answer for a story in which nothing changed.)
Scoring: 2-way multiple choice with the option order randomised (here seeded), accuracy per
condition and variable. Reading a reply without answer tags as `evaluate_conditions.py` does (its
options are labelled `a)` and `b)`): the reply, lower-cased, holds the correct option's label →
right; else the other's → wrong; else a language model grades it against the two answers. Here a
label is "(a)" or "a)" with no letter or digit before it (the original also finds "a)" at the end
of "data)"); a reply that writes only one option's label answers it; a reply that writes both is a
hedge and answers nothing (the original, looking for the correct label first, counts it right);
a reply with no label is read by the shared careful reader, which stands in for the grader.
"""
from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from eval.benchmarks._common import (
    LETTERS,
    choice_block,
    fail,
    files_in,
    permutation_str_seed,
    read_text,
)
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import Benchmark, Record, Row, default_score
from eval.rows import make_row

NAME = "bigtom"
SEED = 0
COLUMNS = (
    "story", "aware_of_event", "not_aware_of_event", "action_aware", "action_not_aware",
    "belief_question", "desire_question", "action_question",
    "belief_answer_aware", "desire_answer_aware", "action_answer_aware",
    "belief_answer_not_aware", "desire_answer_not_aware", "action_answer_not_aware",
    "random_event", "aware_of_random_event", "not_aware_of_random_event",
)
VARIABLES = ("forward_belief", "forward_action", "backward_belief")
CONDITIONS = ("true_belief", "false_belief", "true_control", "false_control")

INSTRUCTION = (
    "Read the story and answer the question about what the person in it believes or will do. "
    "Choose one of the two options."
)


def load(path: Path, *, seed: int = SEED) -> list[Row]:
    rows: list[Row] = []
    for file in files_in(Path(path), "*.csv", NAME):
        reader = csv.reader(io.StringIO(read_text(file), newline=""), delimiter=";")
        try:
            records = [(reader.line_num, rec) for rec in reader]
        except csv.Error as e:
            fail(file, f"line {reader.line_num}", f"malformed CSV ({e})")
        for lineno, rec in records:
            if not any(cell.strip() for cell in rec):
                continue
            rows.extend(_items(rec, file, lineno, seed))
    return rows


def _items(rec: list[str], file: Path, lineno: int, seed: int) -> list[Row]:
    where = f"line {lineno}"
    if len(rec) < len(COLUMNS):
        fail(file, where, f"{len(rec)} ';'-separated columns, expected at least {len(COLUMNS)}")
    v = dict(zip(COLUMNS, rec))
    for col, text in v.items():
        if not col.startswith("desire") and not text.strip():
            fail(file, where, f"column {COLUMNS.index(col)} ({col}) is empty")
    parts = v["story"].split(".")
    if len(parts) < 5:
        fail(file, where, "column 0 (story) must have 5 sentences: context, desire, percept, "
             "initial belief, causal event")
    out = []
    for shown in (False, True):
        # with the initial belief hidden, sentence 3 is left out; the control stories replace the
        # causal event (sentence 4) by the random event. Byte-for-byte as the release generator.
        kept = parts[:4] if shown else parts[:3]
        story = "".join(p + "." for p in kept) + parts[4] + "."
        control = ".".join(kept + [" " + v["random_event"]])
        for variable in VARIABLES:
            kind = "action" if variable == "forward_action" else "belief"
            question = v[f"{kind}_question"]
            aware, unaware = v[f"{kind}_answer_aware"], v[f"{kind}_answer_not_aware"]
            for condition in CONDITIONS:
                if variable == "backward_belief":
                    text = {
                        "true_belief": f"{story} {v['action_aware']}",
                        "false_belief": f"{story} {v['action_not_aware']}",
                        "true_control": f"{control} {v['action_not_aware']}",
                        "false_control": f"{control} {v['action_not_aware']}",
                    }[condition]
                else:
                    text = {
                        "true_belief": f"{story} {v['aware_of_event']}",
                        "false_belief": f"{story} {v['not_aware_of_event']}",
                        "true_control": f"{control} {v['aware_of_random_event']}",
                        "false_control": f"{control} {v['not_aware_of_random_event']}",
                    }[condition]
                # only when the agent saw the event does the aware answer become right
                gold, wrong = (aware, unaware) if condition == "true_belief" else (unaware, aware)
                init = "shown" if shown else "hidden"
                item_id = f"{NAME}/{file.stem}/{lineno}/{init}/{variable}/{condition}"
                order = permutation_str_seed(2, item_id, seed)
                options = [[gold, wrong][i].strip() for i in order]
                out.append(make_row(
                    id=item_id,
                    source=NAME,
                    user=f"{INSTRUCTION}\n\nStory:\n{text.strip()}\n\n{choice_block(question.strip(), options)}",
                    answer=LETTERS[order.index(0)],
                    answer_type="choice",
                    choices=options,
                    meta={
                        "variable": variable,
                        "condition": condition,
                        "init_belief": init,
                        "variable_condition": f"{variable}/{condition}",
                        "scenario": lineno,
                        "file": file.name,
                    },
                ))
    return out


_LABEL = re.compile(r"(?<![a-z0-9])\(?([ab])\)")


def labels_written(reply: str) -> set[str]:
    """The option letters the reply writes as the original's labels, "(a)" or "a)" in any case."""
    return {m.group(1).upper() for m in _LABEL.finditer(reply.lower())}


def original_score(row: Row, response: str) -> Record:
    """The shared parser's verdict; a reply without answer tags is read by its labels first
    (`labels_written`: one label answers that option, both answer nothing)."""
    rec = default_score(row, response)
    reply = untagged_reply(response)
    labels = labels_written(reply) if reply is not None else set()
    if len(labels) == 1:
        (letter,) = labels
        rec.update(extracted=letter, read="fallback", correct=letter == row["answer"])
    elif len(labels) > 1:
        rec.update(extracted=None, read="none", correct=False)
    return rec


BENCHMARK = Benchmark(
    display="BigToM",
    rank=80,
    name=NAME,
    category="tom",
    load=load,
    default_dir="bigtom",
    hub_id=None,  # released on GitHub (cicl-stanford/procedural-evals-tom)
    breakdowns=("variable_condition", "condition", "variable", "init_belief"),
    score=default_score,
    original_score=original_score,
    notes="24 two-option questions per scenario (initial belief hidden/shown x forward belief, "
    "forward action, backward belief x true/false belief and controls); accuracy per condition.",
)
