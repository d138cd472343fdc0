"""What every command line of the project shares: its exit codes, the flags that name a model
and its generation settings, `KEY=VALUE` options, `--shard i/n`, and how summaries write a share
and counts by reason. (`eval` is the layer every
package imports, so the commands of `exploretom`, `tomsynth` and `rl` read their options here too.)"""
from __future__ import annotations

import argparse
from collections import Counter
from typing import Any, Mapping, Sequence

EXIT_ERROR = 2  # bad input: one line `error: ...`
EXIT_INCOMPLETE = 3  # the command ran, but some requests failed for good: running it again retries them
EXIT_INTERRUPTED = 130


def parse_pairs(values: Sequence[str] | None, flag: str, yaml_values: bool = True) -> dict[str, Any]:
    """`KEY=VALUE` options into a dict, values read as YAML (`5`, `0.5`, `true`, `[5, 3]`) unless
    `yaml_values` is off (paths); `flag` names them in the one-line errors (ValueError)."""
    import yaml

    out: dict[str, Any] = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} expects KEY=VALUE, got {item!r}")
        if not yaml_values or not value.strip():
            # `api_key_env=` means the empty string (send no key), not YAML's null
            out[key.strip()] = value
            continue
        try:
            out[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ValueError(f"{flag} {key.strip()}: cannot read the value {value!r}") from None
    return out


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (`--stories 0` or `--stories x` is a one-line usage error)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def parse_shard(text: str) -> tuple[int, int]:
    """`--shard i/n` -> (i, n) with 0 <= i < n (ValueError otherwise)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like i/n (e.g. 0/4), got {text!r}") from None
    if not 0 <= i < n:
        raise ValueError(f"--shard {text}: need 0 <= i < n")
    return i, n


def share(part: int, whole: int) -> str:
    """`part` of `whole` as a percentage for a summary line ("37.5%"; "n/a" of nothing)."""
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def bracketed_counts(counts: Mapping[str, int]) -> str:
    """Counts by reason for a summary line, most frequent first: " [truncated=9 no_json=2]"
    ("" when there are none)."""
    if not counts:
        return ""
    return " [" + " ".join(f"{k}={v}" for k, v in Counter(counts).most_common()) + "]"


def add_model_arguments(parser: Any, *, backend: str = "hf", choices: bool = False,
                        generation: Sequence[str] = (), defaults: Mapping[str, Any] | None = None,
                        notes: Mapping[str, str] | None = None, title: str | None = None,
                        generation_title: str | None = None) -> Any:
    """The flags that name a model and say how it is asked, for any command line, generated
    from the fields that declare them: `--model` and `--backend` (eval.backends.spec.ModelSpec;
    default `backend`, `choices`: argparse refuses other kinds), `-O KEY=VALUE` (an option of the
    backend), and one flag per generation setting in `generation` (`--max-new-tokens`,
    `--temperature`, ...: eval.backends.GenerationSettings; a list setting is a repeatable flag).
    The help is the field's description, then the command's `notes` on it; a setting's default
    is the command's (`defaults`), else None: the setting is left to the next level (a suite,
    the backend). `title`: the group of the model flags (None: the parser's options);
    `generation_title`: the group of the generation flags (None: with the model flags).
    Returns the group of the model flags, for the command's own additions."""
    import typing

    from eval.backends import BACKENDS
    from eval.backends.base import GenerationSettings
    from eval.backends.spec import ModelSpec

    defaults, notes = dict(defaults or {}), dict(notes or {})
    group = parser.add_argument_group(title) if title else parser
    group.add_argument("--model", required=True, help=ModelSpec.model_fields["model"].description)
    group.add_argument("--backend", default=backend, choices=list(BACKENDS) if choices else None,
                       help=f"{ModelSpec.model_fields['backend'].description} (default {backend})")
    group.add_argument("-O", "--backend-option", action="append", metavar="KEY=VALUE",
                       help="an option of the backend, repeatable, its value read as YAML "
                            "(batch_size=16 or dtype=bfloat16 for hf, concurrency=64 or "
                            "api_key_env=MY_KEY for openai; docs/eval.md lists each backend's)")
    gen = parser.add_argument_group(generation_title) if generation_title else group
    for name in generation:
        info = GenerationSettings.model_fields[name]
        kind = next((a for a in typing.get_args(info.annotation) if a is not type(None)),
                    info.annotation)
        repeated = typing.get_origin(info.annotation) is tuple
        default = defaults.get(name)
        help_text = info.description + ("; repeatable" if repeated else "")
        if default is not None:  # "(0: greedy)" -> "(0: greedy; default 0.8)"
            help_text = (f"{help_text[:-1]}; default {default})" if help_text.endswith(")")
                         else f"{help_text} (default {default})")
        help_text += notes.get(name, "")
        gen.add_argument(f"--{name.replace('_', '-')}", default=default, help=help_text,
                         **({"action": "append"} if repeated else {"type": kind}))
    return group
