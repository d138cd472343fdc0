"""LLM context sampling (`exploretom.contexts`) against the scripted local OpenAI server.

The reply script answers each kind of request (context, state updates, judge, name and setting
pools) from its prompt, and can be told to misbehave on the first requests of a kind: bad JSON,
missing fields, wrong types, empty, huge, prose, an HTTP error. Every misbehaviour must end up as
a counted failure with its reason, never a crash, and the API key must never reach any output.
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

import pytest

from eval.backends.fake_server.api import RawReply
from eval.backends.fake_server.faults import Faults
from eval.backends.fake_server.server import FakeServer
from exploretom.cli import main as cli_main
from exploretom.contexts.pools import pools_path
from exploretom.contexts.records import context_from_record, read_contexts
from exploretom.sampling.action_sets import Conditions
from eval.backends.base import GenerationConfig, ScriptedBackend
from exploretom.contexts.pools import lexicon_pools
from exploretom.contexts.sampler import ContextSampler, ContextSpec, failures_path
from exploretom.contexts.validation import context_problems
from eval.jsonl import InputError
from exploretom.sampling.sampler import StorySampler
from exploretom.semantics.label import label_story
from exploretom.semantics.story import Story

SECRET = "sk-test-never-write-me-0123456789abcdef"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


# -- the scripted model ----------------------------------------------------------------------------
UPDATES = [
    {"text": "{person} painted the ladle red.", "state_value": "is painted red", "visible": True},
    {"text": "{person} wrapped the ladle in a tea towel.", "state_value": "is wrapped in a tea towel",
     "visible": True},
    {"text": "{person} tied a ribbon to the ladle.", "state_value": "has a ribbon tied to it",
     "visible": True},
    {"text": "{person} rubbed garlic on the ladle.", "state_value": "smells of garlic", "visible": False},
    {"text": "{person} dipped the ladle in poison.", "state_value": "is poisoned", "visible": False},
    {"text": "{person} warmed the ladle in hot water.", "state_value": "is warm", "visible": False},
    {"text": "{person} ate the ladle.", "state_value": "is eaten", "visible": False},  # judge says no
    {"text": "{person} dropped the ladle on her foot.", "state_value": "is dropped", "visible": True},
]
KEPT = ["is painted red", "is wrapped in a tea towel", "has a ribbon tied to it", "smells of garlic",
        "is poisoned", "is warm"]


def good_context(prompt: str) -> dict:
    names = re.search(r"Names you may use: (.*?)\. Choose", prompt).group(1).split(", ")
    people = int(re.search(r"exactly (\d+) objects", prompt).group(1))
    containers = int(re.search(r"exactly (\d+) different opaque", prompt).group(1))
    topics = int(re.search(r"exactly (\d+) different subjects", prompt).group(1))
    names = names[:people]
    return {
        "people": [{"name": n, "role": r} for n, r in zip(names, ["A head cook", "waiter", "dishwasher",
                                                                  "owner", "supplier"])],
        "situation": f"{', '.join(names)} stood around the steel counter of the kitchen before "
                     "service. Cupboards and drawers lined the walls around them.",
        "start_room": "The Kitchen.", "other_room": "pantry", "object": "a ladle",
        # one container more than asked: the sampler keeps the first ones
        "containers": ["drawer", "cupboard", "tin box", "sack", "crate"][: containers + 1],
        "topics": ["new menu", "rent increase", "summer holidays", "football", "weather"][:topics],
    }


def kind_of(prompt: str) -> str:
    for prefix, kind in (("Invent the opening situation", "context"), ("A story takes place", "updates"),
                         ("A story generator will use", "judge"), ("Write ", "pool")):
        if prompt.startswith(prefix):
            return kind
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


def good_reply(kind: str, prompt: str) -> str:
    if kind == "context":
        return json.dumps(good_context(prompt))
    if kind == "updates":
        return "Here are the changes:\n```json\n" + json.dumps({"updates": UPDATES}) + "\n```"
    if kind == "judge":
        stays = 'Event: "Anne ate the ladle."' not in prompt
        return json.dumps({"plausible": True, "visibility_correct": True, "object_stays": stays,
                           "state_matches": True, "reason": "ok" if stays else "it is gone"})
    if "first names" in prompt:
        return json.dumps(["Ada", "Bruno", "Chen", "Dara", "Eli", "Fatou", "Goran", "Hana", "Ines",
                           "Jomo", "Kai", "not a name", "Lior"])
    return "1. a bakery\n2. A fire station.\n3. student flat\n"


def bad_context(kind: str, prompt: str):
    good = good_context(prompt)
    if kind == "bad_json":
        return '{"people": [{"name": "Ann", '
    if kind == "empty":
        return ""
    if kind == "huge":
        return "{" + "x" * 150_000
    if kind == "missing_field":
        return json.dumps({k: v for k, v in good.items() if k != "object"})
    if kind == "wrong_types":
        return json.dumps({**good, "people": "three cooks", "containers": 3})
    if kind == "prose":
        return "What a lovely idea for a story! The kitchen is busy."
    if kind == "see_through":
        return json.dumps({**good, "containers": ["glass jar", "drawer", "cupboard"]})
    if kind == "one_person":
        return json.dumps({**good, "people": good["people"][:1]})
    if kind == "http_400":
        return RawReply(status=400, body={"error": {"message": "context length exceeded"}})
    raise ValueError(kind)


class Script:
    """The reply function: the first requests of each kind get the scripted faults, in order of
    arrival, the rest good replies. `counts` records requests per kind."""

    def __init__(self, context_faults=(), update_faults=(), judge_faults=()):
        self.faults = {"context": list(context_faults), "updates": list(update_faults),
                       "judge": list(judge_faults)}
        self.counts: Counter = Counter()

    def __call__(self, request):
        prompt = request.last_user
        kind = kind_of(prompt)
        self.counts[kind] += 1
        fault = self.faults.get(kind) and self.faults[kind].pop(0)
        if not fault:
            return good_reply(kind, prompt)
        if kind == "context":
            return bad_context(fault, prompt)
        return {"bad_json": '{"updates": [{"text": ', "garbage": "no idea, sorry",
                "invalid_all": json.dumps({"updates": [{"text": "x", "state_value": 3, "visible": "yes"}]}),
                "wrong_types": json.dumps({"plausible": "yes", "visibility_correct": 1})}[fault]


def run_cli(srv, out: Path, *extra: str) -> int:
    return cli_main(["contexts", "--model", "fake-model", "--base-url", srv.openai_base_url,
                     "-O", "max_attempts=1", "-o", str(out), "-q", *extra])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- end to end ------------------------------------------------------------------------------------
def test_valid_replies_give_contexts_in_the_lexicon_schema(tmp_path, capsys):
    out = tmp_path / "contexts.jsonl"
    script = Script()
    with FakeServer(script) as srv:
        assert run_cli(srv, out, "-n", "3", "--people", "3", "--seed", "7") == 0
    records = lines(out)
    assert len(records) == 3 and len({r["id"] for r in records}) == 3
    summary = capsys.readouterr().out
    assert "contexts: 3 written" in summary and "moves_or_destroys=3" in summary
    assert "update_pronoun=3" in summary  # "dropped her ladle" never reaches the judge
    for r in records:
        assert context_problems(r, people=3, containers=3, topics=3, rooms=2) == []
        assert set(r) == {"id", "description", "roles", "rooms", "topics", "objects", "people",
                          "situation", "source"}
        assert r["source"] == {"model": "fake-model", "judge_model": "fake-model"}
        assert r["rooms"] == ["kitchen", "pantry"]  # normalised: article, case, full stop
        assert r["roles"][0] == "head cook" and r["objects"][0]["name"] == "ladle"
        assert r["objects"][0]["containers"] == ["drawer", "cupboard", "tin box"]
        values = [u["state_value"] for u in r["objects"][0]["state_updates"]]
        assert values == KEPT
        assert r["objects"][0]["state_updates"][3]["state_type"] == "<smells_of_garlic>"
    assert script.counts == {"context": 3, "updates": 3, "judge": 21}  # 7 valid updates each
    # The sampler can build stories in these contexts, and they render and label cleanly.
    records = read_contexts(out)
    ctx = context_from_record(records[0], people=3, rooms=2)
    tracker = StorySampler(Conditions("A3", 3, 2, 2, 10, True, 1), ctx, random.Random(1)).walk()
    assert tracker is not None
    labelled = label_story(Story("s", tuple(tracker.actions), ctx.to_json()))
    assert "{" not in labelled["text"] and labelled["questions"]


def test_llm_pools_are_asked_once_and_kept(tmp_path):
    out = tmp_path / "contexts.jsonl"
    script = Script()
    with FakeServer(script) as srv:
        assert run_cli(srv, out, "-n", "1", "--people", "2", "--pool", "llm") == 0
        assert run_cli(srv, out, "-n", "2", "--people", "2", "--pool", "llm") == 0
    pools = json.loads(pools_path(out).read_text())
    assert "not a name" not in pools["names"] and len(pools["names"]) == 12
    assert pools["settings"] == ["a bakery", "a fire station", "a student flat"]
    assert script.counts["pool"] == 2  # names and settings, once for both runs
    records = lines(out)
    assert len(records) == 2 and all(r["description"] in pools["settings"] for r in records)
    assert all(p["name"] in pools["names"] for r in records for p in r["people"])


def test_malformed_and_hostile_replies_are_counted_failures(tmp_path, capsys):
    out = tmp_path / "contexts.jsonl"
    faults = ["bad_json", "empty", "huge", "missing_field", "wrong_types", "prose", "see_through",
              "one_person", "http_400"]
    script = Script(faults, update_faults=["bad_json", "invalid_all"], judge_faults=["garbage", "wrong_types"])
    with FakeServer(script) as srv:
        assert run_cli(srv, out, "-n", "2", "--people", "3", "--max-attempts", "20") == 0
    assert len(lines(out)) == 2
    reasons = Counter(f["reason"] for f in lines(failures_path(out)))
    assert reasons == Counter({"bad_json": 1, "empty": 1, "too_long": 1, "schema": 2, "no_json": 1,
                               "containers": 1, "people": 1,
                               "updates_bad_json": 1, "too_few_updates": 1})
    summary = capsys.readouterr().out  # the HTTP 400 is counted, but left for a later run
    assert "judge_no_json=1" in summary and "judge_schema=1" in summary and "11 failed" in summary
    assert "request_failed=1" in summary
    problems = {f["reason"]: f["problems"][0] for f in lines(failures_path(out))}
    assert "field object" in problems["schema"] or "field people" in problems["schema"]
    assert "glass jar" in problems["containers"]


def test_gives_up_with_one_clear_line_when_attempts_run_out(tmp_path, capsys):
    out = tmp_path / "contexts.jsonl"
    script = Script(["prose"] * 10)
    with FakeServer(script) as srv:
        assert run_cli(srv, out, "-n", "2", "--people", "2", "--max-attempts", "4") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: 0 of 2 contexts after 4 attempts")
    assert script.counts["context"] == 4 and not out.read_text()


def test_failed_requests_are_retried_by_the_next_run(tmp_path, capsys):
    out = tmp_path / "contexts.jsonl"
    down = RawReply(status=400, body={"error": {"message": "model is loading"}})
    with FakeServer(lambda request: down) as srv:
        assert run_cli(srv, out, "-n", "2", "--people", "2", "--max-attempts", "2") == 3
    assert "2 attempts hit request errors and will be retried" in capsys.readouterr().err
    assert not out.read_text() and not failures_path(out).read_text()
    with FakeServer(Script()) as srv:
        assert run_cli(srv, out, "-n", "2", "--people", "2", "--max-attempts", "2") == 0
    assert sorted(r["id"] for r in lines(out)) == ["llm_s0_000000", "llm_s0_000001"]


def test_bad_arguments_are_one_line_errors(tmp_path, capsys, monkeypatch):
    out = tmp_path / "c.jsonl"
    assert cli_main(["contexts", "--model", "m", "-n", "1", "--people", "0", "-o", str(out)]) == 2
    assert capsys.readouterr().err.strip() == "error: --people must be >= 1"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert cli_main(["contexts", "--model", "m", "-n", "1", "--people", "2", "-o", str(out)]) == 2
    assert "OPENAI_API_KEY is not set" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "description": "kitchen"}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl: context 1 \('x'\): missing field"):
        read_contexts(bad)


# -- resuming --------------------------------------------------------------------------------------
def test_rerun_continues_after_a_partial_line_without_repeating_attempts(tmp_path):
    out = tmp_path / "contexts.jsonl"
    with FakeServer(Script(["prose"])) as srv:
        assert run_cli(srv, out, "-n", "2", "--people", "2") == 0
    first = lines(out)
    with open(out, "a") as f:  # what a kill in the middle of a write leaves
        f.write('{"id": "llm_s0_000009", "descr')
    script = Script()
    with FakeServer(script) as srv:
        assert run_cli(srv, out, "-n", "3", "--people", "2") == 0
    records = lines(out)
    assert records[:2] == first and len(records) == 3
    assert len({r["id"] for r in records}) == 3
    assert script.counts["context"] == 1  # neither the 2 written nor the failed attempt again
    assert records[2]["id"] not in {f["id"] for f in lines(failures_path(out))}


def test_sigkill_midway_loses_and_duplicates_nothing(tmp_path):
    out = tmp_path / "contexts.jsonl"
    script = Script()
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    with FakeServer(script, latency_s=0.05) as srv:
        cmd = [sys.executable, "-m", "exploretom", "contexts", "--model", "fake-model",
               "--base-url", srv.openai_base_url, "-O", "concurrency=1", "-n", "4",
               "--people", "2", "-o", str(out), "-q"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        complete = out.read_bytes().count(b"\n")
        assert 1 <= complete < 4
        assert run_cli(srv, out, "-n", "4", "--people", "2") == 0
    records = lines(out)
    assert len(records) == 4 and len({r["id"] for r in records}) == 4
    assert all(context_problems(r, people=2) == [] for r in records)


def test_api_key_never_reaches_outputs(tmp_path, capsys):
    out = tmp_path / "contexts.jsonl"
    faults = Faults(rate_hostile=0.4, hostile_kinds=("echo_auth", "error_echo_auth"))
    with FakeServer(Script(), faults=faults, seed=3) as srv:
        run_cli(srv, out, "-n", "3", "--people", "2", "--max-attempts", "30")
        assert srv.credentials_seen["authorization"] > 0 and srv.stats["hostile:echo_auth"] > 0
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    for path in tmp_path.iterdir():
        assert SECRET not in path.read_text(errors="replace"), path
    assert lines(out)  # the run still got its contexts


RETRYING = ["-O", "max_attempts=8", "-O", "backoff_base_s=0", "-O", "backoff_max_s=0",
            "-O", "timeout_s=3"]  # above any reply time under load: only injected faults fail


def test_injected_faults_are_never_data(tmp_path, capsys):
    """Issue 17 item 1 with the fake server's own faults (429, 500, timeouts): at rate 1.0
    nothing is written, not even as a failed context, and the run exits 3; at rate 0.3 the
    backend's retries give exactly the fault-free contexts (in id order: an attempt left for the
    re-run is appended after the ones written before it)."""
    args = ["-n", "2", "--people", "2", "--max-attempts", "2", *RETRYING]
    clean, down, flaky = (tmp_path / f"{n}.jsonl" for n in ("clean", "down", "flaky"))
    with FakeServer(Script()) as srv:
        assert run_cli(srv, clean, *args) == 0
    with FakeServer(Script(), faults=Faults.injected(1.0, hold_s=1.0)) as srv:
        assert run_cli(srv, down, *args[:-8], "-O", "max_attempts=2", *RETRYING[2:]) == 3
    assert "attempts hit request errors and will be retried" in capsys.readouterr().err
    assert not down.read_text() and not failures_path(down).read_text()
    code = 1
    for seed in range(3):  # a request can fail 8 times in a row; the re-run retries it
        with FakeServer(Script(), faults=Faults.injected(0.3, hold_s=1.0), seed=seed) as srv:
            code = run_cli(srv, flaky, *args)
        if code == 0:
            break
    by_id = lambda path: sorted(lines(path), key=lambda r: r["id"])  # noqa: E731
    assert code == 0 and by_id(flaky) == by_id(clean)


class ReversedScript(ScriptedBackend):
    """Reports a batch's results last to first: the order a busy server may answer in."""

    def generate(self, prompts, config=GenerationConfig(), *, on_result=None, progress=False):
        out = super().generate(prompts, config)
        for i in reversed(range(len(out))):
            if on_result:
                on_result(i, out[i])
        return out


