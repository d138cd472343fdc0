"""Every benchmark sample in ../shared/benchmarks through the runner and the shared parser: a
perfect backend scores 100% whichever common answer style it uses, a constant one scores low."""
from __future__ import annotations

import pytest

from eval.answers import tagged
from eval.backends.base import ScriptedBackend
from eval.runner import load_tasks, run_tasks
from eval.suites import resolve_suite


@pytest.fixture(scope="module")
def tasks():
    loaded = load_tasks(resolve_suite("all"), skip_missing=True, log=lambda m: None)
    assert len(loaded) >= 12  # every benchmark with a shared sample (SimpleToM has none)
    return loaded


def option_text(row):
    return row["choices"][ord(row["answer"]) - ord("A")]


STYLES = {
    "tagged": lambda r: tagged(r['answer'], "...", "\n"),
    "tagless": lambda r: r["answer"],
    "letter and option text": lambda r: "<think>...</think><answer>" + (
        f"({r['answer']}) {option_text(r)}" if r["answer_type"] == "choice" else r["answer"]) + "</answer>",
    # no tags, "B. <option text>": options over 200 characters (5 of ToMATO's 100 sample items)
    # used to go unread (issue 16 item 5)
    "untagged letter and option text": lambda r: (
        f"{r['answer']}. {option_text(r)}" if r["answer_type"] == "choice" else r["answer"]),
    "answer line after long reasoning": lambda r: "Let me think.\n" * 300 + f"Final answer: {r['answer']}",
    "boxed": lambda r: f"<think>...</think><answer>\\boxed{{{r['answer']}}}</answer>",
}


@pytest.mark.parametrize("style", STYLES)
def test_perfect_backend_scores_100_on_every_benchmark(tasks, tmp_path, style):
    by_prompt = {r["prompt"][-1]["content"]: r for t in tasks for r in t.rows}
    backend = ScriptedBackend(lambda conv: STYLES[style](by_prompt[conv[-1]["content"]]), model=style)
    results = run_tasks(tasks, backend, tmp_path, log=lambda m: None, progress=False, report=False)
    scores = {name: entry["score"] for name, entry in results["benchmarks"].items()}
    assert scores == {name: 1.0 for name in scores}


def test_constant_backend_is_far_from_perfect(tasks, tmp_path):
    backend = ScriptedBackend(lambda conv: tagged("A", "..."), model="always-A")
    results = run_tasks(tasks, backend, tmp_path, log=lambda m: None, progress=False, report=False)
    for name, entry in results["benchmarks"].items():
        assert entry["score"] is not None and entry["score"] < 0.75, name
    assert results["benchmarks"]["aime2025"]["score"] == 0.0
