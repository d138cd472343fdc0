"""Iterative infilling (`exploretom.infill`) against the scripted local OpenAI server.

The script writes candidate continuations tagged "(take A.C)" (attempt A, candidate C) so a
judge rule can accept or reject particular candidates; faults make the first requests of a kind
misbehave. Checks: every step judged and recorded, rejection -> next candidate -> new call with
feedback, exhausted retries -> `ok: false` but written, malformed replies counted, resume after
SIGKILL, and no API key anywhere.
"""
from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable

import pytest

from eval.backends.fake_server.api import RawReply
from eval.backends.fake_server.faults import Faults
from eval.backends.fake_server.server import FakeServer
from exploretom.cli import main as cli_main
from exploretom.cli_args import sample_one
from exploretom.infill.steps import LENGTHS, STYLES, plan_steps
from exploretom.sampling.action_sets import Conditions
from exploretom.semantics.build import enter, leave, put
from exploretom.semantics.label import label_story
from exploretom.semantics.story import parse_story

SECRET = "sk-test-never-write-me-fedcba9876543210"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def sally_anne() -> dict:
    story = parse_story({"id": "sally-anne", "actions": [
        enter("Sally", "kitchen"), enter("Anne", "kitchen"), put("Sally", "marble", "basket"),
        leave("Sally", "kitchen"), put("Anne", "marble", "box")],
        "context": {"description": "a family home", "people": [
            {"name": "Sally", "role": "older sister"}, {"name": "Anne", "role": "younger sister"}]}})
    return label_story(story)


def write_stories(path: Path, n_sampled: int = 3) -> list[dict]:
    stories = [sally_anne()] + [sample_one(Conditions("all", 3, 2, 2, 6, True, 1), 5, k, True, 2)
                                for k in range(n_sampled)]
    path.write_text("".join(json.dumps(s) + "\n" for s in stories))
    return stories


# -- the scripted model ----------------------------------------------------------------------------
ACCEPT = {"conveys_event": True, "contradicted_facts": [], "adds_events": False, "reason": "faithful"}


def _field(prompt: str, name: str) -> str:
    return re.search(rf"^{name}: (.*)$", prompt, re.M).group(1)


class Script:
    """`judge(event, passage, prompt)` returns a verdict dict (or raw text); `gen_faults` and
    `judge_faults` replace the first replies of their kind, in order of arrival."""

    def __init__(self, judge: Callable[[str, str, str], object] | None = None,
                 gen_faults=(), judge_faults=(), narration: str = "The kitchen smelled of bread. Rain tapped on the window."):
        self.judge = judge or (lambda event, passage, prompt: ACCEPT)
        self.gen_faults, self.judge_faults = list(gen_faults), list(judge_faults)
        self.narration = narration
        self.counts: Counter = Counter()
        self.prompts: list[str] = []

    def __call__(self, request):
        prompt = request.last_user
        self.prompts.append(prompt)
        if prompt.startswith("Continue the story"):
            self.counts["step"] += 1
            if self.gen_faults:
                return GEN_FAULTS[self.gen_faults.pop(0)]
            event = _field(prompt, "NEW EVENT")
            attempt = re.search(r"attempt (\d+) of", prompt)
            a = attempt.group(1) if attempt else "1"
            n = int(re.search(r"Write (\d+) different versions", prompt).group(1))
            return json.dumps({"continuations": [f"{event} (take {a}.{c})" for c in range(n)]})
        if prompt.startswith("A story is being rewritten"):
            self.counts["judge"] += 1
            if self.judge_faults:
                return JUDGE_FAULTS[self.judge_faults.pop(0)]
            verdict = self.judge(_field(prompt, "EVENT THE NEW PASSAGE MUST CONVEY"),
                                 _field(prompt, "NEW PASSAGE"), prompt)
            return verdict if isinstance(verdict, str) else json.dumps(verdict)
        if prompt.startswith("Below is the outline of a story and a description"):
            self.counts["goals"] += 1
            names = re.search(r"no one else: (.*)\.$", prompt, re.M).group(1).split(", ")
            return json.dumps({"goals": {n: f"to get through the day, {n} style" for n in names}})
        if prompt.startswith("Below is the outline of a story."):
            self.counts["narration"] += 1
            return json.dumps({"opening": self.narration})
        raise AssertionError(prompt[:100])


GEN_FAULTS = {
    "bad_json": '{"continuations": ["Sally',
    "empty": "",
    "huge": "x" * 150_000,
    "wrong_types": json.dumps({"continuations": "Sally came in."}),
    "missing_field": json.dumps({"texts": ["Sally came in."]}),
    "http_400": RawReply(status=400, body={"error": {"message": "prompt too long"}}),
    "template": json.dumps({"continuations": ["STORY CONTINUATION: <fill>"]}),
}
JUDGE_FAULTS = {
    "garbage": "Looks good to me!",
    "wrong_types": json.dumps({"conveys_event": "yes", "contradicted_facts": "none", "adds_events": 0}),
}


