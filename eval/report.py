"""Reports from results.json files: the paper-style table, bar charts, per-order plots.

One results file gives a run report; several give a comparison with deltas against the first
(as in ToM-Synth table 1, base vs trained). Both are written as Markdown (PNG charts beside it)
and as one self-contained HTML file (the same charts embedded as data URIs).

Scores are shown in percent: accuracy, and the benchmark's own headline metric where it has one
(OpenToM macro-F1, FANToM "All"). `Avg` is the mean over the benchmarks every compared run has.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from eval.benchmarks import BENCHMARKS, get_benchmark
from eval.benchmarks.base import CATEGORIES
from eval.charts import figure, png
from eval.report_html import html
from eval.results import label_of, score_of

ORDER_PLOTS = ("hitom", "exploretom")  # benchmarks whose by_order breakdown gets a plot


def display(name: str) -> str:
    """A benchmark's name in tables (its record's `display`), or the name itself."""
    return get_benchmark(name).title if name in BENCHMARKS else name


@dataclass
class Table:
    columns: list[str]  # benchmark names, then "Avg"
    labels: list[str]  # one per run
    cells: list[list[float | None]]  # percent, per run and column (Avg last)
    avg_over: list[str]  # the benchmarks the average is taken over


def _benchmark_order(runs: Sequence[dict[str, Any]]) -> list[str]:
    seen: dict[str, str] = {}
    for r in runs:
        for name, entry in r["benchmarks"].items():
            seen.setdefault(name, entry.get("category", ""))
    position = {name: i for i, name in enumerate(BENCHMARKS)}
    return sorted(seen, key=lambda n: (CATEGORIES.index(seen[n]) if seen[n] in CATEGORIES else 9,
                                       position.get(n, 99), n))


def build_table(runs: Sequence[dict[str, Any]]) -> Table:
    names = _benchmark_order(runs)
    scores = [[score_of(r["benchmarks"][n]) if n in r["benchmarks"] else None for n in names]
              for r in runs]
    common = [n for j, n in enumerate(names) if all(row[j] is not None for row in scores)]
    cells = []
    for row in scores:
        shared = [row[names.index(n)] for n in common]
        avg = sum(shared) / len(shared) if shared else None
        cells.append([None if v is None else 100 * v for v in row] + [None if avg is None else 100 * avg])
    return Table(columns=names + ["Avg"], labels=distinct_labels(runs), cells=cells,
                 avg_over=common)


def distinct_labels(runs: Sequence[dict[str, Any]]) -> list[str]:
    """Each run's label, made distinct where two runs share one (two checkpoints both called
    `final`, programmatic runs all labelled after a `scripted` backend): first by the model,
    then by where the results file is."""
    labels = [label_of(r) for r in runs]
    for extra in (lambda r: str(r.get("model") or "?"),
                  lambda r: str(Path(r["_path"]).parent) if r.get("_path") else "?"):
        clashing = {x for x in labels if labels.count(x) > 1}
        if not clashing:
            break
        labels = [f"{x} ({extra(r)})" if x in clashing else x for x, r in zip(labels, runs)]
    clashing = {x for x in labels if labels.count(x) > 1}
    return [f"{x} #{i + 1}" if x in clashing else x for i, x in enumerate(labels)]


def _fmt(value: float | None, base: float | None = None, deltas: bool = False) -> str:
    """A score in percent; a delta in percentage points."""
    if value is None:
        return "–"
    text = f"{value:.2f}%"
    if deltas and base is not None:
        text += f" ({value - base:+.2f} pp)"
    return text


def table_markdown(table: Table, *, deltas: bool = False) -> str:
    header = "| Model | " + " | ".join(map(display, table.columns)) + " |"
    rule = "|---|" + "---:|" * len(table.columns)
    lines = [header, rule]
    base = table.cells[0]
    for i, (label, row) in enumerate(zip(table.labels, table.cells)):
        shown = [_fmt(v, base[j], deltas and i > 0) for j, v in enumerate(row)]
        lines.append(f"| {label} | " + " | ".join(shown) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ charts


def scores_chart(table: Table) -> bytes:
    columns = table.columns
    fig = figure(max(6.0, 0.9 * len(columns) * max(1, len(table.labels)) ** 0.5 + 2), 3.8)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(table.labels))
    for i, (label, row) in enumerate(zip(table.labels, table.cells)):
        xs = [j + (i - (len(table.labels) - 1) / 2) * width for j in range(len(columns))]
        ax.bar(xs, [math.nan if v is None else v for v in row], width, label=label)  # gap if absent
    ax.set_xticks(range(len(columns)), [display(c) for c in columns], rotation=30, ha="right")
    ax.set_ylabel("score (%)")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return png(fig)


def order_chart(runs: Sequence[dict[str, Any]], benchmark: str) -> bytes | None:
    """Accuracy per belief order (0 = reality / first order questions as the benchmark defines)."""
    series = []
    for label, r in zip(distinct_labels(runs), runs):
        by_order = r["benchmarks"].get(benchmark, {}).get("metrics", {}).get("by_order")
        if isinstance(by_order, dict) and by_order:
            points = sorted(((_as_number(k), v.get("accuracy")) for k, v in by_order.items()
                             if isinstance(v, dict) and isinstance(v.get("accuracy"), (int, float))),
                            key=lambda p: p[0])
            if points:
                series.append((label, points))
    if not series:
        return None
    fig = figure(5.5, 3.4)
    ax = fig.add_subplot()
    for label, points in series:
        ax.plot([p[0] for p in points], [100 * p[1] for p in points], marker="o", label=label)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("order")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{display(benchmark)}: accuracy per order")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return png(fig)


def _as_number(key: str) -> float:
    try:
        return float(key)
    except ValueError:
        return math.inf


# -------------------------------------------------------------------------------- breakdowns


def _headline(group: dict[str, Any]) -> tuple[str, float] | None:
    for key in ("accuracy", "macro_f1", "f1", "score"):
        if isinstance(group.get(key), (int, float)):
            return key, float(group[key])
    return None


def breakdown_sections(runs: Sequence[dict[str, Any]]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, rows) tables: each benchmark's scalar metrics and by_<key> breakdowns,
    runs as columns."""
    labels = distinct_labels(runs)
    sections = []
    for name in _benchmark_order(runs):
        entries = [r["benchmarks"].get(name) for r in runs]
        metrics = [e.get("metrics", {}) if e else {} for e in entries]
        scalars: list[str] = []
        for m in metrics:
            for k, v in m.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in scalars:
                    scalars.append(k)
        rows = [[k] + [_cell(m.get(k), k) for m in metrics] for k in scalars]
        extra = [("format ok", "format_ok_rate"), ("failed", "n_failed"),
                 ("mean completion tokens", "mean_completion_tokens")]
        for title, key in extra:
            rows.append([title] + [_cell(e.get(key) if e else None, key) for e in entries])
        for how in ("tag", "fallback", "unparsed"):
            rows.append([f"read: {how}"] + [_read_cell(e, how) for e in entries])
        sections.append((display(name), ["metric", *labels], rows))
        keys: list[str] = []
        for m in metrics:
            keys += [k for k, v in m.items() if k.startswith("by_") and isinstance(v, dict) and k not in keys]
        for key in keys:
            values: list[str] = []
            for m in metrics:
                values += [v for v in (m.get(key) or {}) if v not in values]
            table_rows = []
            for value in values:
                cells = []
                for m in metrics:
                    group = (m.get(key) or {}).get(value)
                    head = _headline(group) if isinstance(group, dict) else None
                    n = group.get("n") if isinstance(group, dict) else None
                    cells.append("–" if head is None else
                                 f"{100 * head[1]:.1f}%" + (f" (n={n})" if n is not None else ""))
                table_rows.append([str(value), *cells])
            sections.append((f"{display(name)} {key.replace('_', ' ')}", [key[3:], *labels], table_rows))
    return sections


