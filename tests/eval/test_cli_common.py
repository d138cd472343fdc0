"""`KEY=VALUE` options as the commands read them (`-O`, `--search`, `--judge-option`), and counts."""
from __future__ import annotations

import argparse

import pytest

from eval.cli_common import parse_pairs, positive_int


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


def test_model_and_generation_flags_come_from_the_fields():
    import argparse

    from eval.backends.base import GenerationSettings
    from eval.backends.spec import ModelSpec
    from eval.cli_common import add_model_arguments

    p = argparse.ArgumentParser()
    add_model_arguments(p, generation=tuple(GenerationSettings.model_fields),
                        notes={"seed": "; and more"})
    flags = {a.dest: a for a in p._actions}
    assert flags["model"].help == ModelSpec.model_fields["model"].description
    for name, info in GenerationSettings.model_fields.items():
        assert flags[name].help.startswith(info.description) and flags[name].default is None
    assert flags["seed"].help == "sampling seed; and more"
    args = p.parse_args(["--model", "m", "--top-k", "5", "--stop", "a", "--stop", "b",
                         "--temperature", "0.5", "-O", "x=1"])
    assert (args.backend, args.top_k, args.stop, args.temperature) == ("hf", 5, ["a", "b"], 0.5)
    assert args.backend_option == ["x=1"] and args.max_new_tokens is None


def test_a_commands_own_defaults_and_choice_of_flags():
    import argparse

    from eval.cli_common import add_model_arguments

    p = argparse.ArgumentParser()
    group = add_model_arguments(p, backend="openai", choices=True, title="generator model",
                                generation=("temperature",), defaults={"temperature": 0.8})
    group.add_argument("--base-url")
    args = p.parse_args(["--model", "m"])
    assert (args.backend, args.temperature, args.base_url) == ("openai", 0.8, None)
    assert not hasattr(args, "max_new_tokens")
    assert "sampling temperature (0: greedy; default 0.8)" in " ".join(p.format_help().split())
    with pytest.raises(SystemExit):
        p.parse_args(["--model", "m", "--backend", "bedrock"])


@pytest.mark.parametrize("text", ["0", "-3", "x", "1.5", ""])
def test_positive_int_refuses_what_is_not_a_count_in_one_line(text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"expected an integer >= 1, got {text!r}"):
        positive_int(text)


def test_positive_int_reads_a_count():
    assert positive_int("12") == 12
