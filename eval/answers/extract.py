"""Format and extraction: whether a completion is one think block then one answer block
(`check_format`), and which text of it is the answer (`extract_answer`, rules 1-3 of the
package docstring)."""
from __future__ import annotations

import re
from typing import Sequence

from eval.answers.limits import (
    FALLBACK_WINDOW,
    MAX_ANSWER_BLOCKS,
    MAX_ANSWER_CHARS,
    SHORT_REPLY_CHARS,
)
from eval.answers.text import LETTERS, normalize, squash


_THINK_OPEN, _THINK_CLOSE = "<think>", "</think>"
_ANSWER_OPEN, _ANSWER_CLOSE = "<answer>", "</answer>"
_TAGS = (_THINK_OPEN, _THINK_CLOSE, _ANSWER_OPEN, _ANSWER_CLOSE)


def tagged(answer: str, think: str = "", sep: str = "") -> str:
    """A reply in the tagged format this module reads: `<think>THINK</think>SEP<answer>ANSWER</answer>`
    (what SFT teaches and what the tests write)."""
    return f"{_THINK_OPEN}{think}{_THINK_CLOSE}{sep}{_ANSWER_OPEN}{answer}{_ANSWER_CLOSE}"

# Lower-cases ASCII only, so indices in the lowered text are indices in the original text
# (str.lower can change the length of some non-ASCII strings).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def check_format(completion: str) -> bool:
    """True iff the completion is `<think>...</think>` then `<answer>...</answer>` with only
    whitespace around and between them, each tag exactly once, and a non-empty answer."""
    if not isinstance(completion, str):
        return False
    if any(completion.count(tag) != 1 for tag in _TAGS):
        return False
    t0, t1 = completion.find(_THINK_OPEN), completion.find(_THINK_CLOSE)
    a0, a1 = completion.find(_ANSWER_OPEN), completion.find(_ANSWER_CLOSE)
    if not (t0 < t1 < a0 < a1):
        return False
    outside = (
        completion[:t0],
        completion[t1 + len(_THINK_CLOSE) : a0],
        completion[a1 + len(_ANSWER_CLOSE) :],
    )
    if any(part.strip() for part in outside):
        return False
    return bool(completion[a0 + len(_ANSWER_OPEN) : a1].strip())


def extract_answer(completion: str, *, fallback: bool = True,
                   choices: Sequence[str] | None = None) -> str | None:
    """The answer text of a completion whatever its answer type (see the `eval.answers`
    docstring for the rules), or None. `choices` (the options of a multiple-choice question)
    enables the last fallback: a long untagged reply that starts with an option label.
    `read_answer` is the reading that knows the answer type."""
    tagged, state = tagged_answer(completion)
    if tagged is not None or not fallback or state == THINKING:
        return tagged
    tail = untagged_reply(completion)
    marked = marked_answer(tail)
    if marked is not None:
        return marked
    if state == UNCLOSED:
        return None
    rest = tail.strip()
    if rest and len(rest) <= SHORT_REPLY_CHARS and _whole_reply_fits(completion):
        return rest
    if choices:
        return _labelled_reply(_after_think(completion), choices)
    return None


# what `tagged_answer` found besides an answer
TAGGED, THINKING, UNCLOSED, UNTAGGED = "tagged", "thinking", "unclosed", "untagged"


def tagged_answer(completion: str) -> tuple[str | None, str]:
    """The content of the answer blocks after the last `</think>` (several different ones
    joined by newlines, so the comparison sees several answers), and what was found:
    `TAGGED`, `THINKING` (a `<think>` never closed: no answer was given), `UNCLOSED` (an
    `<answer>` never closed) or `UNTAGGED`."""
    if not isinstance(completion, str) or not completion:
        return None, UNTAGGED
    low = completion.translate(_ASCII_LOWER)
    close = low.rfind(_THINK_CLOSE)
    if close >= 0:
        start = close + len(_THINK_CLOSE)
    elif low.find(_THINK_OPEN) >= 0 and low.find(_ANSWER_OPEN) < 0:
        return None, THINKING  # still thinking when it stopped: no answer was given
    else:
        start = 0
    blocks, unclosed = _answer_blocks(completion, low, start)
    if not blocks:
        return None, UNCLOSED if unclosed is not None else UNTAGGED
    distinct: list[str] = []
    seen: set[str] = set()
    for b in blocks:
        key = _block_key(b[:MAX_ANSWER_CHARS + 1])
        if key not in seen:
            seen.add(key)
            distinct.append(b)
    return (_unbox(distinct[0]) if len(distinct) == 1 else "\n".join(distinct)), TAGGED


def think_text(completion: str) -> str | None:
    """The reasoning of the first closed `<think>...</think>` block, stripped; None when the
    completion has none (the trace reward checks this text as a derivation)."""
    start = completion.find(_THINK_OPEN)
    end = completion.find(_THINK_CLOSE, start + len(_THINK_OPEN)) if start >= 0 else -1
    return completion[start + len(_THINK_OPEN):end].strip() if end >= 0 else None


def _after_think(completion: str) -> str:
    close = completion.translate(_ASCII_LOWER).rfind(_THINK_CLOSE)
    return completion[close + len(_THINK_CLOSE):] if close >= 0 else completion


