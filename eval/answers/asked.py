"""What a question asks for, when a reply names a belief beside the reality: the belief ("Where
will she look for ...?") or the reality ("Where is it really?"), read from its wording."""
from __future__ import annotations

import functools
import re

_ASKS_BELIEF = re.compile(
    r"(?i)\b(?:think|thinks|believe|believes|look|looks|search|searches|expect|expects|"
    r"look\s+for|try\s+to\s+find|go\s+to\s+find)\b")
_ASKS_REALITY = re.compile(
    r"(?i)\b(?:really|actually|in\s+reality|now|currently|(?:at|by)\s+the\s+end)\b")
_PERSPECTIVE = re.compile(r"(?i)\bfrom\s+(?:the\s+)?(\w+)(?:['’]s)?\s+(?:perspective|point\s+of\s+view)")


def _last_question(text: str) -> str | None:
    """The text's last question: from the line break or question mark before its last question
    mark up to that mark (the last match of `[^\\n?]*\\?`, whose search is quadratic in the
    length of a line without a question mark: 18 ms on a Hi-ToM story)."""
    end = text.rfind("?")
    if end < 0:
        return None
    return text[max(text.rfind("\n", 0, end), text.rfind("?", 0, end)) + 1:end + 1]


@functools.lru_cache(maxsize=1024)
def asked_about(question: str | None) -> str | None:
    """What a question asks for when a reply names a belief beside the reality: "belief" for
    "Where will Isabella look for the X?" or "Where does she think the X is?", "reality" for
    "Where is the X really?"; None when its wording does not say (the last question of the text
    is the one asked)."""
    if not isinstance(question, str) or not question.strip():
        return None
    q = _last_question(question[-4000:]) or question[-400:]
    perspective = _PERSPECTIVE.search(q)  # OpenToM: "From Jeremy's perspective, ..."
    if perspective:
        return "reality" if perspective.group(1).lower() == "narrator" else "belief"
    belief, reality = bool(_ASKS_BELIEF.search(q)), bool(_ASKS_REALITY.search(q))
    if belief != reality:
        return "belief" if belief else "reality"
    return None
