"""`results.json`: the versioned record of one evaluation run, and reading it back.

Schema version 1:

    {
      "schema_version": 1,
      "suite": "tom", "label": "Qwen2.5-7B-Instruct",
      "model": "...", "backend": {...backend.describe()},
      "generation": {...suite-level GenerationConfig},
      "prompt_template_hash": "sha256 of the system prompt and every benchmark's prompts",
      "git_commit": "abc123..." | null, "git_dirty": false,
      "started_at": ISO time, "finished_at": ISO time, "duration_s": 12.3,
      "benchmarks": {
        "<name>": {
          "category": "tom" | "ei" | "iq",
          "primary_metric": "accuracy", "score": 0.71,     # metrics[primary_metric], 0-1
          "metrics": {...Benchmark.metrics(records): accuracy, breakdowns as by_<key>...},
          "n": 600, "n_failed": 0, "samples_per_prompt": 1, "format_ok_rate": 0.98,
          "generation": {...}, "data": "path" | null, "prompts_sha256": "...",
          "samples_file": "samples/<name>.jsonl", "duration_s": 3.2
        }, ...
      }
    }
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Collection

from eval.jsonl import InputError, read_jsonl

SCHEMA_VERSION = 1


class ResultsError(ValueError):
    """A results file that cannot be read; the message is one line naming the file."""


def load_results(path: str | Path) -> dict[str, Any]:
    """Read and check a results.json (or the folder holding one)."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}: line {e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsError(f"{path}: field 'schema_version': expected {SCHEMA_VERSION}, got {version!r}")
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, dict):
        raise ResultsError(f"{path}: field 'benchmarks': expected an object")
    for name, entry in benchmarks.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("metrics"), dict):
            raise ResultsError(f"{path}: field 'benchmarks.{name}.metrics': expected an object")
        score = entry.get("score")
        if score is not None and not (isinstance(score, (int, float)) and math.isfinite(score)):
            raise ResultsError(f"{path}: field 'benchmarks.{name}.score': expected a number, got {score!r}")
    data["_path"] = str(path)
    return data


def read_samples(folder: str | Path, names: Collection[str] | None = None
                 ) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """(label, benchmark -> its per-sample lines) of an `eval run` output folder, for the
    benchmarks among `names` (all when None); a samples file the results name but the folder
    lacks is an InputError."""
    folder = Path(folder)
    results = load_results(folder)
    out = {}
    for name, entry in results["benchmarks"].items():
        if names is not None and name not in names:
            continue
        path = folder / entry.get("samples_file", f"samples/{name}.jsonl")
        if not path.is_file():
            raise InputError(f"{path}: missing (the samples of {name})")
        out[name] = list(read_jsonl(path))
    return results.get("label") or folder.name, out


def label_of(results: dict[str, Any]) -> str:
    """How a run is named in tables: its label, else the model's last path component."""
    label = results.get("label") or str(results.get("model") or "?").rstrip("/").split("/")[-1]
    return str(label)


def score_of(entry: dict[str, Any]) -> float | None:
    """The headline number of one benchmark (0-1), or None when it has none."""
    score = entry.get("score")
    if score is None:
        score = entry.get("metrics", {}).get(entry.get("primary_metric", "accuracy"))
    return float(score) if isinstance(score, (int, float)) and math.isfinite(score) else None