def run_cli(srv, src: Path, out: Path, *extra: str) -> int:
    return cli_main(["infill", str(src), "-o", str(out), "--model", "writer", "--judge-model", "critic",
                     "--base-url", srv.openai_base_url, "-O", "max_attempts=1", "-q", *extra])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- facts -----------------------------------------------------------------------------------------
def test_judge_facts_are_the_trackers_beliefs_in_plain_sentences():
    steps = plan_steps(parse_story(sally_anne()), random.Random(0))
    assert [s.action_index for s in steps] == [[0], [1], [2], [3], [4]]
    assert steps[2].sentence == "Sally moved the marble to the basket, which is also located in the kitchen."
    last = steps[-1].facts
    for fact in ["The marble is now in the box.", "Sally believes that the marble is in the basket.",
                 "Anne believes that the marble is in the box.",
                 "Anne believes that Sally believes that the marble is in the basket.",
                 "Sally believes that Anne believes that the marble is in the basket."]:
        assert fact in last
    assert "Sally believes that the marble is in the box." not in last
    assert all(s.length in LENGTHS and s.style in STYLES for s in steps)

    peek = parse_story({"id": "peek", "actions": [
        enter("Anne", "kitchen"), enter("Beth", "kitchen"), leave("Anne", "kitchen"),
        {"type": "update_object_state", "person": "Beth", "object": "apple", "state_type": "<is_salted>",
         "state_value": "is salted", "text": "Beth salted the apple.", "visible": False, "peeking": ["Anne"]},
        {"type": "private_communication", "speaker": "Beth", "listener": "Anne",
         "topic": {"kind": "abstract", "topic": "election"}}]})
    facts = plan_steps(peek, random.Random(0))[-1].facts
    for fact in ["The apple is salted.", "Anne believes that the apple is salted.",
                 "Beth does not believe that Anne believes that the apple is salted.",
                 "Anne knows about the election.", "Beth believes that Anne knows about the election."]:
        assert fact in facts, (fact, facts)


# -- end to end ------------------------------------------------------------------------------------
def test_valid_replies_infill_every_step_with_goals_and_narration(tmp_path, capsys):
    src, out, again = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "again.jsonl"
    stories = write_stories(src)
    script = Script()
    with FakeServer(script) as srv:
        assert run_cli(srv, src, out, "--goals", "--narration", "--seed", "3") == 0
        assert run_cli(srv, src, again, "--goals", "--narration", "--seed", "3") == 0
    assert "infill: stories=4 ok=4 failed=0" in capsys.readouterr().out
    results = lines(out)
    by_id = {r["id"]: r for r in results}
    assert len(results) == 4 and set(by_id) == {s["id"] for s in stories}
    for s in stories:
        r = by_id[s["id"]]
        inf = r["infilled"]
        assert {k: r[k] for k in s} == s  # the labelled story is carried through unchanged
        assert inf["ok"] is True and inf["reason"] == "" and inf["errors"] == []
        assert (inf["model"], inf["judge_model"]) == ("writer", "critic")
        assert [st["action_index"] for st in inf["steps"]] == [[i] for i in range(len(s["actions"]))]
        assert all(st["attempts"] == 1 and len(st["verdicts"]) == 1 and st["verdicts"][0]["ok"]
                   for st in inf["steps"])
        assert inf["text"] == "\n".join([inf["narration"]] + [st["text"] for st in inf["steps"]])
        people = {a.get("person") or a.get("speaker") for a in s["actions"]}
        assert set(inf["goals"]) <= people | {a.get("listener") for a in s["actions"]}
    assert lines(again) == results  # same seed, same prompts, same stories
    steps = [p for p in script.prompts if p.startswith("Continue the story")]
    assert {length for length in LENGTHS if any(f"Continue the story {length}," in p for p in steps)} == set(LENGTHS)
    assert all(any(STYLES[style] in p for p in steps) for style in STYLES)
    assert script.counts["goals"] == script.counts["narration"] == 8  # one each per story per run


