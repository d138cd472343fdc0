"""Reading structured answers out of LLM replies, for the context sampler and the infiller.

Models wrap JSON in prose or code fences, leave trailing commas, answer with a numbered list
instead of the array asked for, or send nothing at all; a hostile or broken server can send a
megabyte of text or JSON nested deeper than the parser can follow. Every such reply becomes a
`ReplyError` whose `reason` is a short slug (`empty`, `too_long`, `no_json`, `bad_json`,
`wrong_type`, `schema`, and `eval.replies`' `request_failed`, `truncated`, `refused`) so callers
can count failures by kind and go on.
"""
from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from eval.backends.base import Completion
from eval.replies import problem

MAX_REPLY_CHARS = 100_000  # far above any real answer here; beyond it the reply is garbage
MAX_SCAN_STARTS = 64  # candidate '{' / '[' positions tried when the reply is not pure JSON

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_LIST_MARKER = re.compile(r"^\s*(?:\d{1,4}\s*[.):-]|[-*\u2022])\s*")

M = TypeVar("M", bound=BaseModel)


class StrictReply(BaseModel):
    """Base of the reply schemas: no type coercion ("yes" is not a bool), unknown keys ignored."""

    model_config = ConfigDict(strict=True, extra="ignore")


class ReplyError(ValueError):
    """A reply that cannot be used; `reason` is a slug to count by, the message says why."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def one_line(text: str) -> str:
    """A reply's text on one line, single-spaced: how names, phrases and reasons are stored."""
    return " ".join(text.split())


def completion_text(completion: Completion, index: int = 0) -> str:
    """The `index`-th text of a completion; ReplyError if the request failed, or the text is
    empty, cut off at the token limit or a refusal (`eval.replies`)."""
    found = problem(completion, index)
    if found == "request_failed":
        raise ReplyError(found, str(completion.error)[:300])
    if found:
        detail = {"empty": "the completion has no text",
                  "truncated": f"cut off at the token limit after {completion.completion_tokens} tokens",
                  "refused": one_line(completion.texts[index])[:120]}[found]
        raise ReplyError(found, detail)
    return completion.texts[index]


def _check_size(text: Any, max_chars: int) -> str:
    if not isinstance(text, str):
        raise ReplyError("wrong_type", f"reply is {type(text).__name__}, not text")
    if not text.strip():
        raise ReplyError("empty", "the reply is empty")
    if len(text) > max_chars:
        raise ReplyError("too_long", f"{len(text)} characters (limit {max_chars})")
    return text.strip()


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _scan(text: str, expect: tuple[type, ...]) -> tuple[bool, Any]:
    """The first JSON value of an expected type embedded in `text` (prose around it allowed)."""
    decoder = json.JSONDecoder()
    first_found: tuple[bool, Any] = (False, None)
    starts = [m.start() for m in re.finditer(r"[{\[]", text)][:MAX_SCAN_STARTS]
    for start in starts:
        for candidate in (text[start:], _TRAILING_COMMA.sub(r"\1", text[start:])):
            try:
                value, _ = decoder.raw_decode(candidate)
            except (ValueError, RecursionError):
                continue
            if isinstance(value, expect):
                return True, value
            if not first_found[0]:
                first_found = (True, value)
            break
    return first_found


def parse_json_reply(text: Any, expect: type | tuple[type, ...] = dict,
                     max_chars: int = MAX_REPLY_CHARS) -> Any:
    """The JSON value of the expected type(s) in a reply: pure JSON, fenced, or inside prose."""
    expect = expect if isinstance(expect, tuple) else (expect,)
    body = _check_size(text, max_chars)
    pieces = [m.group(1).strip() for m in _FENCE.finditer(body)] + [body]
    found_other = None
    for piece in pieces:
        for candidate in (piece, _TRAILING_COMMA.sub(r"\1", piece)):
            ok, value = _loads(candidate)
            if ok:
                if isinstance(value, expect):
                    return value
                found_other = value
                break
        ok, value = _scan(piece, expect)
        if ok and isinstance(value, expect):
            return value
        if ok and found_other is None:
            found_other = value
    wanted = " or ".join(t.__name__ for t in expect)
    if found_other is not None:
        raise ReplyError("wrong_type", f"expected a JSON {wanted}, got {type(found_other).__name__}")
    if "{" in body or "[" in body:
        raise ReplyError("bad_json", f"no valid JSON {wanted} in the reply")
    raise ReplyError("no_json", f"no JSON {wanted} in the reply")


def parse_model(model: type[M], text: Any, max_chars: int = MAX_REPLY_CHARS) -> M:
    """A JSON object reply validated against a pydantic model; ReplyError('schema') names the
    first bad field."""
    data = parse_json_reply(text, dict, max_chars)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ReplyError("schema", describe_validation_error(e)) from None


def describe_validation_error(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "reply"
    extra = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
    return f"field {loc}: {err['msg']}{extra}"


def parse_string_list(text: Any, key: str | None = None,
                      max_chars: int = MAX_REPLY_CHARS) -> list[str]:
    """A list of strings from a JSON array, a JSON object holding one (under `key` or its only
    list), or, failing JSON, from numbered or bulleted lines."""
    body = _check_size(text, max_chars)
    try:
        value = parse_json_reply(body, (list, dict), max_chars)
    except ReplyError:
        value = None
    if isinstance(value, dict):
        lists = [v for k, v in value.items() if isinstance(v, list) and (key is None or k == key)]
        value = lists[0] if len(lists) == 1 else None
    if isinstance(value, list):
        items = [v.strip() for v in value if isinstance(v, str) and v.strip()]
        if items:
            return items
        raise ReplyError("wrong_type", "the JSON list holds no strings")
    if value is None and any(c in body for c in "{["):
        # It tried to be JSON and failed: reading its lines would only return its syntax.
        raise ReplyError("bad_json", "no usable JSON list in the reply")
    items = []
    for line in body.splitlines():
        if _LIST_MARKER.match(line):
            item = _LIST_MARKER.sub("", line).strip().strip('"').strip()
            if item:
                items.append(item)
    if not items:
        # One item per line with no markers at all; prose would have long lines.
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        if len(lines) > 1 and all(len(line) <= 80 for line in lines):
            items = lines
    if not items:
        raise ReplyError("no_json", "neither a JSON list nor a numbered list")
    return items
