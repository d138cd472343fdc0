"""The one interface every model backend implements (DESIGN.md, "Model backends").

A backend turns a batch of conversations into completions. Callers always pass the whole batch
(the A* search scores every question of every candidate node in one call; ToM-Synth sends
thousands of prompts at once); the backend decides how to batch, parallelise, retry and cache.
A prompt that still fails after the backend's retries comes back as a `Completion` with `error`
set instead of raising, so one bad request never loses a long job.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Annotated, Any, Callable, Optional, Sequence

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, create_model

Message = dict  # {"role": "system" | "user" | "assistant", "content": str}
Conversation = Sequence[Message]
OnResult = Callable[[int, "Completion"], None]


def _bound(name: str, ok: Callable[[Any], bool], rule: str) -> AfterValidator:
    """A setting's bound, in the message every config and command line has shown for it
    ("top_p must be in (0, 1], got 1.5"); a left-out setting (None) passes."""
    def check(value: Any) -> Any:
        if value is not None and not ok(value):
            raise ValueError(f"{name} must be {rule}, got {value}")
        return value
    return AfterValidator(check)


class GenerationSettings(BaseModel):
    """How a model is asked to reply: the one declaration of these settings, with their bounds
    and help. What a backend is given (`GenerationConfig` is this model), recorded with every
    result; greedy by default. The configs that set some of them take their fields from here
    (`generation_model`: an eval suite's `generation`, a tomsynth model, a search target, greedy
    evaluation during training), and so do the command lines' flags
    (`eval.cli_common.add_model_arguments`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_new_tokens: Annotated[int, _bound("max_new_tokens", lambda v: v >= 1, ">= 1")] = Field(
        512, description="token limit of each reply")
    temperature: Annotated[float, _bound("temperature", lambda v: v >= 0, ">= 0")] = Field(
        0.0, description="sampling temperature (0: greedy)")
    top_p: Annotated[float, _bound("top_p", lambda v: 0 < v <= 1, "in (0, 1]")] = Field(
        1.0, description="nucleus sampling mass")
    n: Annotated[int, _bound("n", lambda v: v >= 1, ">= 1")] = Field(
        1, description="samples per prompt (metrics are mean@n)")
    seed: Optional[int] = Field(0, description="sampling seed")
    stop: tuple[str, ...] = Field((), description="strings that end a reply")
    top_k: Annotated[Optional[int], _bound("top_k", lambda v: v >= 1, ">= 1")] = Field(
        None, description="sample among the k likeliest tokens only (null: all tokens)")

    def __init__(self, **settings: Any) -> None:
        """Settings given in code or on a command line: a bad one is a ValueError of one line
        (a config file's are validated by the config loader, which names the file and line)."""
        try:
            super().__init__(**settings)
        except ValidationError as e:
            err = e.errors()[0]
            msg = err["msg"].removeprefix("Value error, ")
            name = ".".join(map(str, err["loc"]))
            raise ValueError(msg if msg.startswith(name) else f"{name}: {msg}") from None

    def as_dict(self) -> dict:
        """As results record it and cache keys hash it: `top_k` only when set, so that the
        records and caches written before it existed still match."""
        d = self.model_dump(exclude=None if self.top_k is not None else {"top_k"})
        d["stop"] = list(self.stop)
        return d


GenerationConfig = GenerationSettings  # the name the backends' signatures give it


def generation_fields(*names: str, optional: bool = False, null: str = "",
                      **defaults: Any) -> dict[str, Any]:
    """The settings `names` (all, without names) as `pydantic.create_model` takes fields, each
    with its type, bound and help from `GenerationSettings`, and the default of `defaults` where
    it says, else the settings'. `optional`: each may be left out (null), as a suite or a
    benchmark entry leaves a setting to the level below; `null` says what null means there."""
    fields = {}
    for name in names or GenerationSettings.model_fields:
        info = GenerationSettings.model_fields[name]
        # the bound travels in the type, so that it holds wherever the field goes
        annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
        description = info.description
        if optional:
            annotation = Optional[annotation]
            description += f"; null: {null}" if null else ""
        default = defaults.get(name, None if optional else info.default)
        fields[name] = (annotation, Field(default, description=description))
    unknown = set(defaults) - set(fields)
    if unknown:
        raise TypeError(f"defaults of settings not asked for: {', '.join(sorted(unknown))}")
    return fields


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def generation_model(*names: str, base: type[BaseModel] = _Strict, optional: bool = False,
                     null: str = "", **defaults: Any) -> type[BaseModel]:
    """A model of `base`'s fields and then the settings `names` (`generation_fields`), to be
    subclassed: a config section that takes some generation settings declares none itself."""
    return create_model(f"{base.__name__}Generation", __base__=base, __module__=base.__module__,
                        **generation_fields(*names, optional=optional, null=null, **defaults))


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
