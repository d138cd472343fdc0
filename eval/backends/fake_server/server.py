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
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
HEALTH_PATH = "/health"

HOSTILE_KINDS = (
    "wrong_types",  # fields of the wrong JSON type
    "empty_choices",  # no completion in a 200 reply
    "null_content",  # the text is null
    "deep_nesting",  # JSON nested deeper than a recursive parser can follow
    "huge",  # a body far larger than any real completion
    "non_utf8",  # bytes that are not UTF-8
    "html",  # a proxy's HTML error page served with status 200
    "echo_auth",  # a 200 whose completion text repeats the caller's credential headers
    "error_echo_auth",  # a 400 whose error message repeats the caller's credential headers
)
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key")
HUGE_BODY_BYTES = 9 * 1024 * 1024


@dataclass
class Request:
    """One decoded API call, as the reply function sees it."""

    kind: str  # "openai" or "anthropic"
    body: dict[str, Any]
    sample: int = 0  # which of the request's n samples is being produced

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, str]]:
        """The conversation with any Anthropic top-level `system` folded in as a first message."""
        msgs = [dict(m) for m in self.body.get("messages", []) if isinstance(m, dict)]
        system = self.body.get("system")
        if isinstance(system, list):  # Anthropic also accepts a list of text blocks
            system = "".join(b.get("text", "") for b in system if isinstance(b, dict))
        if system:
            msgs.insert(0, {"role": "system", "content": system})
        for m in msgs:
            if isinstance(m.get("content"), list):
                m["content"] = "".join(b.get("text", "") for b in m["content"] if isinstance(b, dict))
        return msgs

    @property
    def last_user(self) -> str:
        return next((m["content"] for m in reversed(self.messages) if m.get("role") == "user"), "")


@dataclass
class RawReply:
    """An exact HTTP response for a reply function that wants to script the wire itself."""

    status: int = 200
    body: bytes | str | dict | list = b""
    headers: dict[str, str] = field(default_factory=dict)


ReplyFn = Callable[[Request], "str | RawReply"]


def echo_reply(request: Request) -> str:
    """Default reply: the last user message back."""
    return request.last_user