def _whole_reply_fits(completion: str) -> bool:
    return len(_after_think(completion)) <= FALLBACK_WINDOW


def untagged_reply(completion: str) -> str:
    """What an untagged reply says after its reasoning: the text after the last `</think>`,
    its last `FALLBACK_WINDOW` characters, with stray think tags blanked."""
    rest = _after_think(completion)
    return re.sub(r"(?i)</?think>", " ", rest[max(0, len(rest) - FALLBACK_WINDOW):])


def marked_answer(reply: str) -> str | None:
    """An answer the reply marks as such: the last "answer: X" / "the answer is X" line, else the
    last `\\boxed{X}`, else the text after an unclosed `<answer>`."""
    statements = answer_statements(reply)
    if statements:
        return _unbox(statements[-1])
    boxed = _last_boxed(reply)
    if boxed is not None and boxed.strip():
        return boxed.strip()
    low = reply.translate(_ASCII_LOWER)
    a0 = low.rfind(_ANSWER_OPEN)
    if a0 >= 0 and low.find(_ANSWER_CLOSE, a0) < 0:
        unclosed = reply[a0 + len(_ANSWER_OPEN):].strip()
        if unclosed:
            return unclosed[:MAX_ANSWER_CHARS + 1]
    return None


# an option label opening a reply: "B. ", "B) ", "(B) ", "[B] ", "B: "
_OPTION_LABEL = re.compile(r"\s*(?:[\(\[]([A-Z])[\)\]]|([A-Z])[.)：:])[ \t]*(?=\S)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _labelled_reply(reply: str, choices: Sequence[str]) -> str | None:
    """A multiple-choice reply without tags, too long for the short-reply fallback: when it
    opens with an option label ("B. <long option text>") its first paragraph is the answer (the
    comparison then checks that the paragraph names no other option); when the whole reply is
    one option's text, that text is."""
    m = _OPTION_LABEL.match(reply)
    if m and LETTERS.index(m.group(1) or m.group(2)) < len(choices):
        return _PARAGRAPH_BREAK.split(reply.strip(), maxsplit=1)[0][:MAX_ANSWER_CHARS + 1]
    whole = squash(reply[:MAX_ANSWER_CHARS + 1])
    if any(isinstance(c, str) and squash(c) == whole for c in choices):
        return reply.strip()
    return None


_SIGNS = frozenset("+-−*/^=<>±√")


def _block_key(block: str) -> str:
    """Answer blocks with the same key are one answer: `B` and `B.`, `basket` and `the basket`;
    signs and operators are kept, so `-42` and `42` are two answers."""
    return normalize(block) + "|" + "".join(c for c in block if c in _SIGNS)


def _answer_blocks(text: str, low: str, start: int) -> tuple[list[str], str | None]:
    """Contents of `<answer>...</answer>` blocks at or after `start` (tags in any case), and the
    text after a final unclosed `<answer>` if there is one."""
    blocks: list[str] = []
    pos = start
    while len(blocks) < MAX_ANSWER_BLOCKS:
        a0 = low.find(_ANSWER_OPEN, pos)
        if a0 < 0:
            return blocks, None
        a1 = low.find(_ANSWER_CLOSE, a0)
        if a1 < 0:
            return blocks, text[a0 + len(_ANSWER_OPEN) :]
        content = text[a0 + len(_ANSWER_OPEN) : a1]
        # a nested opening tag means the first one was never closed: keep the innermost
        inner = low.rfind(_ANSWER_OPEN, a0 + 1, a1)
        if inner >= 0:
            content = text[inner + len(_ANSWER_OPEN) : a1]
        blocks.append(content.strip())
        pos = a1 + len(_ANSWER_CLOSE)
    return blocks, None


_ANSWER_CUE = re.compile(r"(?i)\b(?:final\s+answer|correct\s+answer|answer)\s*(?:is|:|：|-)\s*(?:[:：]\s*)?")


def answer_statements(text: str) -> list[str]:
    """Every answer the text states ("The answer is B. ... The correct answer is C."), each up to
    the next statement or the end of its line."""
    cues = list(_ANSWER_CUE.finditer(text))
    out = []
    for k, m in enumerate(cues):
        end = cues[k + 1].start() if k + 1 < len(cues) else len(text)
        said = text[m.end():end].split("\n", 1)[0].strip().rstrip(".").strip()
        if said:
            out.append(said)
    return out


def _unbox(text: str) -> str:
    """`\\boxed{X}` -> `X` when the box holds the whole answer."""
    t = text.strip()
    if t.startswith(("\\boxed{", "\\fbox{")) and t.endswith("}"):
        inner = _last_boxed(t)
        if inner is not None and t.endswith(inner + "}") and t.index("{") + 1 + len(inner) + 1 == len(t):
            return inner.strip()
    return text


def _last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` with balanced braces, if any."""
    i = max(text.rfind("\\boxed{"), text.rfind("\\fbox{"))
    if i < 0:
        return None
    j = text.index("{", i) + 1
    depth = 1
    for k in range(j, len(text)):
        c = text[k]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[j:k]
    return None
