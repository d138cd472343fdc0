"""Suites: which benchmarks to run, on which data, with which generation settings.

A suite is a YAML file in `configs/eval/` (or anywhere):

    name: tom
    description: Theory of Mind benchmarks
    generation: {max_new_tokens: 2048}        # defaults for every benchmark of the suite
    benchmarks:
      - tomi                                   # a name alone: its sample in ../shared/benchmarks
      - name: hitom
        data: /data/Hi-ToM/Hi-ToM_data.json    # a file or folder in the release format
        limit: 500                             # the first 500 items (release order)
        generation: {max_new_tokens: 4096}     # overrides the suite's defaults
        permutations: 3                        # each item in 3 option orders (also suite-wide)
        system_prompt: none                    # default | tags | none | the text (also suite-wide)
      - name: tombench
        sample: 1000                           # 1,000 items drawn at random with the run's seed
        options: {permutations: 5}             # the loader's own keyword arguments

Settings resolve as: command line > benchmark entry > suite > `GenerationConfig` defaults.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from eval.backends.base import GenerationConfig, generation_model
from eval.benchmarks import BENCHMARKS, get_benchmark
from eval.benchmarks.base import REPO_ROOT
from eval.config_file import ConfigError, load_config

SUITES_DIR = REPO_ROOT / "configs" / "eval"


class GenerationSettings(generation_model(optional=True)):
    """Any of the generation settings (eval.backends.base.GenerationSettings, their one
    declaration); unset ones fall through to the next level."""

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class BenchmarkEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the benchmark (its module in eval/benchmarks)")
    data: Optional[str] = Field(None, description="file or folder in the benchmark's release "
                                "format (null: its shared sample)")
    limit: Optional[int] = Field(None, ge=1, description="the first N items")
    sample: Optional[int] = Field(None, ge=1, description="N items drawn at random with the "
                                  "run's seed")
    options: dict[str, Any] = Field({}, description="keyword arguments of the benchmark's loader")
    generation: GenerationSettings = Field(GenerationSettings(), description="this benchmark's "
                                           "generation settings, over the suite's")
    system_prompt: Optional[str] = Field(None, description="as the suite's system_prompt, for "
                                         "this benchmark")
    permutations: Optional[int] = Field(None, ge=1, description="as the suite's permutations, "
                                        "for this benchmark")

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in BENCHMARKS:
            raise ValueError(f"unknown benchmark {name!r}; choose from: {', '.join(BENCHMARKS)}")
        return name

    @field_validator("data")
    @classmethod
    def _expand(cls, data: Optional[str]) -> Optional[str]:
        return os.path.expanduser(os.path.expandvars(data)) if data else None

    @model_validator(mode="after")
    def _known_options(self) -> "BenchmarkEntry":
        check_options(self.name, self.options)
        return self


def loader_options(name: str) -> list[str]:
    """The options a benchmark's loader takes (its keyword-only arguments)."""
    params = inspect.signature(get_benchmark(name).load).parameters.values()
    return [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]


def check_options(name: str, options: dict[str, Any]) -> None:
    allowed = loader_options(name)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError(f"{name} has no option {', '.join(map(repr, unknown))}; "
                         f"its options: {', '.join(allowed) or 'none'}")


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field("", description="the suite's name (empty: the file's name)")
    description: str = Field("", description="what the suite is for, in a sentence")
    generation: GenerationSettings = Field(GenerationSettings(), description="generation "
                                           "settings of every benchmark")
    system_prompt: Optional[str] = Field(None, description=(
        "the system message: default (each benchmark's own convention: the think/answer prompt "
        "for ToM and EI, the usual instruction of each IQ benchmark), tags (the think/answer "
        "prompt everywhere), none (no system message) or the text itself"))
    permutations: Optional[int] = Field(None, ge=1, description=(
        "ask every multiple-choice item in this many option orders (eval.option_orders), so that "
        "a score is not a habit of answering one position"))
    benchmarks: list[BenchmarkEntry] = Field(min_length=1, description=(
        "the benchmarks: names, or mappings with the settings below"))

    @field_validator("benchmarks", mode="before")
    @classmethod
    def _names_alone(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _unique(self) -> "Suite":
        names = [b.name for b in self.benchmarks]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"benchmark(s) listed twice: {', '.join(dupes)}")
        return self

    def generation_for(self, entry: BenchmarkEntry | None = None,
                       overrides: dict[str, Any] | None = None) -> GenerationConfig:
        """The settings of one benchmark (or, with no entry, the suite's own defaults)."""
        given = entry.generation.given() if entry else {}
        settings = {**self.generation.given(), **given,
                    **{k: v for k, v in (overrides or {}).items() if v is not None}}
        return GenerationConfig(**settings)


def load_suite_file(path: str | Path) -> Suite:
    """A suite file (eval.config_file's one-line errors)."""
    suite = load_config(path, Suite)
    suite.name = suite.name or Path(path).stem
    return suite


def available_suites() -> list[str]:
    return sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))


def resolve_suite(specs: list[str] | str) -> Suite:
    """A suite from a YAML path, a suite name in configs/eval/, or benchmark names (given as
    separate arguments and/or comma-separated)."""
    if isinstance(specs, str):
        specs = [specs]
    if len(specs) == 1:
        spec = specs[0]
        if spec.endswith((".yaml", ".yml")) or os.sep in spec:
            return load_suite_file(spec)
        if (SUITES_DIR / f"{spec}.yaml").is_file():
            return load_suite_file(SUITES_DIR / f"{spec}.yaml")
    names = [n.strip() for s in specs for n in s.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown or not names:
        raise ConfigError(
            f"unknown benchmark or suite {', '.join(map(repr, unknown)) or '(none given)'}; "
            f"suites: {', '.join(available_suites())}; benchmarks: {', '.join(BENCHMARKS)}"
        )
    return load_config(None, Suite, {"name": "+".join(names),
                                     "benchmarks": [{"name": n} for n in names]})
