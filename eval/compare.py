"""Compare runs: the paper-style table with deltas against the first run (ToM-Synth table 1:
base model first, trained model after), as Markdown and HTML."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from eval.report import build_table, table_markdown, write_report
from eval.results import ResultsError, load_results


def compare(paths: Sequence[str | Path], output: str | Path | None = None) -> str:
    """The comparison table as Markdown; with `output`, also compare.md, compare.html and the
    charts written there."""
    runs = [load_results(p) for p in paths]
    for run in runs:
        if "finished_at" in run and run["finished_at"] is None:  # as run_tasks leaves a killed run
            raise ResultsError(f"{run['_path']}: the run did not finish (finished_at is null): "
                               "run the same eval command again to complete it, then compare")
    if output is not None:
        write_report(runs, output, deltas=True, stem="compare")
    return table_markdown(build_table(runs), deltas=True)
