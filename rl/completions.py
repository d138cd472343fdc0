"""The text of a completion as TRL hands it to reward functions: a string, or for
conversational data a list of `{role, content}` messages; every reward reads it the same way."""
from __future__ import annotations

from typing import Any


def completion_text(completion: Any) -> str:
    """The generated text of a completion: the string itself, or the joined contents of a
    conversational completion (a list of `{role, content}` messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        parts = []
        for message in completion:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):  # multimodal-style content parts
                parts.extend(p.get("text", "") for p in content
                             if isinstance(p, dict) and isinstance(p.get("text"), str))
        return "".join(parts)
    return ""
