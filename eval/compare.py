"""Compare runs: the paper-style table with deltas against the first run (ToM-Synth table 1:
base model first, trained model after), as Markdown and HTML."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from eval.report import build_table, table_markdown, write_report
from eval.results import load_results


def compare(paths: Sequence[str | Path], output: str | Path | None = None) -> str:
    """The comparison table as Markdown; with `output`, also compare.md, compare.html and the
    charts written there."""
    runs = [load_results(p) for p in paths]
    if output is not None:
        write_report(runs, output, deltas=True, stem="compare")
    return table_markdown(build_table(runs), deltas=True)
