"""`python -m eval run` against an OpenAI-compatible server (the project's fake one): scores,
no secret in any output, and prompts the server refused are retried by the next run."""
from __future__ import annotations

import json

from eval.answers import tagged
from eval.backends.fake_server.api import RawReply
from eval.backends.fake_server.server import FakeServer
from eval.benchmarks import get_benchmark
from eval.cli import main


def test_http_backend_run_retries_refused_prompts(tmp_path, monkeypatch, capsys):
    secret = "sk-test-never-written-anywhere"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    rows = get_benchmark("tomi").load_rows(limit=6)
    gold = {r["prompt"][-1]["content"]: r["answer"] for r in rows}
    refuse = {r["prompt"][-1]["content"] for r in rows[:2]}
    state = {"refusing": True}

    def reply(request):
        if state["refusing"] and request.last_user in refuse:
            return RawReply(status=400, body={"error": {"message": "bad request"}})
        return tagged(gold[request.last_user], "She was away.")

    out = tmp_path / "run"
    with FakeServer(reply) as server:
        args = ["run", "tomi", "--model", "fake-model", "--backend", "openai", "--limit", "6",
                "-O", f"base_url={server.openai_base_url}", "-O", "max_attempts=1",
                "-o", str(out), "--no-progress"]
        assert main(args) == 3  # finished, but two prompts failed
        first = json.loads((out / "results.json").read_text())["benchmarks"]["tomi"]
        assert first["n"] == 4 and first["n_failed"] == 2 and first["score"] == 1.0
        state["refusing"] = False
        assert main(args) == 0
    entry = json.loads((out / "results.json").read_text())["benchmarks"]["tomi"]
    assert entry["n"] == 6 and entry["n_failed"] == 0 and entry["n_cached"] == 4
    assert entry["score"] == 1.0
    capsys.readouterr()
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".md", ".html"):
            assert secret not in path.read_text(encoding="utf-8"), path
