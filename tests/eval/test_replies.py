"""Which replies can be data at all (`eval.replies`), and why each reply ended as every backend
reports it: the fake server cuts a reply at the request's token limit as a real server does, the
HTTP backends read OpenAI's `finish_reason` / Anthropic's `stop_reason`, the cache keeps them, and
the hf backend says `length` for a reply that met no end token."""
from __future__ import annotations

import pytest

from eval.backends import load_backend
from eval.backends.base import Completion, GenerationConfig
from eval.backends.fake_server.server import FakeServer
from eval.replies import is_refusal, problem, text_problem

REFUSALS = [
    "I'm sorry, but I can't write that item.",
    "I’m sorry, I cannot help with that request.",
    "  I cannot provide a story that ...",
    "I can't assist with that.",
    "As an AI language model, I do not write stories.",
    "Sorry, but I won't do that.",
    "I apologize, but this request ...",
    "I am unable to generate that content.",
]
NOT_REFUSALS = [
    '{"story": "Anne says: I\'m sorry, I cannot find the keys."}',
    "Anne was sorry she could not come.",
    "I can help with that! Here is the story: ...",
    "In the kitchen, I cannot say whether ...",  # does not open by declining
    "B",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_refusals_are_recognised_by_their_opening(text):
    assert is_refusal(text) and text_problem(text) == "refused"


@pytest.mark.parametrize("text", NOT_REFUSALS)
def test_text_that_merely_mentions_sorry_is_not_a_refusal(text):
    assert not is_refusal(text) and text_problem(text) is None


def test_problems_of_completions():
    assert problem(Completion(error="HTTP 500")) == "request_failed"
    assert problem(Completion(texts=[])) == "empty"
    assert problem(Completion(texts=["  \n"])) == "empty"
    assert problem(Completion(texts=['{"a": 1'], finish_reasons=["length"])) == "truncated"
    assert problem(Completion(texts=['{"a": 1}'], finish_reasons=["stop"])) is None
    assert problem(Completion(texts=["fine"], finish_reasons=["content_filter"])) == "refused"
    assert problem(Completion(texts=["ok", "cut"], finish_reasons=["stop", "length"]), 1) == "truncated"
    assert problem(Completion(texts=["no reasons recorded"])) is None  # an old cache entry


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_reply_over_the_token_limit_comes_back_cut_and_marked(kind, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with FakeServer(lambda r: "one two three four five six") as srv:
        url = srv.openai_base_url if kind == "openai" else srv.anthropic_base_url
        cache = str(tmp_path / "cache.sqlite")
        b = load_backend(kind, "m", base_url=url, cache=cache)
        short, whole = (b.generate([[{"role": "user", "content": "q"}]], GenerationConfig(max_new_tokens=m))[0]
                        for m in (4, 40))
        assert short.text == "one two three four" and short.truncated() and problem(short) == "truncated"
        assert whole.text == "one two three four five six" and whole.finish_reasons == ["stop"]
        again = load_backend(kind, "m", base_url=url, cache=cache).generate(
            [[{"role": "user", "content": "q"}]], GenerationConfig(max_new_tokens=4))[0]
    assert again.cached and again.truncated()  # the cache keeps why the reply ended


def test_openai_structured_refusal_is_refused(monkeypatch):
    from eval.backends.kinds.openai import OpenAIBackend

    monkeypatch.setenv("OPENAI_API_KEY", "k")
    b = OpenAIBackend("m", base_url="http://127.0.0.1:9/v1")
    reply = b._parse({"choices": [{"index": 0, "message": {"content": None, "refusal": "I can't help."},
                                   "finish_reason": "stop"}]}, 1)
    assert reply.finish_reasons == ["refusal"] and text_problem(reply.texts[0], "refusal") == "refused"


def test_hf_backend_marks_replies_that_met_no_end_token(tiny_model_dir):
    b = load_backend("hf", str(tiny_model_dir), batch_size=4)
    prompts = [[{"role": "user", "content": f"Where is the ball {i}?"}] for i in range(3)]
    out = b.generate(prompts, GenerationConfig(max_new_tokens=3))
    for c in out:  # three tokens are too few for the tiny model to end on its own
        assert c.finish_reasons == ["length"] and c.completion_tokens == 3
    long = b.generate(prompts, GenerationConfig(max_new_tokens=200))
    for c in long:
        assert c.finish_reasons == (["stop"] if c.completion_tokens < 200 else ["length"])