def _read_cell(entry: dict[str, Any] | None, how: str) -> str:
    """`n (share)` of the replies read that way; older results have no counts."""
    counts = (entry or {}).get("read")
    if not isinstance(counts, dict) or not sum(counts.values()):
        return "–"
    n = counts.get(how, 0)
    return f"{n} ({100 * n / sum(counts.values()):.0f}%)"


def _cell(value: Any, key: str) -> str:
    """Counts as integers, token lengths as they are, rates and scores (0-1) in percent."""
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key == "n" or key.startswith("n_"):
        return f"{value:.0f}"
    if key == "mean_completion_tokens" or not 0 <= value <= 1:
        return f"{value:.1f}"
    return f"{100 * value:.2f}%"


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
                     + ["| " + " | ".join(r) + " |" for r in rows])


# ------------------------------------------------------------------------------------ writing


def _run_facts(r: dict[str, Any]) -> list[str]:
    backend = r.get("backend") or {}
    commit = r.get("git_commit")
    return [
        f"model `{r.get('model')}` via `{backend.get('backend', '?')}`"
        + (f" ({', '.join(f'{k}={v}' for k, v in backend.items() if k not in ('backend', 'model') and v is not None)})"
           if len(backend) > 2 else ""),
        f"suite `{r.get('suite')}`, generation {r.get('generation')}",
        f"code {commit[:12] if commit else 'unknown'}{' (with local changes)' if r.get('git_dirty') else ''}, "
        f"started {r.get('started_at')}, took {r.get('duration_s')} s, "
        f"prompt template hash {str(r.get('prompt_template_hash'))[:12]}",
    ]


