"""The one interface every model backend implements (DESIGN.md, "Model backends").

A backend turns a batch of conversations into completions. Callers always pass the whole batch
(the A* search scores every question of every candidate node in one call; ToM-Synth sends
thousands of prompts at once); the backend decides how to batch, parallelise, retry and cache.
A prompt that still fails after the backend's retries comes back as a `Completion` with `error`
set instead of raising, so one bad request never loses a long job.
"""
from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}
Conversation = Sequence[Message]
OnResult = Callable[[int, "Completion"], None]


@dataclass(frozen=True)
class GenerationConfig:
    """Sampling settings; recorded with every result. Greedy by default."""

    max_new_tokens: int = 512
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int | None = 0
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d


@dataclass
class Completion:
    """The answer to one prompt: `n` texts, token usage, and an error when it failed for good.

    `finish_reasons` says, text by text, why generation stopped, in OpenAI's words: "stop" (the
    model ended), "length" (cut off at `max_new_tokens`), "content_filter" or "refusal" (the
    provider withheld or the model declined), "" where the backend did not say (an old cache
    entry). A cut-off reply is never whole data, however well it parses."""

    texts: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    error: str | None = None
    finish_reasons: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return self.texts[0] if self.texts else ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def finish_reason(self, index: int = 0) -> str:
        return self.finish_reasons[index] if index < len(self.finish_reasons) else ""

    def truncated(self, index: int = 0) -> bool:
        """Whether text `index` was cut off by the token limit."""
        return self.finish_reason(index) == "length"


class Backend(abc.ABC):
    """Ask a model. Subclasses set `name` (the backend kind) and `model` (what they serve)."""

    name: str = "backend"
    model: str = ""
    # weights read from disk (hf, vllm): a missing local folder is named before the library
    # mistakes it for a hub id
    local_weights: bool = False

    @abc.abstractmethod
    def generate(
        self,
        prompts: Sequence[Conversation],
        config: GenerationConfig = GenerationConfig(),
        *,
        on_result: OnResult | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        """One Completion per prompt, in order. `on_result(i, completion)` is called as each
        finishes, so callers can write results incrementally and resume after a crash."""

    def describe(self) -> dict:
        """What to record in results (never secrets such as API keys)."""
        return {"backend": self.name, "model": self.model}

    def usage_summary(self) -> dict[str, Any]:
        """What the backend counted while it ran (requests, retries, tokens, cost); the HTTP
        backends count, a local model has nothing to report."""
        return {}

    def close(self) -> None:  # pragma: no cover - most backends hold nothing
        pass


class ScriptedBackend(Backend):
    """Answers with a Python function of the conversation: tests, constant and perfect baselines,
    and the rule-based reasoners of `exploretom`."""

    name = "scripted"

    def __init__(self, fn: Callable[[Conversation], str], model: str = "scripted") -> None:
        self.fn = fn
        self.model = model

    def generate(self, prompts, config=GenerationConfig(), *, on_result=None, progress=False):
        out = []
        for i, conv in enumerate(prompts):
            c = Completion(texts=[self.fn(conv) for _ in range(config.n)])
            if on_result:
                on_result(i, c)
            out.append(c)
        return out
