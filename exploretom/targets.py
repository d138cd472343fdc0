"""Target models for the search: who answers the questions, and how answers are scored.

A target answers a whole batch of (story, question) items in one call: the search sends all
questions of all candidate nodes it is scoring at once. `ModelTarget` asks any `eval` backend
(hf, vllm, openai, anthropic) with the paper's prompt; `ReasonerTarget` asks a scripted reasoner.

Scoring modes: `strict` (default) extracts the answer with the project's one answer parser and
compares it after normalisation, so an answer naming several candidates is wrong; `lenient`
is the paper's public code: the expected answer is a substring of the reply (so "no" matches
"know"), kept to compare figures with the paper.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, Sequence

from exploretom.reasoners import get_reasoner
from exploretom.tracker import Tracker

SCORING_MODES = ("strict", "lenient")

SYSTEM_PROMPT = (
    "You read short stories about people moving objects, changing them and talking to each "
    "other, and answer questions about what happened and about what each person believes. "
    "Answer with a short answer only: a room or container name, yes or no, or the phrase the "
    "question offers."
)


@dataclass(frozen=True)
class Item:
    """One question about one story, as the target sees it."""

    tracker: Tracker
    text: str  # the story as the target reads it
    question: dict[str, Any]


def user_prompt(text: str, question: str) -> str:
    return f"Story:\n{text}\n\nQuestion: {question}\nShort answer:"


def is_correct(response: str, question: dict[str, Any], mode: str = "strict") -> bool:
    gold = question["answer"]
    if mode == "lenient":
        return gold.lower() in response.lower()
    from eval.answers import extract_answer
    from eval.answers import is_correct as parser_is_correct

    return parser_is_correct(extract_answer(response, fallback=True), gold,
                             question["answer_type"])


class Target(abc.ABC):
    name: str = "target"

    @abc.abstractmethod
    def answer(self, items: Sequence[Item]) -> list[str]:
        """One response per item, in order (a single batch)."""


class ReasonerTarget(Target):
    def __init__(self, reasoner: str) -> None:
        self.fn = get_reasoner(reasoner)
        self.name = f"reasoner:{reasoner}"

    def answer(self, items: Sequence[Item]) -> list[str]:
        return [self.fn(it.tracker, it.question) for it in items]

    def answer_items(self, tracker: Tracker, questions: Sequence[dict[str, Any]]) -> list[str]:
        """Answers to questions about one tracked story (no rendering needed)."""
        return [self.fn(tracker, q) for q in questions]


class ModelTarget(Target):
    """Any `eval` backend; greedy, short answers."""

    def __init__(self, backend: Any, max_new_tokens: int = 32) -> None:
        from eval.backends.base import GenerationConfig

        self.backend = backend
        self.config = GenerationConfig(max_new_tokens=max_new_tokens, temperature=0.0)
        self.name = f"{backend.name}:{backend.model}"

    def answer(self, items: Sequence[Item]) -> list[str]:
        prompts = [[{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": user_prompt(it.text, it.question["question"])}]
                   for it in items]
        return [c.text if c.ok else "" for c in self.backend.generate(prompts, self.config)]


def make_target(spec: dict[str, Any]) -> Target:
    """From a config mapping: {kind: reasoner, name: world} or {kind: openai, model: ..., ...}."""
    spec = dict(spec)
    kind = spec.pop("kind", "reasoner")
    if kind == "reasoner":
        return ReasonerTarget(spec.get("name", "world"))
    from eval.backends import load_backend

    model = spec.pop("model", None)
    if not model:
        raise ValueError(f"target of kind {kind!r} needs a 'model'")
    max_new_tokens = spec.pop("max_new_tokens", 32)
    return ModelTarget(load_backend(kind, model, **spec), max_new_tokens)