def write_report(runs: Sequence[dict[str, Any]], out_dir: str | Path, *, deltas: bool = False,
                 stem: str = "report", title: str | None = None) -> dict[str, Path]:
    """Write `<stem>.md`, `<stem>.html` and the PNG charts into `out_dir`; returns their paths."""
    if not runs:
        raise ValueError("no results to report")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = build_table(runs)
    title = title or ("Comparison" if len(runs) > 1 else f"Evaluation of {label_of(runs[0])}")
    images: list[tuple[str, str, bytes]] = [("Scores", f"{stem}_scores.png", scores_chart(table))]
    for name in ORDER_PLOTS:
        png = order_chart(runs, name)
        if png:
            images.append((f"{display(name)} per order", f"{stem}_{name}_by_order.png", png))
    written = {}
    for _, filename, png in images:
        (out / filename).write_bytes(png)
        written[filename] = out / filename

    avg_note = (f"Avg: mean over {len(table.avg_over)} benchmark(s) every run has "
                f"({', '.join(map(display, table.avg_over)) or 'none'})"
                + ("; deltas against the first row, in percentage points (pp)."
                   if deltas and len(runs) > 1 else "."))
    sections = breakdown_sections(runs)

    md = [f"# {title}", "", table_markdown(table, deltas=deltas), "", avg_note, ""]
    for label, r in zip(table.labels, runs):
        md += [f"**{label}**", *[f"- {fact}" for fact in _run_facts(r)], ""]
    for caption, filename, _ in images:
        md += [f"![{caption}]({filename})", ""]
    md += ["## Breakdowns", ""]
    for heading, header, rows in sections:
        md += [f"### {heading}", "", _md_table(header, rows), ""]
    text = "\n".join(md)
    (out / f"{stem}.md").write_text(text, encoding="utf-8")
    written[f"{stem}.md"] = out / f"{stem}.md"

    page = html(text, out)
    (out / f"{stem}.html").write_text(page, encoding="utf-8")
    written[f"{stem}.html"] = out / f"{stem}.html"
    return written
