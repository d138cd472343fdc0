"""The `openai` and `anthropic` backends against the local fake server: request shapes, n samples,
bounded concurrency, retries (429 with Retry-After, 5xx, timeouts, dropped connections, garbled and
hostile bodies), errors as Completion(error=...), the disk cache, cost accounting, and secrets
that never leave the request headers."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from eval.backends import load_backend
from eval.backends.kinds.anthropic import AnthropicBackend
from eval.backends.base import GenerationConfig
from eval.backends.cache import ResponseCache
from eval.backends.fake_server.api import RawReply, Request
from eval.backends.fake_server.faults import HOSTILE_KINDS, Faults
from eval.backends.fake_server.process import spawn
from eval.backends.fake_server.server import FakeServer
from eval.backends.http_common import BackendConfigError, parse_retry_after
from eval.backends.kinds.openai import OpenAIBackend

KEY = "sk-live-FAKE-0123456789abcdefSECRET"
FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.02, "timeout_s": 0.3}


@pytest.fixture(autouse=True)
def fake_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


def conv(i: int, system: bool = True) -> list[dict]:
    return ([{"role": "system", "content": "Be brief."}] if system else []) + [
        {"role": "user", "content": f"question {i}"}]


def make(kind: str, server: FakeServer, **opts):
    url = server.openai_base_url if kind == "openai" else server.anthropic_base_url
    return load_backend(kind, "m-1", base_url=url, **opts)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_round_trip_order_and_on_result(kind):
    seen = []
    with FakeServer(lambda r: f"{r.kind}:{r.last_user}:{r.sample}", latency_s=0.01) as srv:
        b = make(kind, srv, concurrency=4)
        out = b.generate([conv(i) for i in range(20)], GenerationConfig(max_new_tokens=7, stop=("X",)),
                         on_result=lambda i, c: seen.append(i))
        body = srv.bodies[-1]
    assert [c.text for c in out] == [f"{kind}:question {i}:0" for i in range(20)]
    assert sorted(seen) == list(range(20)) and all(c.ok and not c.cached for c in out)
    assert out[0].prompt_tokens == 4 and out[0].completion_tokens == 2  # the server counts words
    if kind == "openai":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["max_tokens"] == 7 and body["stop"] == ["X"] and body["seed"] == 0 and "top_p" not in body
    else:
        assert body["system"] == "Be brief." and all(m["role"] != "system" for m in body["messages"])
        assert body["max_tokens"] == 7 and body["stop_sequences"] == ["X"] and "top_p" not in body
    assert srv.max_in_flight <= 4


def test_n_samples_native_and_per_call():
    with FakeServer(lambda r: f"s{r.sample}-{r.body.get('n', 1)}") as srv:
        native = make("openai", srv).generate([conv(0)], GenerationConfig(n=3))[0]
        split = make("openai", srv, native_n=False).generate([conv(0)], GenerationConfig(n=3))[0]
        claude = make("anthropic", srv).generate([conv(0)], GenerationConfig(n=3))[0]
        for kind in ("openai", "anthropic"):
            make(kind, srv).generate([conv(0)], GenerationConfig(top_p=0.9, seed=None))
            assert srv.bodies[-1]["top_p"] == 0.9 and "seed" not in srv.bodies[-1]
            assert "top_k" not in srv.bodies[-1]  # off unless set
            make(kind, srv).generate([conv(0)], GenerationConfig(temperature=1.0, top_k=5))
            assert srv.bodies[-1]["top_k"] == 5
    assert native.texts == ["s0-3", "s1-3", "s2-3"]
    assert split.texts == ["s0-1"] * 3 and claude.texts == ["s0-1"] * 3


def test_concurrency_is_bounded_and_used():
    with FakeServer(latency_s=0.2) as srv:
        t = time.perf_counter()
        out = make("openai", srv, concurrency=16).generate([conv(i) for i in range(64)])
        wall = time.perf_counter() - t
    assert all(c.ok for c in out)
    assert srv.max_in_flight == 16
    assert wall < 64 * 0.2 / 4  # sequential would take 12.8 s, the ideal is 0.8 s


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_retries_recover_from_injected_faults(kind):
    faults = Faults(rate_429=0.1, rate_500=0.1, rate_timeout=0.05, rate_disconnect=0.05, rate_malformed=0.1,
                    hold_s=1.0)
    with FakeServer(faults=faults, seed=3) as srv:
        b = make(kind, srv, concurrency=8, max_attempts=12, **FAST)
        out = b.generate([conv(i) for i in range(60)])
    assert all(c.ok for c in out), [c.error for c in out if not c.ok]
    assert [c.text for c in out] == [f"question {i}" for i in range(60)]
    u = b.usage_summary()
    assert u["ok"] == 60 and u["errors"] == 0 and u["http_calls"] > 60
    assert {"429", "5xx", "timeout", "connection", "bad_response"} <= set(u["retries"])


def test_retry_after_is_honoured():
    calls = []

    def reply(r):
        calls.append(time.perf_counter())
        if len(calls) == 1:
            return RawReply(429, {"error": {"message": "slow"}}, {"Retry-After": "0.4"})
        return "ok"

    with FakeServer(reply) as srv:
        out = make("openai", srv, backoff_base_s=0.0).generate([conv(0)])
    assert out[0].text == "ok" and calls[1] - calls[0] >= 0.38
    assert parse_retry_after({"Retry-After-Ms": "250"}) == 0.25
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None


def test_final_failures_are_completions_not_exceptions():
    def reply(r):
        if r.last_user == "question 1":
            return RawReply(400, {"error": {"message": "context too long"}})
        if r.last_user == "question 2":
            return RawReply(503, {"error": {"message": "overloaded"}})
        return "fine"

    with FakeServer(reply) as srv:
        b = make("openai", srv, max_attempts=3, **FAST)
        out = b.generate([conv(i) for i in range(4)])
        calls = srv.stats["requests"]
    assert [c.ok for c in out] == [True, False, False, True]
    assert out[1].error == "HTTP 400: context too long"  # not retried
    assert out[2].error.startswith("failed after 3 attempt(s)") and "HTTP 503: overloaded" in out[2].error
    assert calls == 2 + 1 + 3
    # an unreachable server: connection errors, still no exception
    dead = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", max_attempts=2, **FAST)
    assert "connection" in dead.generate([conv(0)])[0].error


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_hostile_bodies_never_crash_and_never_leak(kind, tmp_path):
    faults = Faults(rate_hostile=1.0)
    with FakeServer(faults=faults, seed=5) as srv:
        b = make(kind, srv, concurrency=4, max_attempts=1, cache=str(tmp_path / "c.sqlite"))
        out = b.generate([conv(i) for i in range(60)])
        hostile = {k.split(":")[1] for k in srv.stats if k.startswith("hostile:")}
    assert hostile == set(HOSTILE_KINDS)
    ok = [c for c in out if c.ok]
    # only the echo of the credentials parses as a completion; it comes back redacted
    assert ok and all("[REDACTED]" in c.text for c in ok)
    errors = " ".join(c.error for c in out if not c.ok)
    for needle in ("not valid JSON", "unexpected response shape", "exceeds", "HTTP 400"):
        assert needle in errors
    assert KEY not in errors and KEY not in json.dumps(b.describe()) and KEY not in json.dumps(b.usage_summary())
    b.close()
    assert KEY.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_cache_hits_keys_and_errors(tmp_path, monkeypatch):
    fail = {"question 3"}

    def reply(r):
        return RawReply(500, b"{}") if r.last_user in fail else f"answer to {r.last_user}"

    path = tmp_path / "cache.sqlite"
    with FakeServer(reply) as srv:
        b = make("openai", srv, cache=str(path), max_attempts=1, prices={"m-1": {"input": 1, "output": 2}})
        first = b.generate([conv(i) for i in range(5)])
        calls = srv.stats["requests"]
        fail.clear()
        monkeypatch.setenv("OPENAI_API_KEY", KEY + "-rotated")  # another key: same cache entries
        b2 = make("openai", srv, cache=str(path), prices={"m-1": {"input": 1, "output": 2}})
        second = b2.generate([conv(i) for i in range(5)])
        assert srv.stats["requests"] == calls + 1  # only the failed prompt is asked again
        # different sampling settings or model: a different entry
        third = b2.generate([conv(0)], GenerationConfig(temperature=0.7))
        other = load_backend("openai", "m-2", base_url=srv.openai_base_url, cache=str(path)).generate([conv(0)])
        assert srv.stats["requests"] == calls + 3
    assert not first[3].ok and [c.cached for c in second] == [True, True, True, False, True]
    assert [c.text for c in second] == [f"answer to question {i}" for i in range(5)]
    assert not third[0].cached and not other[0].cached
    s = b2.usage_summary()
    assert s["cached"] == 4 and s["cached_prompt_tokens"] > 0 and s["saved_by_cache_usd"] > 0
    assert s["cost_usd"] == pytest.approx((s["prompt_tokens"] * 1 + s["completion_tokens"] * 2) / 1e6)
    assert len(ResponseCache(path)) == 7
    assert KEY.encode() not in path.read_bytes() and b"authorization" not in path.read_bytes().lower()


def test_cached_samples_of_a_multi_call_prompt_are_not_asked_again(tmp_path):
    with FakeServer(lambda r: "sample") as srv:
        path = str(tmp_path / "c.sqlite")
        first = make("anthropic", srv, cache=path).generate([conv(i) for i in range(5)], GenerationConfig(n=3))
        calls = srv.stats["requests"]
        again = make("anthropic", srv, cache=path).generate([conv(i) for i in range(6)], GenerationConfig(n=3))
        assert calls == 15 and srv.stats["requests"] == calls + 3  # only the new prompt's 3 calls
    assert [c.texts for c in first] == [["sample"] * 3] * 5
    assert [c.cached for c in again] == [True] * 5 + [False] and again[5].texts == ["sample"] * 3


def test_cache_is_shared_by_concurrent_processes(tmp_path):
    path = tmp_path / "shared.sqlite"
    code = (
        "import sys; from eval.backends.cache import ResponseCache\n"
        "c = ResponseCache(sys.argv[1])\n"
        "for i in range(300): c.put(f'{sys.argv[2]}-{i}', {'texts': [str(i)]})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), f"p{j}"]) for j in range(3)]
    assert [p.wait(120) for p in procs] == [0, 0, 0]
    cache = ResponseCache(path)
    assert len(cache) == 900 and cache.get("p2-299") == {"texts": ["299"]}


def test_options_and_keys_fail_with_one_line(monkeypatch):
    with pytest.raises(BackendConfigError, match="option 'concurrency'"):
        OpenAIBackend("m", concurrency=0)
    with pytest.raises(BackendConfigError, match="option 'temprature'"):
        AnthropicBackend("m", temprature=1)
    with pytest.raises(BackendConfigError, match="option 'base_url'"):
        OpenAIBackend("m", base_url="localhost:8000")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(BackendConfigError, match="environment variable ANTHROPIC_API_KEY is not set"):
        AnthropicBackend("m")
    b = OpenAIBackend("m", api_key_env="", base_url="http://127.0.0.1:1/v1")  # keyless local server
    assert b._auth_headers() == {}


def test_generate_from_inside_a_running_event_loop():
    with FakeServer() as srv:
        b = make("anthropic", srv)

        async def caller():
            return b.generate([conv(1)])

        assert asyncio.run(caller())[0].text == "question 1"


def test_failing_on_result_stops_the_batch():
    with FakeServer(latency_s=0.01) as srv:
        b = make("openai", srv, concurrency=2)

        def boom(i, c):
            raise OSError("disk full")

        with pytest.raises(OSError, match="disk full"):
            b.generate([conv(i) for i in range(50)], on_result=boom)
        assert srv.stats["requests"] < 10


def test_server_subprocess_mode_and_lifetime():
    with spawn(latency_s=0.0, faults="429=0.0") as url:
        out = OpenAIBackend("m", base_url=url + "/v1").generate([conv(2)])
    assert out[0].text == "question 2"
    proc = subprocess.Popen([sys.executable, "-m", "eval.backends.fake_server", "--lifetime", "0.5"],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("READY http://127.0.0.1:")
    assert proc.wait(10) == 0  # stops by itself
    proc.stdout.close()
    bad = subprocess.run([sys.executable, "-m", "eval.backends.fake_server", "--faults", "teapot=1"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown fault 'teapot'")


def test_request_view_of_anthropic_bodies():
    r = Request("anthropic", {"system": [{"type": "text", "text": "S"}],
                              "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    assert r.messages == [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
    assert r.last_user == "hi"

