"""Model backends by kind: the modules of `eval/backends/kinds/`, found by their files and each
imported only when asked for (the HTTP backends need no torch, and vLLM exists only where it is
installed). Adding a backend is adding its module there (defining `BACKEND`) and its test. The
modules are looked for in the folders of the `kinds` package (its `__path__`, eval.registry)."""
from __future__ import annotations

import importlib
import inspect
from typing import Any, Mapping

from eval.backends import kinds
from eval.backends.base import Backend, Completion, GenerationConfig, ScriptedBackend
from eval.paths import missing_local_model
from eval.registry import module_names

__all__ = ["BACKENDS", "Backend", "BackendConfigError", "BackendError", "Completion", "GenerationConfig",
           "ScriptedBackend", "discover", "load_backend"]

BACKENDS: dict[str, str] = {}  # kind -> its module (not imported here)


def discover() -> None:
    """Fill `BACKENDS` from the files in the folders of `eval.backends.kinds`, in place, so that
    every module that imported it sees a folder added to that package's `__path__` after the
    import."""
    BACKENDS.clear()
    BACKENDS.update({kind: f"{kinds.__name__}.{kind}" for kind in module_names(kinds.__path__)})


discover()


class BackendError(RuntimeError):
    """A backend that cannot be built or used (unknown kind, missing package, bad model path);
    the message is one line the CLI prints as it is."""


class BackendConfigError(BackendError, ValueError):
    """A backend option or environment problem, as one line naming the option."""


def options_error(e: Any, where: str) -> BackendConfigError:
    """A pydantic ValidationError of a backend's options model as one line naming the option
    (the same for every backend)."""
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "?"
    return BackendConfigError(f"{where} option {loc!r}: {err['msg']}")


def backend_class(kind: str) -> type[Backend]:
    if kind not in BACKENDS:
        raise BackendError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    return importlib.import_module(BACKENDS[kind]).BACKEND


def accepted_options(cls: type[Backend]) -> list[str] | None:
    """The option names a backend class accepts (its options model's fields, else the keyword
    parameters of its constructor after the model), or None when it takes any option (vLLM's
    model lets unknown ones through to its engine)."""
    options_model = getattr(cls, "options_model", None)
    if options_model is not None:
        if options_model.model_config.get("extra") == "allow":
            return None
        return sorted(options_model.model_fields)
    params = list(inspect.signature(cls.__init__).parameters.values())[2:]  # self, model
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params
            if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]


def unknown_options(kind: str, options: Mapping[str, Any]) -> tuple[list[str], list[str] | None]:
    """The options the backend `kind` does not take, and the ones it does (None: any)."""
    accepted = accepted_options(backend_class(kind))
    return (sorted(set(options) - set(accepted)) if accepted is not None else []), accepted


def check_option_values(kind: str, options: Mapping[str, Any]) -> None:
    """Validate the options with the backend's options model, where it has one; pydantic's
    ValidationError names the option (its location is the option's name)."""
    options_model = getattr(backend_class(kind), "options_model", None)
    if options_model is not None:
        options_model(**options)


def load_backend(kind: str, model: str, **options: Any) -> Backend:
    """Build the backend `kind` serving `model` (a local path, a hub id or an API model name).
    An option the backend does not take is a `BackendError` naming it and the accepted ones."""
    cls = backend_class(kind)
    unknown, accepted = unknown_options(kind, options)
    if unknown:
        names = ", ".join(repr(u) for u in unknown)
        raise BackendError(f"{kind} backend: unknown option{'s' if len(unknown) > 1 else ''} "
                           f"{names}; accepted: {', '.join(accepted or ()) or 'none'}")
    from pydantic import ValidationError

    try:  # a bad value is named before any model is looked for
        check_option_values(kind, options)
    except ValidationError as e:
        raise options_error(e, f"{kind} backend") from None
    if cls.local_weights:
        problem = missing_local_model(str(model))
        if problem:
            raise BackendError(f"model {model}: {problem}")
    return cls(model, **options)