@dataclass
class Faults:
    """Per-request fault probabilities (drawn independently of the reply, from a seeded RNG)."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_timeout: float = 0.0  # hold the request `hold_s` seconds, then drop it unanswered
    rate_disconnect: float = 0.0  # close the connection without a response
    rate_malformed: float = 0.0  # a 200 with a truncated or non-JSON body
    rate_hostile: float = 0.0  # a well-framed but hostile body, kind drawn from `hostile_kinds`
    hostile_kinds: tuple[str, ...] = HOSTILE_KINDS
    retry_after: str | None = "0"  # Retry-After header sent with 429 (None: no header)
    hold_s: float = 30.0

    @classmethod
    def injected(cls, rate: float, **kw: Any) -> "Faults":
        """`rate` of all requests fail, split evenly over 429, 500 and timeouts."""
        return cls(rate_429=rate / 3, rate_500=rate / 3, rate_timeout=rate / 3, **kw)

    @classmethod
    def parse(cls, spec: str, **kw: Any) -> "Faults":
        """From a command line: `429=0.1,500=0.1,timeout=0.1,hostile=0.05,hold=2`."""
        names = {"429": "rate_429", "500": "rate_500", "timeout": "rate_timeout",
                 "disconnect": "rate_disconnect", "malformed": "rate_malformed",
                 "hostile": "rate_hostile", "hold": "hold_s"}
        values: dict[str, Any] = dict(kw)
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, _, value = part.partition("=")
            if key not in names:
                raise ValueError(f"unknown fault {key!r} (known: {', '.join(names)})")
            values[names[key]] = float(value)
        return cls(**values)

    def __post_init__(self) -> None:
        total = (self.rate_429 + self.rate_500 + self.rate_timeout + self.rate_disconnect
                 + self.rate_malformed + self.rate_hostile)
        if total > 1 + 1e-9:
            raise ValueError(f"fault rates add up to {total:.3f} > 1")
        unknown = set(self.hostile_kinds) - set(HOSTILE_KINDS)
        if unknown:
            raise ValueError(f"unknown hostile kind(s): {', '.join(sorted(unknown))}")

    def draw(self, rng: random.Random) -> str | None:
        u = rng.random()
        for name, rate in (("429", self.rate_429), ("500", self.rate_500),
                           ("timeout", self.rate_timeout), ("disconnect", self.rate_disconnect),
                           ("malformed", self.rate_malformed), ("hostile", self.rate_hostile)):
            if u < rate:
                return name
            u -= rate
        return None


def _words(text: str) -> int:
    return len(text.split())


class _Drop(Exception):
    """Close the connection without answering."""


class FakeServer:
    """The server, run in a background thread with its own event loop."""

    def __init__(
        self,
        reply: ReplyFn = echo_reply,
        *,
        latency_s: float = 0.0,
        faults: Faults | None = None,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        lifetime_s: float = 600.0,
    ) -> None:
        self.reply = reply
        self.latency_s = latency_s
        self.faults = faults or Faults()
        self.host, self.port = host, port
        self.lifetime_s = lifetime_s
        self.stats: Counter[str] = Counter()
        self.credentials_seen: Counter[str] = Counter()  # header names only, never values
        self.bodies: deque[dict[str, Any]] = deque(maxlen=64)  # the latest decoded requests
        self.in_flight = 0
        self.max_in_flight = 0
        self._connections: set[asyncio.Task] = set()
        self._rng = random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._error: BaseException | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """What the OpenAI convention calls base_url (the client appends /chat/completions)."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """What the Anthropic convention calls base_url (the client appends /v1/messages)."""
        return self.url

    def start(self) -> "FakeServer":
        self._thread = threading.Thread(target=self._run_thread, name="fake-llm-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error is not None:
            raise RuntimeError(f"fake server failed to start: {self._error}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopped is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(10)

    def stop_soon(self) -> None:
        """Stop from inside the server's own event loop."""
        if self._stopped is not None:
            self._stopped.set()

    def __enter__(self) -> "FakeServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _run_thread(self) -> None:
        try:
            asyncio.run(self.serve())
        except BaseException as e:  # surfaced by start()
            self._error = e
            self._ready.set()

    async def serve(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until stopped or `lifetime_s` has passed."""
        self._loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        server = await asyncio.start_server(self._handle, self.host, self.port, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        if on_ready:
            on_ready()
        async with server:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), self.lifetime_s)
            server.close()
            # Held ("timeout") requests and idle keep-alive connections must not outlive us.
            for task in list(self._connections):
                task.cancel()

    # -- HTTP ----------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path = (lines[0].split(" ") + ["", ""])[:2]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = headers.get("content-length", "0") or "0"
                if not length.isdigit():
                    return
                body = await reader.readexactly(int(length))
                try:
                    status, payload, extra = await self._respond(method, path.split("?")[0], headers, body)
                except _Drop:
                    return
                reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
                          429: "Too Many Requests", 500: "Internal Server Error",
                          529: "Overloaded"}.get(status, "Status")
                ctype = extra.pop("content-type", "application/json")
                head_out = [f"HTTP/1.1 {status} {reason}", f"content-type: {ctype}",
                            f"content-length: {len(payload)}"]
                head_out += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(head_out) + "\r\n\r\n").encode("latin-1") + payload)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return  # a dropped client, or the server stopping while a request is held
        finally:
            writer.close()
            if task is not None:
                self._connections.discard(task)

    async def _respond(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes, dict[str, str]]:
        if path == HEALTH_PATH and method == "GET":  # ready, as `vllm serve` says it
            return 200, b"{}", {}
        if path not in (OPENAI_PATH, ANTHROPIC_PATH):
            self.stats["not_found"] += 1
            return 404, _json({"error": {"message": f"no route {path}"}}), {}
        if method != "POST":
            return 405, _json({"error": {"message": "use POST"}}), {}
        kind = "openai" if path == OPENAI_PATH else "anthropic"
        self.stats["requests"] += 1
        for name in _CREDENTIAL_HEADERS:
            if headers.get(name):
                self.credentials_seen[name] += 1
        try:
            data = json.loads(body)
            if not isinstance(data, dict):
                raise ValueError("body is not an object")
        except ValueError as e:
            self.stats["bad_request"] += 1
            return 400, _error(kind, "invalid_request_error", f"invalid JSON body: {e}"), {}

        self.bodies.append(data)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(kind, data, headers)
        finally:
            self.in_flight -= 1

    async def _answer(self, kind: str, data: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        fault = self.faults.draw(self._rng)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if fault is not None:
            self.stats[fault] += 1
        if fault == "429":
            extra = {"retry-after": self.faults.retry_after} if self.faults.retry_after is not None else {}
            return 429, _error(kind, "rate_limit_error", "slow down"), extra
        if fault == "500":
            return (500 if kind == "openai" else 529), _error(kind, "api_error", "internal error"), {}
        if fault == "timeout":
            await asyncio.sleep(self.faults.hold_s)
            raise _Drop
        if fault == "disconnect":
            raise _Drop
        if fault == "hostile":
            hostile = self._rng.choice(self.faults.hostile_kinds)
            self.stats[f"hostile:{hostile}"] += 1
            return _hostile(hostile, kind, headers)

        n = int(data.get("n", 1) or 1) if kind == "openai" else 1
        texts = []
        for i in range(n):
            try:
                out = self.reply(Request(kind=kind, body=data, sample=i))
            except Exception as e:  # a broken reply script shows up as a 500 naming the error
                self.stats["reply_error"] += 1
                return 500, _error(kind, "api_error", f"reply function raised {e!r}"), {}
            if isinstance(out, RawReply):
                self.stats[f"raw:{out.status}"] += 1
                payload = out.body if isinstance(out.body, bytes) else (
                    out.body.encode() if isinstance(out.body, str) else _json(out.body))
                return out.status, payload, {k.lower(): v for k, v in out.headers.items()}
            texts.append(str(out))
        self.stats["ok"] += 1
        payload = _completion(kind, data, texts)
        if fault == "malformed":
            payload = payload[: len(payload) // 2] if self._rng.random() < 0.5 else b"upstream said: ok"
        return 200, payload, {}


def _json(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def _error(kind: str, etype: str, message: str) -> bytes:
    if kind == "anthropic":
        return _json({"type": "error", "error": {"type": etype, "message": message}})
    return _json({"error": {"type": etype, "message": message, "code": None}})


def _cut(text: str, limit: Any) -> tuple[str, bool]:
    """A reply cut at the request's token limit (a word is a token here), as a server cuts it."""
    words = text.split(" ")
    if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit < _words(text):
        kept, seen = [], 0
        for w in words:
            seen += bool(w.split())
            if seen > limit:
                break
            kept.append(w)
        return " ".join(kept), True
    return text, False


def _completion(kind: str, data: dict[str, Any], texts: list[str]) -> bytes:
    prompt_tokens = sum(_words(str(m.get("content", ""))) for m in data.get("messages", [])
                        if isinstance(m, dict)) + _words(str(data.get("system", "")))
    limit = data.get("max_tokens", data.get("max_completion_tokens"))
    cut = [_cut(t, limit) for t in texts]
    texts = [t for t, _ in cut]
    out_tokens = sum(_words(t) for t in texts)
    if kind == "anthropic":
        return _json({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": data.get("model", ""),
            "content": [{"type": "text", "text": texts[0]}],
            "stop_reason": "max_tokens" if cut[0][1] else "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": prompt_tokens, "output_tokens": out_tokens},
        })
    return _json({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": data.get("model", ""),
        "choices": [{"index": i, "message": {"role": "assistant", "content": t},
                     "finish_reason": "length" if was_cut else "stop"}
                    for i, (t, was_cut) in enumerate(cut)],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": out_tokens,
                  "total_tokens": prompt_tokens + out_tokens},
    })


