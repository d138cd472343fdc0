"""The fake server itself (`FakeServer`): HTTP/1.1 on asyncio streams in a background thread with
its own event loop, routing each request to the reply function or to the fault the plan draws."""
from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
from collections import Counter, deque
from typing import Any, Callable

from eval.backends.fake_server.api import RawReply, ReplyFn, Request, _completion, _error, _json, echo_reply
from eval.backends.fake_server.faults import _CREDENTIAL_HEADERS, Faults, _hostile

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
HEALTH_PATH = "/health"


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

