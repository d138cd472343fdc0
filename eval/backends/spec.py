"""A model named in a config file: which backend asks it, which model, and that backend's own
options beside them, as `python -m eval run -O KEY=VALUE` takes them.

    generator:
      backend: openai
      model: Qwen/Qwen2.5-72B-Instruct
      base_url: http://localhost:8000/v1     # an option of the openai backend
      concurrency: 64                        # another

The options are checked when the file loads, by the backend itself (its options model), so a
config file, `-O` and a search target refuse the same things; an error is located at the
option's key, so the config loader names its line.
"""
from __future__ import annotations

from typing import Any, ClassVar, Iterable, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError

from eval.backends import BACKENDS, check_option_values, unknown_options


def check_backend_options(kind: str, options: Mapping[str, Any], own: Iterable[str]) -> None:
    """Refuse an option the backend `kind` does not take or a value it rejects, as a pydantic
    error located at that option's key; `own` are the keys the mapping holds for itself."""
    unknown, accepted = unknown_options(kind, options)
    if unknown:
        key = unknown[0]
        raise ValidationError.from_exception_data("options", [{
            "type": PydanticCustomError("value_error", "unknown key; allowed: {own}, or an option "
                                        "of the {kind} backend: {accepted}",
                                        {"own": ", ".join(own), "kind": kind,
                                         "accepted": ", ".join(accepted or ()) or "none"}),
            "loc": (key,), "input": options[key]}])
    check_option_values(kind, options)


class ModelSpec(BaseModel):
    """`backend` and `model`; every other key is an option of that backend."""

    model_config = ConfigDict(extra="allow")
    other_keys: ClassVar[str] = "any option of that backend, as `python -m eval run -O` takes it"
    backend: str = Field(description="which backend asks it: " + ", ".join(BACKENDS))
    model: str = Field(min_length=1, description="a local folder, a hub id or an API model name")

    @field_validator("backend")
    @classmethod
    def _known(cls, kind: str) -> str:
        if kind not in BACKENDS:
            raise ValueError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
        return kind

    @model_validator(mode="after")
    def _options_known(self) -> "ModelSpec":
        check_backend_options(self.backend, self.options, type(self).model_fields)
        return self

    @property
    def options(self) -> dict[str, Any]:
        """The backend's options (the keys beside the declared fields)."""
        return self.__pydantic_extra__ if self.__pydantic_extra__ is not None else {}
