"""A small scripted OpenAI/Anthropic-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies) to serve
`POST /v1/chat/completions` (OpenAI shape) and `POST /v1/messages` (Anthropic shape), and
`GET /health` as `vllm serve` does (so it can stand in for a served model). Every reply
comes from a Python function of the request, after a fixed latency, unless a fault is injected:
429 with Retry-After, 500/529, a request held open past the client's timeout, a dropped
connection, a malformed body, or a hostile body (wrong types, huge, deeply nested, not UTF-8,
HTML, a reply that echoes the caller's credentials back).

Two ways to run it, both of which stop by themselves (after `lifetime_s`, and a subprocess also
when its parent dies), so a crashed test never leaves a server behind:

    with FakeServer(reply_fn, latency_s=0.2, faults=Faults.injected(0.3)) as srv:
        backend = OpenAIBackend("fake", base_url=srv.openai_base_url)

    python -m eval.backends.fake_server --latency 0.2 --reply tests.x:reply   # prints READY <url>

The protocol is hand-written on asyncio streams rather than built on a web framework so that the
server can send exactly the broken responses the fault plan asks for, and so that one core can
serve the benchmark's 320 requests per second.

Its modules: `api` (a request as the reply function sees it, what the function may answer, and
the two APIs' response bodies), `faults` (the fault plan, `Faults`, and the hostile bodies),
`server` (`FakeServer`: the HTTP on asyncio streams, in a thread of the caller), `process`
(`spawn` and the command: the server in a process of its own).
"""