def _hostile(name: str, kind: str, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
    creds = " ".join(f"{k}={headers[k]}" for k in _CREDENTIAL_HEADERS if k in headers)
    if name == "wrong_types":
        body = {"choices": "none", "usage": "many"} if kind == "openai" else {"content": 5, "usage": []}
        return 200, _json(body), {}
    if name == "empty_choices":
        return 200, _json({"choices": [], "usage": {}} if kind == "openai" else {"content": [], "usage": {}}), {}
    if name == "null_content":
        if kind == "openai":
            return 200, _json({"choices": [{"index": 0, "message": {"role": "assistant", "content": None}}]}), {}
        return 200, _json({"content": [{"type": "text", "text": None}]}), {}
    if name == "deep_nesting":
        return 200, b"[" * 200_000 + b"]" * 200_000, {}
    if name == "huge":
        text = "A" * HUGE_BODY_BYTES
        return 200, _completion(kind, {}, [text]), {}
    if name == "non_utf8":
        return 200, b'{"choices": [{"message": {"content": "\xff\xfe\xfa"}}]}', {}
    if name == "html":
        return 200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", {"content-type": "text/html"}
    if name == "echo_auth":
        return 200, _completion(kind, {}, [f"I saw your credentials: {creds}"]), {}
    if name == "error_echo_auth":
        return 400, _error(kind, "invalid_request_error", f"rejected credentials {creds}"), {}
    raise ValueError(name)


# -- subprocess mode ---------------------------------------------------------------------------
def load_reply(spec: str) -> ReplyFn:
    """`module:function` -> the function (the subprocess's way of receiving a reply script)."""
    module, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"reply must look like module:function, got {spec!r}")
    return getattr(importlib.import_module(module), attr)


