"""Items and the pure parts of the quality filter (paper, section 3.3).

- Stage 1, `check_reply`: a generator reply -> an `Item`, or the reason it fails the format and
  consistency check (schema, exactly 4 distinct non-empty options, a valid answer letter, length
  limits, at most 4 characters, the answer not stated verbatim in the text, no control characters,
  no tags or instructions aimed at later models).
- Stage 2, `balance`: re-order options so the correct letter is uniform over A-D, and
  `length_bias`: how often the correct option is the longest or the shortest.
- Stage 3 helpers: `parse_verdict` reads the verifier's JSON reply.

Replies are untrusted text: every parser here returns a reason instead of raising, whatever the
input (deep nesting, huge strings, wrong types, binary junk).
"""
from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tomsynth.config import FilterSpec
from tomsynth.prompts import LETTERS
from tomsynth.units import Unit, character_names

JUDGMENTS = ("PASS", "AMBIGUOUS", "FALSE", "OTHER")

_FENCE = re.compile(r"^\s*```[a-zA-Z]*\s*\n?(.*?)\n?\s*```\s*$", re.S)
_LETTER = re.compile(r"^\s*(?:option\s+)?\(?([A-Da-d])\)?[.)]?\s*$", re.I)
_OPTION_PREFIX = re.compile(r"^\s*\(?[A-Da-d][.):]\s+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPEAKER_LINE = re.compile(r"^\s*[A-Z][^\n:]{0,60}:\s*\S", re.M)
# Tags the RL reward parses, or markup and instructions addressed to a model reading the item.
_RESERVED = re.compile(r"<\s*/?\s*(think|answer|script|iframe|system)\b", re.I)
_INJECTION = re.compile(
    r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules)"
    r"|\"?judgment\"?\s*:\s*\"?(?:PASS|AMBIGUOUS|FALSE|OTHER)\b"
    r"|you are (?:now )?(?:a|an) (?:evaluator|verifier|assistant) that", re.I)
_TEXT_KEYS = ("narrative", "dialogue", "story", "text", "scenario", "conversation")