def test_files_list_attempts_in_order_whatever_order_replies_come_back(tmp_path):
    """Stories are drawn from the contexts by position, so the file must not depend on which
    reply came back first: the same seed and replies give the same file, in attempt order.
    Attempt 0's context fails and attempt 1's update proposal does, so failures and contexts
    are both checked."""
    faults = {"context": 0, "updates": 0}

    def reply(conv) -> str:
        prompt = conv[-1]["content"]
        kind = kind_of(prompt)
        if kind in faults and faults[kind] == 0:  # attempt 0 (context), attempt 1 (updates)
            faults[kind] += 1
            return "no JSON here"
        return good_reply(kind, prompt)

    spec = ContextSpec(people=2)
    files = {}
    for name, backend in (("in_order", ScriptedBackend(reply)), ("reversed", ReversedScript(reply))):
        faults.update(context=0, updates=0)
        out = tmp_path / f"{name}.jsonl"
        ContextSampler(backend, backend, spec, lexicon_pools(), seed=0).run(out, n=4, max_attempts=6)
        files[name] = (lines(out), lines(failures_path(out)))
    contexts, failures = files["in_order"]
    assert [r["id"] for r in contexts] == [f"llm_s0_{k:06d}" for k in range(2, 6)]
    assert [r["id"] for r in failures] == ["llm_s0_000000", "llm_s0_000001"]
    rev_contexts, rev_failures = files["reversed"]
    assert [r["id"] for r in rev_contexts] == [r["id"] for r in contexts]
    assert [r["id"] for r in rev_failures] == ["llm_s0_000000", "llm_s0_000001"]
