"""Shared by the parser tests: the options of a false-belief question, a well-formed completion,
and the math cases (math_cases.json: answer, gold, whether the `number` rule must accept it)."""
from __future__ import annotations

import json
from pathlib import Path

from eval import answers

OPTIONS = ["box", "basket", "crate", "bathtub"]

MATH_CASES = json.loads((Path(__file__).parent / "math_cases.json").read_text(encoding="utf-8"))


def tagged(answer: str, think: str = "Sally put it there and left.") -> str:
    """eval.answers.tagged with a trace and a line break, as models write it."""
    return answers.tagged(answer, think, "\n")
