"""ToMi (Le, Boureau & Nickel, EMNLP 2019): Sally-Anne style stories in bAbI format.

Release format: `<split>.txt` holds examples whose lines are numbered from 1; the last line of an
example is `<n> <question>\\t<answer>\\t<supporting line>`. The line-aligned `<split>.trace` gives
one comma-separated line per example whose last two fields are the question type
(`memory`, `reality`, `first_order_{0,1}_{tom,no_tom}`, `second_order_{0,1}_{tom,no_tom}`) and the
story type (`true_belief`, `false_belief`, `second_order_false_belief`).
Scoring: exact match of the one-token container/location answer; accuracy per question type and
per story type.
"""
from __future__ import annotations

import re
from pathlib import Path

from eval.benchmarks._common import fail, files_in, read_text, require_file
from eval.benchmarks.base import Benchmark, Row
from eval.rows import make_row

NAME = "tomi"
QUESTION_TYPE = re.compile(r"^(memory|reality|(first|second)_order_[01]_(tom|no_tom))$")
STORY_TYPES = ("true_belief", "false_belief", "second_order_false_belief")
LINE = re.compile(r"^(\d+) (.*)$")
# the places and containers of a story: rooms entered or left, where a thing is or is moved to
PLACE = re.compile(r"\b(?:entered|exited) the (\w+)|\bis in the (\w+)|\bto the (\w+)\s*\.?\s*$")

INSTRUCTION = (
    "Read the story and answer the question that follows it. The answer is one of the places "
    "or containers named in the story; write it exactly as the story spells it."
)


def question_kind(question_type: str) -> str:
    """The four groups the paper reports: first_order, second_order, reality, memory."""
    return question_type.split("_order")[0] + "_order" if "_order" in question_type else question_type


def load(path: Path) -> list[Row]:
    """Rows from a `.txt` file (its `.trace` beside it) or a folder of them. A folder holding
    several splits is read for its test split(s) only, the ones ToMi is evaluated on."""
    files = files_in(Path(path), "*.txt", NAME)
    tests = [f for f in files if "test" in f.stem]
    rows: list[Row] = []
    for txt in tests if len(files) > 1 and tests else files:
        rows.extend(_load_split(txt))
    return rows


def _load_split(txt: Path) -> list[Row]:
    examples = list(_examples(txt))
    trace_path = require_file(txt.with_suffix(".trace"), f"the .trace file that labels {txt.name}")
    traces = [(i, ln) for i, ln in enumerate(read_text(trace_path).splitlines(), 1) if ln.strip()]
    if len(traces) != len(examples):
        fail(trace_path, f"line {len(traces)}",
             f"{len(traces)} trace lines for {len(examples)} examples in {txt.name}")
    rows = []
    for (first_line, story, question, answer), (trace_no, trace) in zip(examples, traces):
        fields = [f.strip() for f in trace.split(",")]
        if len(fields) < 2:
            fail(trace_path, f"line {trace_no}", "expected events, question type and story type")
        qtype, stype = fields[-2], fields[-1]
        if not QUESTION_TYPE.match(qtype):
            fail(trace_path, f"line {trace_no}", f"field 'question type': unknown value {qtype!r}")
        if stype not in STORY_TYPES:
            fail(trace_path, f"line {trace_no}", f"field 'story type': unknown value {stype!r}")
        story_text = "\n".join(story)
        rows.append(make_row(
            id=f"{NAME}/{txt.stem}/{trace_no - 1:05d}",
            source=NAME,
            user=f"{INSTRUCTION}\n\nStory:\n{story_text}\n\nQuestion: {question}",
            answer=answer,
            answer_type="short",
            meta={
                "question_type": qtype,
                "question_kind": question_kind(qtype),
                "story_type": stype,
                "tom": qtype.endswith("_tom") and not qtype.endswith("no_tom"),
                "events": fields[:-2],
                "file": txt.name,
                "line": first_line,
                "candidates": places(story),
            },
        ))
    return rows


def places(story: list[str]) -> list[str]:
    """The rooms and containers a story names, in order of first mention: the answers a reader
    could give to its questions, against which an untagged reply is read."""
    found: dict[str, None] = {}
    for sentence in story:
        for m in PLACE.finditer(sentence):
            found.setdefault(next(g for g in m.groups() if g), None)
    return list(found)


def _examples(txt: Path):
    """(first line number, story sentences, question, answer) per example; a story restarts
    whenever the line counter goes back to 1."""
    story: list[str] = []
    start = 0
    expected = 1
    for lineno, raw in enumerate(read_text(txt).splitlines(), 1):
        if not raw.strip():
            continue
        m = LINE.match(raw)
        if not m:
            fail(txt, f"line {lineno}", "expected '<number> <sentence>' (bAbI format)")
        n = int(m.group(1))
        if n == 1:
            if story:
                fail(txt, f"line {start}", "story ends without a question line")
            start = lineno
        elif n != expected:
            fail(txt, f"line {lineno}", f"line counter {n} where {expected} was expected")
        expected = n + 1
        text = m.group(2)
        if "\t" not in text:
            story.append(text.strip())
            continue
        parts = text.split("\t")
        if len(parts) != 3 or not parts[0].strip() or not parts[1].strip():
            fail(txt, f"line {lineno}", "question line must be '<question>\\t<answer>\\t<support>'")
        if not story:
            fail(txt, f"line {lineno}", "question line without a story before it")
        yield start, story, parts[0].strip(), parts[1].strip()
        story = []
        expected = 1
    if story:
        fail(txt, f"line {start}", "story ends without a question line")


BENCHMARK = Benchmark(
    display="ToMi",
    rank=10,
    name=NAME,
    category="tom",
    load=load,
    default_dir="tomi",
    hub_id=None,  # released as a zip on GitHub (facebookresearch/ToMi), not on the hub
    breakdowns=("question_kind", "question_type", "story_type"),
    notes="Exact match of the one-word location answer; accuracy per question type "
    "(first/second order, reality, memory) and per story type (true/false belief).",
)
