"""What every command line of the project shares: its exit codes, `KEY=VALUE` options,
`--shard i/n`, and how summaries write a share and counts by reason. (`eval` is the layer every
package imports, so the commands of `exploretom`, `tomsynth` and `rl` read their options here too.)"""
from __future__ import annotations

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
