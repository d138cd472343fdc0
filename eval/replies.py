"""Whether a model's reply can be data at all, before anyone parses it.

A request that failed, an empty reply, a reply cut off at the token limit and a refusal never
become rows, however well their text parses: a cut-off story can still read as a story, and "I'm
sorry, but I can't write that" can still be quoted back as a context. Every command that writes
data from model replies (contexts, infill, ToM-Synth's generate and filter) asks `problem` first
and counts the answers by these slugs, so its summary says how many replies were refused or
truncated apart from those that were malformed.
"""
from __future__ import annotations

import re

from eval.backends.base import Completion

# How instruct models open a refusal. Only the opening is read: a story may quote someone
# saying sorry, a reply that starts by declining is a refusal whatever follows.
_REFUSAL = re.compile(
    r"^[\W_]*(?:i'?m sorry|i am sorry|sorry, (?:but )?i|i apologi[sz]e|my apologies|"
    r"i (?:can ?not|can't|won't|will not|am unable to|am not able to|'m unable to|'m not able to)"
    r" (?:help|assist|provide|create|write|generate|comply|fulfil|complete|do that|answer|produce)|"
    r"as an ai\b)", re.IGNORECASE)

PROBLEMS = ("request_failed", "empty", "truncated", "refused")


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.match(text.lstrip()[:200].replace("\u2019", "'")))


def text_problem(text: str | None, finish_reason: str = "") -> str | None:
    """The problem of one reply text (None when it may be parsed): `empty`, `truncated`
    (finish reason "length") or `refused` (the provider's refusal or a refusing opening)."""
    if not isinstance(text, str) or not text.strip():
        return "empty"
    if finish_reason == "length":
        return "truncated"
    if finish_reason in ("refusal", "content_filter") or is_refusal(text):
        return "refused"
    return None


def problem(completion: Completion, index: int = 0) -> str | None:
    """`request_failed`, or the `text_problem` of the completion's `index`-th text."""
    if not completion.ok:
        return "request_failed"
    if index >= len(completion.texts):
        return "empty"
    return text_problem(completion.texts[index], completion.finish_reason(index))