@contextlib.contextmanager
def spawn(
    *,
    reply: str | None = None,
    latency_s: float = 0.0,
    faults: str = "",
    seed: int = 0,
    lifetime_s: float = 600.0,
    env: dict[str, str] | None = None,
) -> Iterator[str]:
    """Run the server in its own process (its own core and GIL: the benchmark needs that) and
    yield its root URL; the process is stopped on exit."""
    cmd = [sys.executable, "-m", "eval.backends.fake_server", "--latency", str(latency_s),
           "--seed", str(seed), "--lifetime", str(lifetime_s)]
    if reply:
        cmd += ["--reply", reply]
    if faults:
        cmd += ["--faults", faults]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("READY "):
            raise RuntimeError(f"fake server did not start (said {line!r})")
        yield line.split()[1]
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m eval.backends.fake_server", description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    p.add_argument("--faults", default="", help="e.g. 429=0.1,500=0.1,timeout=0.1,hold=2")
    p.add_argument("--reply", default=None, help="module:function returning the reply text (default: echo)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lifetime", type=float, default=600.0, help="stop after this many seconds")
    args = p.parse_args(argv)
    try:
        server = FakeServer(load_reply(args.reply) if args.reply else echo_reply, latency_s=args.latency,
                            faults=Faults.parse(args.faults), seed=args.seed, port=args.port,
                            lifetime_s=args.lifetime)
    except (ValueError, ImportError, AttributeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    parent = os.getppid()

    async def run() -> None:
        async def orphan_watch() -> None:
            while os.getppid() == parent:
                await asyncio.sleep(1.0)
            server.stop_soon()

        task = None

        def ready() -> None:
            nonlocal task
            print(f"READY {server.url}", flush=True)
            task = asyncio.get_running_loop().create_task(orphan_watch())

        await server.serve(on_ready=ready)

    asyncio.run(run())
    return 0

if __name__ == "__main__":
    sys.exit(main())
