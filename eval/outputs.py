"""What every command that writes an output promises about it: the output is never one of the
command's inputs, and a resumed output is never the work of two different settings.

A resumable output (search, sample, infill, contexts) keeps the fingerprint of what made it, the
settings that change its records, in `<output>.run.json`, written before its first record. A
re-run with the same settings resumes; with other settings it is refused in one line naming what
changed, instead of appending records of a second run to the first's (an output written before
fingerprints were kept takes the settings of the run that resumes it, with a note). The third
promise, one
writer per output, is `eval.jsonl.hold` (the lock of the ToM-Synth logs).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable

from eval.jsonl import InputError, write_json


def _same(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        try:
            return a.samefile(b)
        except OSError:
            return False
    return a.resolve() == b.resolve()


def refuse_inputs(output: str | Path, inputs: Iterable[str | Path | None],
                  folder: bool = False) -> None:
    """InputError when `output` is one of `inputs` (or, for a `folder` output, holds one): the
    command would empty or replace what it reads. Checked before any work."""
    out = Path(output)
    for given in inputs:
        if given is None or str(given) == "":
            continue
        path = Path(given)
        if _same(out, path):
            raise InputError(f"{output}: is also an input of this command; writing it would "
                             "lose the input: choose another output path")
        if folder and out.resolve() in path.resolve().parents:
            raise InputError(f"{output}: holds the input {given}, which writing this folder "
                             "would lose: choose another output path")


def run_file(output: str | Path) -> Path:
    """Where the fingerprint of an output is kept."""
    return Path(str(output) + ".run.json")


def _flat(obj: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): obj}


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """'key: OLD there, NEW now' for every setting that differs (dotted keys), the settings
    both runs name first (a setting only one of them has is likely a new default)."""
    a, b = _flat(old), _flat(new)
    keys = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)),
                  key=lambda k: (not (k in a and k in b), k))
    return [f"{k}: {json.dumps(a.get(k))} there, {json.dumps(b.get(k))} now" for k in keys]


def check_fingerprint(output: str | Path, command: str, fingerprint: dict[str, Any],
                      records: int, fresh: str = "--fresh") -> None:
    """Resume `output` only if it was made with `fingerprint`; record it for a new output.
    `records`: how many records it already holds (nothing to protect when 0)."""
    side = run_file(output)
    fingerprint = json.loads(json.dumps(fingerprint, default=str))  # as it reads back
    if records and not side.exists():
        # an output written before fingerprints were kept: nothing to compare with, so this
        # run's settings are taken as its own from now on (said, not silent)
        print(f"note: {output}: {records} record(s) without a record of their settings "
              f"({side.name}); resuming with this run's settings, which are kept from now on",
              file=sys.stderr)
    elif records:
        try:
            old = json.loads(side.read_text(encoding="utf-8"))["fingerprint"]
        except (OSError, ValueError, KeyError, TypeError):
            raise InputError(f"{side}: not a fingerprint this tool wrote; pass {fresh} to start "
                             f"{output} over, or choose another output path") from None
        differ = changes(old, fingerprint)
        if differ:
            more = f" (and {len(differ) - 3} more)" if len(differ) > 3 else ""
            raise InputError(f"{output}: written by {command} with other settings ("
                             f"{'; '.join(differ[:3])}{more}); resuming would mix two runs: "
                             f"pass {fresh} to start it over, or choose another output path")
        return
    write_json(side, {"command": command, "fingerprint": fingerprint})


def start_over(*paths: str | Path) -> None:
    """Empty an output for `--fresh` (a file held open by `hold` stays the same file, so its
    lock stays held) and forget its fingerprint."""
    for p in map(Path, paths):
        if p.is_file():
            with open(p, "r+b") as f:
                f.truncate(0)
        run_file(p).unlink(missing_ok=True)