def test_a_rejected_candidate_is_recorded_and_the_next_one_tried(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(sally_anne()) + "\n")

    def judge(event, passage, prompt):
        if event.startswith("Anne moved the marble") and "(take 1.0)" in passage:
            return {**ACCEPT, "contradicted_facts": [2, 99], "reason": "Sally seems to watch"}
        if event.startswith("Sally left") and "(take 1." in passage:
            return {**ACCEPT, "conveys_event": False, "reason": "Sally never leaves"}
        return ACCEPT

    script = Script(judge)
    with FakeServer(script) as srv:
        assert run_cli(srv, src, out, "--candidates", "2") == 0
    steps = lines(out)[0]["infilled"]["steps"]
    assert lines(out)[0]["infilled"]["ok"] is True
    left, moved = steps[3], steps[4]
    # Step 4: candidate 0 rejected (fact 2 named, 99 ignored), candidate 1 accepted, one call.
    assert moved["attempts"] == 1 and moved["text"].endswith("(take 1.1)")
    v = moved["verdicts"]
    assert [x["ok"] for x in v] == [False, True] and v[0]["reason"] == "mental_state_violated"
    assert v[0]["violated"] == [plan_steps(parse_story(sally_anne()), random.Random(0))[4].facts[1]]
    assert v[0]["note"] == "Sally seems to watch"
    # Step 3: both candidates of the first call rejected, a second call told why.
    assert left["attempts"] == 2 and left["text"].endswith("(take 2.0)")
    assert [(x["attempt"], x["candidate"], x["reason"]) for x in left["verdicts"]] == [
        (1, 0, "event_not_conveyed"), (1, 1, "event_not_conveyed"), (2, 0, "")]
    retry = [p for p in script.prompts if "EARLIER VERSIONS WERE REJECTED (attempt 2 of 3)" in p]
    assert len(retry) == 1 and "Sally never leaves" in retry[0] and "(take 1.1)" in retry[0]
    assert "rejections: event_not_conveyed=2 mental_state_violated=1" in capsys.readouterr().out


