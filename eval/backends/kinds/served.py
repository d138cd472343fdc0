"""The `served` backend: a local model behind `vllm serve`, started on localhost for the backend's
life and asked over HTTP as the `openai` backend asks any served model; `close()` stops it.

    backend = load_backend("served", "runs/models/smollm2-135m-instruct",
                           server_args=["--dtype", "float32"], concurrency=64)

It is what a user's own served model would be, with the server's start and end in the same
command: the search's targets (`served:PATH`), `python -m eval run --backend served` and every
command that names a backend. vLLM comes from this environment or the checkout's .venv-vllm
(`eval.backends.vllm_server`); on a machine without a GPU the server runs with its CPU flags.
The options are the openai backend's but the endpoint's (`base_url` and `api_key_env`: the
server is the backend's own), and the server's.
"""
from __future__ import annotations

from typing import Any, Optional

from pydantic import Field, ValidationError, create_model

from eval.backends import options_error
from eval.backends.kinds.openai import OpenAIBackend, OpenAIOptions

ENDPOINT = ("base_url", "api_key_env")  # set by the backend: the server it started

ServedOptions = create_model(
    "ServedOptions", __base__=None, __config__=OpenAIOptions.model_config,
    **{name: (info.annotation, info) for name, info in OpenAIOptions.model_fields.items()
       if name not in ENDPOINT},
    server_args=(list[str], Field([], description=(
        "flags of `vllm serve` (--dtype float32 --max-model-len 4096); the CPU flags of "
        "eval.backends.vllm_server are added unless they say otherwise"))),
    python=(Optional[str], Field(None, description=(
        "the Python that runs vLLM (null: this one if it has vLLM, else .venv-vllm's)"))),
    startup_timeout_s=(float, Field(900.0, gt=0, description=(
        "seconds the server may take to answer its /health"))),
)


class ServedBackend(OpenAIBackend):
    name = "served"
    local_weights = True  # the server loads the folder: a missing one is named before it starts
    options_model = ServedOptions

    def __init__(self, model: str, **options: Any) -> None:
        from eval.backends.vllm_server import VLLMServer, vllm_python

        try:  # every option is checked before a server starts
            served = ServedOptions(**options)
        except ValidationError as e:
            raise options_error(e, f"{self.name} backend") from None
        self.server = VLLMServer(model, python=served.python or vllm_python(),
                                 args=served.server_args,
                                 startup_timeout_s=served.startup_timeout_s).start()
        try:
            # the HTTP layer reads the openai backend's options, pointed at this server
            self.options_model = OpenAIOptions
            request = {k: v for k, v in options.items()
                       if k not in ("server_args", "python", "startup_timeout_s")}
            super().__init__(model, base_url=self.server.base_url, api_key_env="", **request)
        except BaseException:
            self.server.stop()
            raise

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.server.stop()


BACKEND = ServedBackend
