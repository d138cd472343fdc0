"""What the fake server's reply function sees and may answer (`Request`, `RawReply`), and the
OpenAI and Anthropic response bodies the server wraps its text in (a word is a token here)."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable


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

def _words(text: str) -> int:
    return len(text.split())

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

