"""Reading structured answers out of LLM replies (`exploretom.llm.json`): JSON inside prose or code
fences, string lists from JSON or numbered lines, and every unusable reply a `ReplyError` with a
reason slug."""
from __future__ import annotations

import json

import pytest

from exploretom.contexts.replies import ContextReply
from exploretom.llm.json import ReplyError, parse_json_reply, parse_model, parse_string_list


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('Sure!\n```json\n{"a": [1, 2,],}\n```\nHope this helps.', {"a": [1, 2]}),
    ('The answer is {"a": {"b": 2}} as requested.', {"a": {"b": 2}}),
    ('[1, 2] and then {"a": 3}', {"a": 3}),
])
def test_json_is_found_in_chatty_replies(text, expected):
    assert parse_json_reply(text, dict) == expected


@pytest.mark.parametrize("text, reason", [
    ("", "empty"), ("   \n", "empty"), ("x" * 200_001, "too_long"), ("no json here", "no_json"),
    ('{"a": ', "bad_json"), ("[" * 100_000 + "]" * 100_000, "bad_json"), ("[1, 2]", "wrong_type"),
    (None, "wrong_type"),
])
def test_unusable_replies_raise_reply_error_with_reason(text, reason):
    with pytest.raises(ReplyError) as e:
        parse_json_reply(text, dict, max_chars=200_000)
    assert e.value.reason == reason


def test_deeply_nested_json_is_bad_json_not_a_crash():
    with pytest.raises(ReplyError) as e:
        parse_json_reply("{" * 50_000, dict)
    assert e.value.reason == "bad_json"


def test_string_lists_from_json_or_numbered_lines():
    assert parse_string_list('["Ada", "Bo", 3]') == ["Ada", "Bo"]
    assert parse_string_list('{"names": ["Ada"]}', key="names") == ["Ada"]
    assert parse_string_list("Here:\n1. a bakery\n2) a school\n- a farm") == ["a bakery", "a school", "a farm"]
    assert parse_string_list("Ada\nBo\nCy") == ["Ada", "Bo", "Cy"]
    with pytest.raises(ReplyError):
        parse_string_list('["Ada", ')


def test_schema_errors_name_the_field():
    with pytest.raises(ReplyError, match=r"schema: field people: Input should be a valid list"):
        parse_model(ContextReply, json.dumps({"people": "x", "situation": "s", "start_room": "a",
                                              "other_room": "b", "object": "o", "containers": [],
                                              "topics": []}))