def test_exhausted_retries_keep_the_story_out_but_written(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_stories(src, n_sampled=1)

    def judge(event, passage, prompt):
        return {**ACCEPT, "adds_events": True} if event.startswith("Anne entered") else ACCEPT

    script = Script(judge)
    with FakeServer(script) as srv:
        assert run_cli(srv, src, out, "--candidates", "2", "--max-retries", "1") == 0
    sally, other = lines(out)
    inf = sally["infilled"]
    assert inf["ok"] is False and inf["reason"] == "retries_exhausted" and inf["text"] == ""
    assert len(inf["steps"]) == 2 and inf["steps"][0]["verdicts"][0]["ok"]
    failed = inf["steps"][1]
    assert failed["text"] == "" and failed["attempts"] == 2
    assert [x["reason"] for x in failed["verdicts"]] == ["invented_events"] * 4
    assert other["infilled"]["ok"] is True
    summary = capsys.readouterr().out.strip()
    assert "stories=2 ok=1 failed=1" in summary and "failures: retries_exhausted=1" in summary
    assert "invented_events=4" in summary


def test_malformed_and_hostile_replies_are_counted_never_fatal(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    stories = [sample_one(Conditions("A1", 2, 1, 1, 4, False, 1), 9, k, True, 2) for k in range(7)]
    src.write_text("".join(json.dumps(s) + "\n" for s in stories))
    faults = ["bad_json", "empty", "huge", "wrong_types", "missing_field", "template"]
    script = Script(gen_faults=faults, judge_faults=["garbage", "wrong_types"])
    with FakeServer(script) as srv:
        assert run_cli(srv, src, out, "--candidates", "2") == 0
    results = lines(out)
    assert len(results) == 7 and all(r["infilled"]["ok"] for r in results)
    reasons = Counter(v["reason"] for r in results for st in r["infilled"]["steps"]
                      for v in st["verdicts"] if not v["ok"])
    assert reasons == Counter({"infill_bad_json": 1, "infill_empty": 1, "infill_too_long": 1,
                               "infill_schema": 2, "candidate_template_text": 1, "judge_no_json": 1, "judge_schema": 1})
    summary = capsys.readouterr().out
    assert "mean_attempts=" in summary and "infill_schema=2" in summary


def test_narration_that_names_people_is_retried_then_left_out(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(sally_anne()) + "\n")
    script = Script(narration="Sally loved this kitchen. It was warm.")
    with FakeServer(script) as srv:
        assert run_cli(srv, src, out, "--narration", "--max-retries", "1") == 0
    inf = lines(out)[0]["infilled"]
    assert inf["ok"] is True and inf["narration"] == "" and script.counts["narration"] == 2
    assert inf["errors"] == ["narration: names_people: the opening names Sally"]
    assert "rejected (names_people" in [p for p in script.prompts if p.startswith("Below")][1]
    assert "prelude_errors: narration_names_people=1" in capsys.readouterr().out


def test_invalid_input_lines_are_reported_and_skipped(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    good = sally_anne()
    broken = {"id": "bad", "actions": [leave("Anne", "kitchen")]}
    src.write_text("\n".join([json.dumps(good), "{not json", json.dumps({"id": "x", "error": "line 3: ..."}),
                              json.dumps(broken), json.dumps(good)]) + "\n")
    with FakeServer(Script()) as srv:
        assert cli_main(["infill", str(src), "-o", str(out), "--model", "m", "--base-url",
                         srv.openai_base_url]) == 0
    captured = capsys.readouterr()
    assert f"{src}: line 2: not valid JSON, skipped" in captured.err
    assert f"{src}: line 4: action 1 (leave_room)" in captured.err
    assert f"{src}: line 5: missing or repeated id 'sally-anne', skipped" in captured.err
    assert "stories=1 ok=1" in captured.out and "invalid_input=4" in captured.out
    assert [r["id"] for r in lines(out)] == ["sally-anne"]
    assert cli_main(["infill", str(tmp_path / "missing.jsonl"), "-o", str(out), "--model", "m"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path / 'missing.jsonl'}: no such file"


# -- resuming and secrets --------------------------------------------------------------------------
def test_sigkill_midway_then_rerun_loses_and_duplicates_nothing(tmp_path):
    src, out, ref = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "ref.jsonl"
    write_stories(src, n_sampled=3)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    with FakeServer(Script(), latency_s=0.03) as srv:
        cmd = [sys.executable, "-m", "exploretom", "infill", str(src), "-o", str(out), "--model", "writer",
               "--judge-model", "critic", "--base-url", srv.openai_base_url, "-O", "max_attempts=1",
               "--active", "1", "-q"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline and not (out.exists() and out.read_bytes().count(b"\n") >= 1):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert 1 <= out.read_bytes().count(b"\n") < 4
    with open(out, "ab") as f:  # and as if the kill had cut a line in half
        f.write(b'{"id": "half a line')
    with FakeServer(Script()) as srv:  # no latency from here on
        assert run_cli(srv, src, out, "--active", "1") == 0
        assert run_cli(srv, src, ref, "--active", "1") == 0
    assert sorted(map(json.dumps, lines(out))) == sorted(map(json.dumps, lines(ref)))
    assert len(lines(out)) == 4


def test_failed_requests_leave_stories_for_the_next_run(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    stories = write_stories(src, n_sampled=1)
    down = RawReply(status=400, body={"error": {"message": "model is loading"}})
    with FakeServer(lambda request: down) as srv:
        assert run_cli(srv, src, out) == 3
    captured = capsys.readouterr()
    assert "request_errors=2" in captured.out and not out.read_text()
    assert "error: 2 stories were not written because a request failed" in captured.err
    with FakeServer(Script()) as srv:
        assert run_cli(srv, src, out) == 0
    assert sorted(r["id"] for r in lines(out)) == sorted(s["id"] for s in stories)
    assert all(r["infilled"]["ok"] for r in lines(out))


def test_api_key_never_reaches_outputs(tmp_path, capsys):
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_stories(src, n_sampled=2)
    faults = Faults(rate_hostile=0.3, hostile_kinds=("echo_auth", "error_echo_auth"))
    with FakeServer(Script(), faults=faults, seed=1) as srv:
        assert run_cli(srv, src, out, "--max-retries", "4", "--goals") in (0, 3)
        assert srv.stats["hostile:echo_auth"] > 0 and srv.credentials_seen["authorization"] > 0
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    assert SECRET not in out.read_text()


RETRYING = ["-O", "max_attempts=8", "-O", "backoff_base_s=0", "-O", "backoff_max_s=0",
            "-O", "timeout_s=3"]  # above any reply time under load: only injected faults fail


def test_injected_faults_are_never_data(tmp_path, capsys):
    """Issue 17 item 1 with the fake server's own faults (429, 500, timeouts): at rate 1.0 no
    story is written (none "failed" for a request error) and the run exits 3; at rate 0.3 the
    backend's retries give exactly the fault-free stories."""
    src = tmp_path / "in.jsonl"
    write_stories(src, n_sampled=1)
    clean, down, flaky = (tmp_path / f"{n}.jsonl" for n in ("clean", "down", "flaky"))
    with FakeServer(Script()) as srv:
        assert run_cli(srv, src, clean, *RETRYING) == 0
    with FakeServer(Script(), faults=Faults.injected(1.0, hold_s=1.0)) as srv:
        assert run_cli(srv, src, down, "-O", "max_attempts=2", *RETRYING[2:]) == 3
    assert "stories were not written because a request failed" in capsys.readouterr().err
    assert not down.read_text()
    code = 1
    for seed in range(3):  # a request can fail 8 times in a row; the re-run retries it
        with FakeServer(Script(), faults=Faults.injected(0.3, hold_s=1.0), seed=seed) as srv:
            code = run_cli(srv, src, flaky, *RETRYING)
        if code == 0:
            break
    assert code == 0
    assert sorted(map(json.dumps, lines(flaky))) == sorted(map(json.dumps, lines(clean)))
