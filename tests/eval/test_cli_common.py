"""`KEY=VALUE` options as the commands read them (`-O`, `--search`, `--judge-option`)."""
from __future__ import annotations

import pytest

from eval.cli_common import parse_pairs


def test_values_are_yaml_and_an_empty_value_is_the_empty_string():
    assert parse_pairs(["concurrency=16", "temperature=0.5", "eager=true", "sizes=[5, 3]",
                        "api_key_env=", "name=abc"], "-O") == {
        "concurrency": 16, "temperature": 0.5, "eager": True, "sizes": [5, 3],
        "api_key_env": "", "name": "abc"}
    assert parse_pairs(["path=1e3"], "--x", yaml_values=False) == {"path": "1e3"}


@pytest.mark.parametrize("bad", ["novalue", "=5"])
def test_a_pair_without_a_key_is_a_one_line_error(bad):
    with pytest.raises(ValueError, match="-O expects KEY=VALUE"):
        parse_pairs([bad], "-O")


def test_summary_shares_and_counts_by_reason():
    from eval.cli_common import bracketed_counts, share

    assert share(3, 8) == "37.5%" and share(0, 0) == "n/a"
    assert bracketed_counts({"no_json": 2, "truncated": 9}) == " [truncated=9 no_json=2]"
    assert bracketed_counts({}) == ""
