"""The `derived` check (exploretom.semantics.derived): a right answer counts only with a trace the
checker
accepts, on a story a reader can check (the ExploreToM paper's table 11) and on every row of a
real export; `eval run` reports it for the exploretom benchmark through its entry point."""
from __future__ import annotations

import json

from eval.answers import tagged
from eval.benchmarks.base import record_for
from eval.benchmarks.exploretom import BENCHMARK
from eval.checks import load_check
from eval.rows import make_row
from exploretom.cli import main as cli_main
from exploretom.semantics.build import enter, leave, put
from exploretom.semantics.derived import checked_derivation, derived
from exploretom.semantics.label import label_story
from exploretom.semantics.story import parse_story
from exploretom.semantics.trace import story_traces

TABLE_11 = [enter("David", "study room"), enter("Sarah", "study room"),
            put("Sarah", "prototype model", "metal filing cabinet"), leave("David", "study room"),
            enter("Mark", "study room"), put("Mark", "prototype model", "wooden chest")]
QUESTION = "In which container will David search for the prototype model?"


def david():
    """David's container belief in table 11: his row's meta (the question and the story, as
    export writes them) and the tracker's trace."""
    qs = label_story(parse_story({"id": "t11", "actions": TABLE_11}), 2)["questions"]
    traces = story_traces(parse_story({"id": "t11", "actions": TABLE_11}).actions, qs, 2)
    [(q, trace)] = [(q, t) for q, t in zip(qs, traces) if q["question"] == QUESTION]
    return {**q, "story": {"actions": TABLE_11}}, trace


def reply(think: str, answer: str = "metal filing cabinet") -> str:
    return tagged(answer, think)


def test_a_right_answer_counts_only_with_a_checked_derivation():
    meta, trace = david()
    gold = meta["answer"]
    assert gold == "metal filing cabinet"
    # David saw Sarah's move, then left: he did not see Mark's.
    assert trace.splitlines()[1] == ("Step 6: Mark moved the prototype model to the wooden chest. "
                                     "David was elsewhere.")
    swapped = trace.replace("David was elsewhere.", "David saw it.")  # one observer changed
    no_step = "\n".join(line for line in trace.splitlines() if not line.startswith("Step 6"))
    replies = [reply(trace), reply("David was out, so he guesses."), reply(swapped),
               reply(no_step), reply(trace, "wooden chest"), "metal filing cabinet"]
    got = [checked_derivation(r, gold, "short", json.dumps(meta)) for r in replies]
    assert got == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_rows_without_a_story_are_left_out():
    meta, trace = david()
    gold = "metal filing cabinet"
    assert checked_derivation(reply(trace), gold, "short", {"order": 1}) is None
    assert checked_derivation(reply(trace), gold, "short", "not json") is None
    assert checked_derivation(reply(trace), gold, "short", {**meta, "story": {"actions": "x"}}) is None
    assert checked_derivation(reply(trace), gold, "short", meta) == 1.0  # a dict works too


def test_every_exported_rows_own_trace_is_derived(tmp_path):
    """Every question of a real export (all orders and properties, three action sets): the row's
    own trace in meta.reasoning is derived, a guess is not."""
    from tests.exploretom.test_export import load, run_export

    paths = []
    for action_set in ("A1", "A3", "A5"):
        path = tmp_path / f"{action_set}.jsonl"
        assert cli_main(["sample", "--action-set", action_set, "--people", "3", "--moves", "3",
                         "--rooms", "2", "--max-actions", "10", "-n", "12", "--seed", "1",
                         "--label", "-q", "-o", str(path)]) == 0
        paths.append(path)
    run_export(paths, tmp_path / "ds")
    rows = [r for split in load(tmp_path / "ds").values() for r in split]
    assert len(rows) > 300
    for r in rows:
        meta = json.loads(r["meta"])
        good, guess = reply(meta["reasoning"], r["answer"]), reply("I guess.", r["answer"])
        assert checked_derivation(good, r["answer"], r["answer_type"], r["meta"]) == 1.0, r["id"]
        assert checked_derivation(guess, r["answer"], r["answer_type"], r["meta"]) == 0.0, r["id"]


def test_eval_reports_the_derived_share_of_the_exploretom_benchmark():
    """The entry point eval finds by name is this check; each sample record carries its verdict,
    and the benchmark's metrics the share over the rows that have a story."""
    assert load_check("derived") is derived
    meta, trace = david()
    story_row = make_row(id="t11-q", source="exploretom", user=QUESTION, answer=meta["answer"],
                         answer_type="short", meta=meta)
    release_row = make_row(id="release-1", source="exploretom", user="Where is the apple?",
                           answer="basket", answer_type="short", meta={"order": 1})
    right = record_for(story_row, reply(trace), BENCHMARK)
    guess = record_for(story_row, reply("I guess."), BENCHMARK)
    other = record_for(release_row, tagged("basket", "It is there."), BENCHMARK)
    assert (right["correct"], right["derived"]) == (True, True)
    assert (guess["correct"], guess["derived"]) == (True, False)
    assert other["correct"] and "derived" not in other  # no story: nothing to check against
    metrics = BENCHMARK.metrics([right, guess, other])
    assert metrics["accuracy"] == 1.0
    assert (metrics["derived"], metrics["n_derived"]) == (0.5, 2)
