"""A failing target never makes a story "hard" (issue 17 item 1).

`exploretom search` against the bundled fake OpenAI-compatible server: with every request failing
(429s, 500s, timeouts) nothing is scored and the run ends with the count and exit 3; with 30% of
requests failing, the backend's retries make the run identical to a fault-free one. Also the
run-config checks (issue 17 item 2) and `--repair` of a torn shard file (item 5).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from eval.backends.fake_server.faults import Faults
from eval.backends.fake_server.server import FakeServer
from exploretom.cli import main

GRID = """
target: {{kind: openai, model: fake, base_url: "{url}", api_key_env: "", timeout_s: 3,
         max_attempts: {attempts}, backoff_base_s: 0, backoff_max_s: 0, concurrency: 32}}
methods: [astar, baseline]
stories_per_setting: 2
seed: 1
grid: {{action_sets: [A1], asymmetric: [false], people: [2], moves: [2], rooms: [1],
       max_actions: 7}}
search: {{budget: 6, continuations: 3, complete: true}}
"""


def reply(request) -> str:
    """A "model" whose answer depends on the question only: right on some, wrong on others."""
    question = request.last_user.rsplit("Question:", 1)[-1]
    return "yes" if "Does" in question else "The basket."


def run(tmp_path: Path, name: str, faults: Faults, attempts: int) -> tuple[int, Path]:
    out = tmp_path / f"{name}.jsonl"
    with FakeServer(reply, faults=dataclasses.replace(faults, hold_s=4.0), seed=7) as srv:
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(GRID.format(url=srv.openai_base_url, attempts=attempts))
        code = main(["search", "--config", str(cfg), "-o", str(out), "-q"])
    return code, out


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_target_that_always_fails_scores_nothing_and_exits_3(tmp_path, capsys):
    code, out = run(tmp_path, "down", Faults.injected(1.0), attempts=2)
    assert code == 3
    assert records(out) == []  # no story "found" with accuracy 0 from empty replies
    err = capsys.readouterr().err
    assert "error: 4 of 4 stories not written" in err and "request(s) to the target failed" in err
    assert "running the same command again retries them" in err


def test_retries_make_a_flaky_target_give_the_fault_free_results(tmp_path, capsys):
    code, clean = run(tmp_path, "clean", Faults(), attempts=1)
    assert code == 0 and len(records(clean)) == 4
    assert any(not q["correct"] for r in records(clean) for q in r["questions"])
    code, flaky = run(tmp_path, "flaky", Faults.injected(0.3), attempts=8)
    for _ in range(3):  # a request may still fail 8 times in a row: the re-run retries it
        if code == 0:
            break
        code, flaky = run(tmp_path, "flaky", Faults.injected(0.3), attempts=8)
    assert code == 0
    by_id = {r["id"]: r for r in records(flaky)}
    assert by_id == {r["id"]: r for r in records(clean)}
    assert all(q["response"] for r in by_id.values() for q in r["questions"])


@pytest.mark.parametrize("text,expect", [
    ("", "the config is empty"),
    ("{}\n", "the config is empty"),
    ("- 1\n- 2\n", "the config is a list"),
    ("search: {budgett: 3}\n", ":1: search.budgett: unknown field; allowed: grouping, budget"),
    ("search: {policy: greedy}\n", "search.policy must be one of by_g, paper"),
    # a model target's options are its backend's, checked when the file loads, on their own line
    ("target:\n  kind: openai\n  model: m\n  concurrency: 0\n",
     ":4: target.concurrency: Input should be greater than or equal to 1 (got 0)"),
    ("target:\n  kind: hf\n  model: m\n  batchsize: 8\n",
     ":4: target.batchsize: unknown key; allowed: kind, model, max_new_tokens, prompt, or an option "
     "of the hf backend: batch_size, "),
    ("target:\n  kind: noisy\n  p: 2\n", ":3: target.p: Input should be less than or equal to 1"),
    # served is a backend like the others: its server is its own, so no endpoint is taken
    ("target:\n  kind: served\n  model: m\n  base_url: http://localhost:8000/v1\n",
     ":4: target.base_url: unknown key; allowed: kind, model, max_new_tokens, prompt, or an option "
     "of the served backend: "),
])
def test_run_configs_that_are_empty_or_unknown_are_one_line_errors(tmp_path, capsys, text, expect):
    cfg = tmp_path / "run.yaml"
    cfg.write_text(text)
    assert main(["search", "--config", str(cfg), "-o", str(tmp_path / "o.jsonl"), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {cfg}") and expect in err and "\n" not in err
    assert not (tmp_path / "o.jsonl").exists()


def test_repair_drops_a_torn_line_in_the_middle_and_says_which(tmp_path, capsys):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("target: {kind: reasoner, name: world}\nmethods: [astar]\n"
                   "stories_per_setting: 3\ngrid: {action_sets: [A1], asymmetric: [false], "
                   "people: [2], moves: [2], rooms: [1], max_actions: 7}\n"
                   "search: {budget: 4, continuations: 3}\n")
    out = tmp_path / "o.jsonl"
    args = ["search", "--config", str(cfg), "-o", str(out), "-q"]
    assert main(args) == 0
    full = out.read_text().splitlines(keepends=True)
    out.write_text(full[0] + full[1][:30] + "\n" + full[2])  # two writers, one torn line
    assert main(args) == 2
    assert "line 2: not a record of this tool" in capsys.readouterr().err
    assert main([*args, "--repair"]) == 0
    assert "dropped line(s) 2" in capsys.readouterr().err
    assert out.read_text().count("\n") == 3
    assert sorted(out.read_text().splitlines()) == sorted(line.rstrip("\n") for line in full)
