"""The `openai` backend: any OpenAI-compatible `/chat/completions` endpoint.

OpenAI itself, `vllm serve`, SGLang, llama.cpp's server, OpenRouter, Together, Gemini's OpenAI
endpoint, ... `base_url` follows the OpenAI convention and ends before `/chat/completions`
(e.g. `http://localhost:8000/v1`). Concurrency, retries, caching and accounting are in
`http_common`.

    backend = OpenAIBackend("Qwen/Qwen2.5-7B-Instruct", base_url="http://localhost:8000/v1",
                            api_key_env="", concurrency=64, cache="runs/cache.sqlite")
"""
from __future__ import annotations

from typing import Any

from pydantic import Field

from eval.backends.base import Conversation, GenerationConfig
from eval.backends.http_common import BadResponse, HTTPBackend, HTTPOptions, Reply, as_int, text_of


class OpenAIOptions(HTTPOptions):
    native_n: bool = Field(True, description=(
        "ask for n samples in one call (vLLM, OpenAI); false: n calls, for servers without n"))
    send_seed: bool = Field(True, description=(
        "send the sampling seed (vLLM and OpenAI sample reproducibly with it; some providers "
        "reject it)"))
    max_tokens_field: str = Field("max_tokens", pattern="^(max_tokens|max_completion_tokens)$",
                                  description=(
        "the request field of the token limit: max_tokens (most servers) or "
        "max_completion_tokens (OpenAI's reasoning models)"))


class OpenAIBackend(HTTPBackend):
    name = "openai"
    default_key_env = "OPENAI_API_KEY"
    default_base_url = "https://api.openai.com/v1"
    options_model = OpenAIOptions
    options: OpenAIOptions

    def _url(self) -> str:
        return self.base_url + "/chat/completions"

    def _auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    def _calls_per_prompt(self, config: GenerationConfig) -> tuple[int, int]:
        return (1, config.n) if self.options.native_n else (config.n, 1)

    def _payload(self, messages: Conversation, config: GenerationConfig, n: int) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m["role"], "content": text_of(m["content"])} for m in messages],
            self.options.max_tokens_field: config.max_new_tokens,
            "temperature": config.temperature,
        }
        # 1.0 is every server's default, and some reasoning models reject the field altogether.
        if config.top_p < 1.0:
            payload["top_p"] = config.top_p
        if config.top_k is not None:  # vLLM's and SGLang's servers take it; OpenAI's API does not
            payload["top_k"] = config.top_k
        if n != 1:
            payload["n"] = n
        if config.stop:
            payload["stop"] = list(config.stop)
        if config.seed is not None and self.options.send_seed:
            payload["seed"] = config.seed
        return payload

    def _parse(self, data: Any, n: int) -> Reply:
        if not isinstance(data, dict):
            raise BadResponse("body is not an object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices:
            raise BadResponse("no choices")
        texts, reasons = [], []
        for choice in sorted(choices, key=lambda c: as_int(c.get("index")) if isinstance(c, dict) else 0):
            message = choice.get("message") if isinstance(choice, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if isinstance(refusal, str) and refusal:  # OpenAI's structured refusal
                texts.append(refusal if content is None else str(content))
                reasons.append("refusal")
                continue
            if not isinstance(content, str):
                raise BadResponse("a choice has no text content")
            texts.append(content)
            reason = choice.get("finish_reason")
            reasons.append(reason if isinstance(reason, str) else "")
        if len(texts) != n:
            raise BadResponse(f"asked for {n} choices, got {len(texts)}")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return Reply(texts, as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")),
                     reasons)


BACKEND = OpenAIBackend
