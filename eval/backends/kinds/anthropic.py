"""The `anthropic` backend: the Anthropic Messages API (`POST {base_url}/v1/messages`).

The ToM-Synth paper generates its data with Claude. System messages of the conversation become
the top-level `system` field; n samples are n calls (the API has no `n`); extended-thinking
blocks, when `extra_body` turns thinking on, are skipped and only text blocks are returned.
Concurrency, retries, caching and accounting are in `http_common`.

    backend = AnthropicBackend("claude-opus-4-5", concurrency=16, cache="runs/cache.sqlite",
                               prices={"claude-opus-4-5": {"input": 5, "output": 25}})
"""
from __future__ import annotations

from typing import Any

from pydantic import Field

from eval.backends.base import Conversation, GenerationConfig
from eval.backends.http_common import BadResponse, HTTPBackend, HTTPOptions, Reply, as_int, text_of


# Anthropic's stop reasons in OpenAI's words (Completion.finish_reasons)
STOP_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "refusal"}


class AnthropicOptions(HTTPOptions):
    anthropic_version: str = Field("2023-06-01", description="the API version header sent")


class AnthropicBackend(HTTPBackend):
    name = "anthropic"
    default_key_env = "ANTHROPIC_API_KEY"
    default_base_url = "https://api.anthropic.com"
    options_model = AnthropicOptions
    options: AnthropicOptions

    def _url(self) -> str:
        return self.base_url + "/v1/messages"

    def _auth_headers(self) -> dict[str, str]:
        headers = {"anthropic-version": self.options.anthropic_version}
        if self._api_key:
            headers["x-api-key"] = self._api_key
        return headers

    def _calls_per_prompt(self, config: GenerationConfig) -> tuple[int, int]:
        return config.n, 1

    def _payload(self, messages: Conversation, config: GenerationConfig, n: int) -> dict[str, Any]:
        system = "\n\n".join(text_of(m["content"]) for m in messages if m["role"] == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": config.max_new_tokens,
            "messages": [{"role": m["role"], "content": text_of(m["content"])}
                         for m in messages if m["role"] != "system"],
            "temperature": config.temperature,
        }
        if system:
            payload["system"] = system
        # Recent Claude models refuse temperature and top_p together; send top_p only when set.
        if config.top_p < 1.0:
            payload["top_p"] = config.top_p
        if config.top_k is not None:
            payload["top_k"] = config.top_k
        if config.stop:
            payload["stop_sequences"] = list(config.stop)
        return payload

    def _parse(self, data: Any, n: int) -> Reply:
        if not isinstance(data, dict):
            raise BadResponse("body is not an object")
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise BadResponse("no content blocks")
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise BadResponse("no text content")
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        prompt_tokens = (as_int(usage.get("input_tokens")) + as_int(usage.get("cache_read_input_tokens"))
                         + as_int(usage.get("cache_creation_input_tokens")))
        stop = data.get("stop_reason")
        return Reply(["".join(texts)], prompt_tokens, as_int(usage.get("output_tokens")),
                     [STOP_REASONS.get(stop, "") if isinstance(stop, str) else ""])


BACKEND = AnthropicBackend
