"""Model backends by kind. Each is imported only when asked for: the HTTP backends need no torch,
and vLLM exists only on GPU machines."""
from __future__ import annotations

import importlib
from typing import Any

from eval.backends.base import Backend, Completion, GenerationConfig, ScriptedBackend
from eval.paths import missing_local_model

__all__ = ["BACKENDS", "Backend", "BackendError", "Completion", "GenerationConfig",
           "ScriptedBackend", "load_backend"]

BACKENDS = {
    "hf": "eval.backends.hf:HFBackend",
    "vllm": "eval.backends.vllm_backend:VLLMBackend",
    "openai": "eval.backends.openai_compat:OpenAIBackend",
    "anthropic": "eval.backends.anthropic_api:AnthropicBackend",
}


class BackendError(RuntimeError):
    """A backend that cannot be built or used (unknown kind, missing package, bad model path);
    the message is one line the CLI prints as it is."""


# Backends that load weights from disk: a missing local folder is named before transformers
# mistakes it for a hub id.
LOCAL_WEIGHTS = ("hf", "vllm")


def backend_class(kind: str) -> type[Backend]:
    if kind not in BACKENDS:
        raise BackendError(f"unknown backend {kind!r}; choose one of: {', '.join(BACKENDS)}")
    module, cls = BACKENDS[kind].split(":")
    return getattr(importlib.import_module(module), cls)


def load_backend(kind: str, model: str, **options: Any) -> Backend:
    """Build the backend `kind` serving `model` (a local path, a hub id or an API model name)."""
    if kind in LOCAL_WEIGHTS:
        problem = missing_local_model(str(model))
        if problem:
            raise BackendError(f"model {model}: {problem}")
    return backend_class(kind)(model, **options)
