"""The fake server's fault plan (`Faults`: which share of requests fail, and how) and the hostile
bodies it may send instead of a reply."""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from eval.backends.fake_server.api import _completion, _error, _json

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
