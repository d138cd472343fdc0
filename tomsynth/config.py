"""The ToM-Synth run configuration: one YAML file, validated with pydantic.

Read by eval.config_file, the loader every package shares: errors come back as one line naming
the file, the line and the field, e.g. `configs/tomsynth/paper.yaml:12: generator.concurrency:
Input should be greater than or equal to 1 (got 0)`.
See `configs/tomsynth/*.yaml` for complete examples.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eval import config_file
from eval.backends import GenerationConfig, accepted_options, backend_class, load_backend
from eval.backends.base import generation_model
from eval.backends.http_common import Price
from eval.backends.spec import ModelSpec as BackendModelSpec
from eval.config_file import ConfigError  # noqa: F401 - tomsynth.cli's error for config problems


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# tomsynth's replies are long (2048 tokens) and a lost one costs a rerun of its stage, so it waits
# longer and retries more than eval.backends' HTTP defaults (120 s, 6 attempts)
HTTP_DEFAULTS = {"timeout_s": 300.0, "max_attempts": 8}


# the generation settings a tomsynth model takes (n is not one: a unit asks for one item per entry)
GENERATION = ("max_new_tokens", "temperature", "top_p", "seed", "stop", "top_k")


class ModelSpec(generation_model(*GENERATION, base=BackendModelSpec, max_new_tokens=2048,
                                 temperature=1.0)):
    """Which model answers, through which backend (`eval.backends.load_backend`), with which
    generation settings (declared, with their bounds, by `eval.backends.GenerationSettings`;
    tomsynth's defaults are its own: long replies, sampled); every other key is an option of that
    backend (base_url, api_key_env, concurrency, timeout_s, ...: docs/tomsynth.md), checked by the
    backend when the file loads."""

    def generation(self) -> GenerationConfig:
        return GenerationConfig(**self.model_dump(include=set(GENERATION)))

    def backend_options(self, cache: str | None, prices: dict[str, Price]) -> dict[str, Any]:
        """`load_backend`'s options: tomsynth's defaults, the cache and the prices where the
        backend takes them, then the options the file sets."""
        accepted = accepted_options(backend_class(self.backend)) or ()
        defaults = {**HTTP_DEFAULTS, "cache": cache,
                    "prices": {k: v.model_dump() for k, v in prices.items()}}
        return {**{k: v for k, v in defaults.items() if k in accepted}, **self.options}


class FilterSpec(_Strict):
    """Stage-1 limits. The prompt asks for at most 800 characters; models overshoot a little,
    and the paper's stage 1 removed only 0.32%, so the default limit leaves some slack."""

    max_text_chars: int = Field(1000, ge=100, description="longest narrative or dialogue kept")
    min_text_chars: int = Field(120, ge=0, description="shortest narrative or dialogue kept")
    max_question_chars: int = Field(400, ge=20, description="longest question kept")
    max_option_chars: int = Field(300, ge=10, description="longest option kept")
    max_characters: int = Field(4, ge=1, description="most named people a text may have")
    verbatim_min_words: int = Field(4, ge=1, description=(
        "an option this many words long or longer must not appear verbatim in the text (shorter "
        "ones, like a place name in a false-belief story, legitimately do)"))
    max_reply_chars: int = Field(20000, ge=1000, description="longest reply read at all")


class BuildSpec(_Strict):
    test_fraction: float = Field(0.0, ge=0, lt=1, description=(
        "share of units held out as the test split (whole units, never split)"))


class Config(_Strict):
    out_dir: Path = Field(Path("runs/tomsynth"), description=(
        "where the raw logs, filtered items, reports and datasets go"))
    cache: Path | None = Field(None, description=(
        "response cache shared by generator and verifier (null: <out_dir>/cache.sqlite)"))
    use_cache: bool = Field(True, description="cache the HTTP backends' responses (re-runs free)")
    collections: list[Literal["main", "contrast"]] = Field(
        default_factory=lambda: ["main", "contrast"], description="which collections to make")
    entries_per_unit: dict[Literal["main", "contrast"], int] = Field(
        default_factory=lambda: {"main": 4, "contrast": 12},
        description="items asked of the generator per unit, per collection")
    generator: ModelSpec = Field(description="the model that writes the items")
    verifier: ModelSpec = Field(description="the model that answers them in stage 3")
    prices: dict[str, Price] = Field(default_factory=dict, description=(
        "model -> {input, output}: USD per million tokens, for the cost in the usage reports"))
    filter: FilterSpec = Field(default_factory=FilterSpec, description="stage-1 limits")
    build: BuildSpec = Field(default_factory=BuildSpec, description="the datasets' splits")

    @field_validator("entries_per_unit")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        for k, n in v.items():
            if n < 1:
                raise ValueError(f"{k} must be >= 1")
        return {"main": 4, "contrast": 12, **v}

    @field_validator("collections")
    @classmethod
    def _nonempty(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("name at least one collection")
        return list(dict.fromkeys(v))

    def cache_path(self) -> str | None:
        if not self.use_cache:
            return None
        return str(self.cache if self.cache is not None else self.out_dir / "cache.sqlite")

    def backend(self, role: Literal["generator", "verifier"]):
        """A live backend for the generator or the verifier."""
        spec: ModelSpec = getattr(self, role)
        return load_backend(spec.backend, spec.model, **spec.backend_options(self.cache_path(), self.prices))


def load_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> Config:
    """Read and validate a config file; `overrides` ({field: value}, from CLI flags) replace
    what the file says."""
    return config_file.load_config(path, Config, overrides or {})