@dataclass
class Item:
    """One multiple-choice item of one unit."""

    entry_id: str
    unit: str
    collection: str
    k: int
    format: str  # "Narrative" / "Dialogue"
    text: str
    question: str
    options: list[str]
    answer: str  # letter
    analysis: str
    repairs: list[str] = field(default_factory=list)  # normalisations stage 1 applied
    original_options: list[str] | None = None  # before stage 2 (the analysis refers to these)
    original_answer: str | None = None

    def content_hash(self) -> str:
        """Identifies what the verifier judges (text, question, options in order, answer)."""
        blob = json.dumps([self.text, self.question, self.options, self.answer], ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Item":
        return cls(**d)


class Rejected(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def extract_json(reply: str, repairs: list[str] | None = None) -> Any:
    """The JSON value in a model reply: the whole reply, a fenced block, or the first object or
    array embedded in prose. Raises Rejected('not_json') when there is none."""
    repairs = repairs if repairs is not None else []
    text = reply.strip()
    m = _FENCE.match(text)
    if m:
        text = m.group(1).strip()
        repairs.append("code_fence")
    try:
        return json.loads(text)
    except RecursionError:
        raise Rejected("not_json") from None
    except ValueError:
        pass
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise Rejected("not_json")
    try:
        value, _ = json.JSONDecoder().raw_decode(text, min(starts))
    except (ValueError, RecursionError):
        raise Rejected("not_json") from None
    repairs.append("surrounding_text")
    return value


def _norm(s: str) -> str:
    return " ".join(s.casefold().split()).strip(" .,;:!?\"'")


def _string(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        raise Rejected(f"missing_{key}")
    if not isinstance(value, str):
        raise Rejected("wrong_type")
    return value.strip()


def _options(value: Any, repairs: list[str]) -> list[str]:
    if value is None:
        raise Rejected("missing_options")
    if isinstance(value, dict):
        keyed: dict[str, Any] = {}
        for key, text in value.items():
            m = _LETTER.match(str(key))
            if not m or m.group(1).upper() in keyed:
                raise Rejected("options_not_four")
            keyed[m.group(1).upper()] = text
        if sorted(keyed) != list(LETTERS):
            raise Rejected("options_not_four")
        raw = [keyed[letter] for letter in LETTERS]
    elif isinstance(value, list):
        if len(value) != 4:
            raise Rejected("options_not_four")
        raw = value
        if all(isinstance(o, str) and _OPTION_PREFIX.match(o) for o in raw):
            raw = [_OPTION_PREFIX.sub("", o, count=1) for o in raw]
            repairs.append("option_prefixes")
    else:
        raise Rejected("wrong_type")
    if not all(isinstance(o, str) for o in raw):
        raise Rejected("wrong_type")
    options = [" ".join(o.split()) for o in raw]
    if any(not o for o in options):
        raise Rejected("empty_option")
    if len({_norm(o) for o in options}) != 4:
        raise Rejected("duplicate_options")
    return options


def check_reply(reply: str, unit: Unit, k: int, limits: FilterSpec = FilterSpec()) -> Item:
    """Stage 1 for one generator reply: the Item, or Rejected(reason)."""
    if len(reply) > limits.max_reply_chars:
        raise Rejected("reply_too_long")
    repairs: list[str] = []
    data = extract_json(reply, repairs)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
        repairs.append("list_wrapped")
    if not isinstance(data, dict):
        raise Rejected("not_an_object")
    lowered = {str(key).strip().lower(): v for key, v in data.items()}
    if any(str(key) != str(key).strip().lower() for key in data):
        repairs.append("key_case")
    data = lowered

    fmt_key = unit.format.field
    text_key = next((key for key in (fmt_key, *_TEXT_KEYS) if key in data), None)
    if text_key is None:
        raise Rejected("missing_text")
    text = _string(data, text_key)
    question = _string(data, "question")
    options = _options(data.get("options"), repairs)
    answer_raw = data.get("answer")
    if answer_raw is None:
        raise Rejected("missing_answer")
    m = _LETTER.match(str(answer_raw)) if isinstance(answer_raw, str) else None
    if not m:
        raise Rejected("bad_answer_letter")
    answer = m.group(1).upper()
    if answer_raw != answer:
        repairs.append("answer_letter")
    analysis = _string(data, "analysis")

    every = [text, question, analysis, *options]
    if any(_CONTROL.search(s) for s in every):
        raise Rejected("control_characters")
    if any(_RESERVED.search(s) for s in every):
        raise Rejected("reserved_tag")
    if any(_INJECTION.search(s) for s in every):
        raise Rejected("suspected_injection")
    if len(text) > limits.max_text_chars:
        raise Rejected("text_too_long")
    if len(text) < limits.min_text_chars:
        raise Rejected("text_too_short")
    if not question or len(question) > limits.max_question_chars:
        raise Rejected("question_length")
    if any(len(o) > limits.max_option_chars for o in options):
        raise Rejected("option_too_long")
    if unit.format.key == "dialogue" and len(_SPEAKER_LINE.findall(text)) < 2:
        raise Rejected("not_a_dialogue")
    if count_characters(text) > limits.max_characters:
        raise Rejected("too_many_characters")
    correct = _norm(options[LETTERS.index(answer)])
    if len(correct.split()) >= limits.verbatim_min_words and correct in _norm(text):
        raise Rejected("answer_in_text")
    return Item(entry_id=unit.entry_id(k), unit=unit.id, collection=unit.collection, k=k,
                format=unit.format.name, text=text, question=question, options=options,
                answer=answer, analysis=analysis, repairs=repairs)


_NAME_RE: re.Pattern[str] | None = None


def count_characters(text: str) -> int:
    """How many different names of the character list occur in the text (as capitalised words)."""
    global _NAME_RE
    if _NAME_RE is None:
        _NAME_RE = re.compile(r"\b(" + "|".join(map(re.escape, character_names())) + r")\b")
    return len(set(_NAME_RE.findall(text)))


# -- stage 2 ---------------------------------------------------------------------------------------
def target_letter(unit_id: str, k: int) -> str:
    """Where entry k of a unit puts its correct option: each block of 4 entries of a unit uses
    every letter once, in an order drawn from the unit id. Uniform over A-D, independent of
    which other entries exist (so re-running the filter never moves an entry's answer)."""
    seed = int(hashlib.sha256(f"{unit_id}/{k // 4}".encode()).hexdigest()[:16], 16)
    order = list(LETTERS)
    random.Random(seed).shuffle(order)
    return order[k % 4]


def balance(item: Item) -> Item:
    """Move the correct option to `target_letter`, keeping the distractors' relative order."""
    target = target_letter(item.unit, item.k)
    correct = item.options[LETTERS.index(item.answer)]
    others = [o for i, o in enumerate(item.options) if LETTERS[i] != item.answer]
    others.insert(LETTERS.index(target), correct)
    return replace(item, options=others, answer=target, original_options=list(item.options),
                   original_answer=item.answer)


def letter_distribution(items: list[Item]) -> dict[str, int]:
    counts = Counter(i.answer for i in items)
    return {letter: counts.get(letter, 0) for letter in LETTERS}


def length_bias(items: list[Item]) -> dict[str, Any]:
    """How often the correct option is strictly the longest / the shortest (chance: 25%), and
    mean lengths in characters."""
    longest = shortest = 0
    correct_len: list[int] = []
    other_len: list[int] = []
    for it in items:
        lens = [len(o) for o in it.options]
        c = lens[LETTERS.index(it.answer)]
        rest = [n for i, n in enumerate(lens) if LETTERS[i] != it.answer]
        longest += c > max(rest)
        shortest += c < min(rest)
        correct_len.append(c)
        other_len += rest
    n = len(items)
    return {
        "n": n,
        "correct_longest_rate": round(longest / n, 4) if n else None,
        "correct_shortest_rate": round(shortest / n, 4) if n else None,
        "chance_rate": 0.25,
        "mean_correct_chars": round(sum(correct_len) / n, 1) if n else None,
        "mean_distractor_chars": round(sum(other_len) / len(other_len), 1) if other_len else None,
    }


# -- stage 3 ---------------------------------------------------------------------------------------
def parse_verdict(reply: str) -> dict[str, Any]:
    """The verifier's judgment: {judgment, correct_answer, reason}; judgment UNPARSEABLE when the
    reply is not the JSON object the prompt asks for."""
    try:
        data = extract_json(reply[:20000])
    except Rejected:
        return {"judgment": "UNPARSEABLE", "correct_answer": None, "reason": "reply is not JSON"}
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        return {"judgment": "UNPARSEABLE", "correct_answer": None, "reason": "reply is not a JSON object"}
    data = {str(k).lower(): v for k, v in data.items()}
    judgment = data.get("judgment")
    judgment = judgment.strip().upper() if isinstance(judgment, str) else ""
    if judgment not in JUDGMENTS:
        return {"judgment": "UNPARSEABLE", "correct_answer": None,
                "reason": f"unknown judgment {str(data.get('judgment'))[:40]!r}"}
    ca = data.get("correct_answer")
    m = _LETTER.match(ca) if isinstance(ca, str) else None
    reason = data.get("reason")
    return {"judgment": judgment, "correct_answer": m.group(1).upper() if m else None,
            "reason": " ".join(reason.split())[:500] if isinstance(reason, str) else ""}
