"""Run a suite against a backend: generate, score, cache per sample, write results and a report.

Per benchmark, every row not already answered goes to the backend in one `generate` call (the
backend batches). Each answer is appended to `samples/<benchmark>.jsonl` as soon as it arrives
(`on_result`), so an interrupted run loses nothing: re-running the same command skips the ids
already there. A cached line is reused only when it was made by the same backend kind and model,
the same generation settings and the same prompt (each line carries a `run_key` and the hash of
its prompt); other lines are dropped and the file is rewritten without them. Scores are always
recomputed from the cached responses, so a fixed parser or scorer applies to old runs too.

All benchmarks' data are loaded before anything is generated, so a missing or malformed file
fails in seconds rather than after hours of generation. `results.json` is rewritten after every
benchmark.
"""
from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from eval.answers.reading import FALLBACK, HOW, NONE, TAG
from eval.backends.base import Backend, Completion, GenerationConfig
from eval.benchmarks import get_benchmark
from eval.benchmarks.base import REPO_ROOT, Benchmark, BenchmarkFormatError, Record, Row, mean, record_for
from eval.jsonl import numbered_records, write_json, write_jsonl
from eval.results import SCHEMA_VERSION
from eval.option_orders import with_option_orders
from eval.rows import resolve_system_prompt, with_system_prompt
from eval.selection import select_rows
from eval.suites import Suite, check_options

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _sha(obj: Any) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


IDENTITY_KEYS = ("revision", "base_url", "dtype", "quantization")  # settings that change answers


def run_key(backend: Backend, config: GenerationConfig) -> str:
    """What must match for a cached answer to be reused: who generated it, and how. (Batch size,
    device or concurrency do not count.)"""
    described = backend.describe()
    identity = {k: described[k] for k in IDENTITY_KEYS if described.get(k) is not None}
    return _sha({"backend": backend.name, "model": backend.model, **identity,
                 "generation": config.as_dict()})[:16]


class OutputInUse(ValueError):
    """An output folder that holds another model's run; the message is one line."""


def check_output(output_dir: str | Path, kind: str, model: str,
                 identity: dict[str, Any] | None = None) -> None:
    """Refuse to write over another model's run: two checkpoints with the same folder name
    (`runs/sft/final`, `runs/grpo/final`) get the same default output folder, and the second
    would silently drop the first one's answers and results. The same model (and backend kind,
    and the `identity` settings given) resumes as before."""
    path = Path(output_dir) / "results.json"
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # nothing there, or a damaged file that this run rewrites
    described = old.get("backend") if isinstance(old, dict) else None
    if not isinstance(described, dict):
        return
    mine = {"backend": kind, "model": str(model), **(identity or {})}
    theirs = {"backend": described.get("backend"), "model": old.get("model"),
              **{k: described.get(k) for k in identity or {}}}
    if mine != theirs:
        differ = ", ".join(f"{k} {theirs[k]!r} there, {mine[k]!r} here" for k in mine
                           if mine[k] != theirs[k])
        raise OutputInUse(f"{path}: holds the results of another run ({differ}); give another "
                          "--label or -o to keep both, or --fresh to replace them")


def git_state() -> tuple[str | None, bool | None]:
    """The commit of the code that ran, and whether tracked files differed from it."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=10,
                               check=True).stdout.strip()
        return commit or None, bool(dirty)
    except (OSError, subprocess.SubprocessError):
        return None, None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------- samples


class SampleFile:
    """`samples/<benchmark>.jsonl`: one line per (row, sample index), appended as answers
    arrive, rewritten in row order at the end."""

    def __init__(self, path: Path, key: str) -> None:
        self.path, self.key = path, key

    def cached(self, prompt_shas: dict[str, str], n: int, log: Log) -> tuple[dict[str, list[dict]], int]:
        """Complete cached answers by row id (all `n` samples present, same run key and prompt),
        and how many lines were dropped as stale or unreadable."""
        if not self.path.exists():
            return {}, 0
        by_id: dict[str, dict[int, dict]] = {}
        dropped = 0

        def unreadable(lineno: int) -> None:
            # the last line of a killed run may be cut short; anything else is damage
            nonlocal dropped
            log(f"warning: {self.path}: line {lineno}: unreadable, its sample will be redone")
            dropped += 1

        # a line of JSON that is not an object was not written by a run: one-line InputError
        for _, line in numbered_records(self.path, skip_torn=True, on_torn=unreadable):
            rid, sample = line.get("id"), line.get("sample", 0)
            if (rid not in prompt_shas or line.get("run_key") != self.key
                    or line.get("prompt_sha") != prompt_shas[rid] or not isinstance(sample, int)
                    or not isinstance(line.get("response"), str)):
                dropped += 1
                continue
            by_id.setdefault(rid, {})[sample] = line
        complete = {rid: [s[k] for k in range(n)] for rid, s in by_id.items()
                    if all(k in s for k in range(n))}
        return complete, dropped

    def rewrite(self, lines: list[dict]) -> None:
        write_jsonl(self.path, lines, default=str)

    def append(self, lines: list[dict]) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
            f.flush()


# ------------------------------------------------------------------------------- benchmarks


@dataclass
class Task:
    """One benchmark of a run, loaded and ready to generate."""

    benchmark: Benchmark
    rows: list[Row]
    config: GenerationConfig = GenerationConfig()
    data: str | None = None  # where the rows came from, for the record
    selection: dict[str, Any] | None = None  # limit / sample / options, for the record


@dataclass
class BenchmarkRun:
    records: list[Record] = field(default_factory=list)
    lines: list[dict] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    cached: int = 0
    generated: int = 0


def _line(row: Row, record: Record, sample: int, key: str, prompt_sha: str,
          completion: Completion | dict) -> dict:
    tokens = (completion.get("completion_tokens") if isinstance(completion, dict)
              else completion.completion_tokens)
    prompt_tokens = (completion.get("prompt_tokens") if isinstance(completion, dict)
                     else completion.prompt_tokens)
    return {
        "id": row["id"], "sample": sample, "run_key": key, "prompt_sha": prompt_sha,
        "prompt": row["prompt"], "choices": row["choices"],
        **record,
        "prompt_tokens": prompt_tokens, "completion_tokens": tokens,
    }


def run_benchmark(task: Task, backend: Backend, samples_dir: Path, *, fresh: bool = False,
                  progress: bool = True, log: Log = _stderr) -> BenchmarkRun:
    bench, rows, config = task.benchmark, task.rows, task.config
    key = run_key(backend, config)
    prompt_shas = {r["id"]: _sha(r["prompt"])[:16] for r in rows}
    if len(prompt_shas) != len(rows):
        raise ValueError(f"{bench.name}: row ids are not unique")
    store = SampleFile(samples_dir / f"{bench.name}.jsonl", key)
    cached, dropped = ({}, 0) if fresh else store.cached(prompt_shas, config.n, log)
    if fresh or dropped:
        # start afresh, keeping only the lines this run can use
        store.rewrite([line for rid in prompt_shas if rid in cached for line in cached[rid]])
    todo = [r for r in rows if r["id"] not in cached]
    run = BenchmarkRun(cached=len(rows) - len(todo))
    responses: dict[str, list[dict]] = {rid: lines for rid, lines in cached.items()}

    def on_result(i: int, completion: Completion) -> None:
        row = todo[i]
        if not completion.ok or len(completion.texts) < config.n:
            run.failed[row["id"]] = completion.error or f"{len(completion.texts)} of {config.n} samples"
            return
        lines = []
        for k, text in enumerate(completion.texts[: config.n]):
            record = record_for(row, text, bench)
            lines.append(_line(row, record, k, key, prompt_shas[row["id"]], completion))
        store.append(lines)
        responses[row["id"]] = lines
        run.generated += 1

    if todo:
        log(f"{bench.name}: generating {len(todo)} of {len(rows)} rows "
            f"({run.cached} cached) with {backend.name}:{backend.model}")
        backend.generate([r["prompt"] for r in todo], config, on_result=on_result, progress=progress)
    for row in rows:
        for cached_line in responses.get(row["id"], []):
            record = record_for(row, cached_line["response"], bench)  # always the current scorer
            record["sample"] = cached_line["sample"]
            run.records.append(record)
            run.lines.append(_line(row, record, cached_line["sample"], key,
                                   prompt_shas[row["id"]], cached_line))
    store.rewrite(run.lines)
    if run.failed:
        rid, error = next(iter(run.failed.items()))
        log(f"warning: {bench.name}: {len(run.failed)} prompt(s) failed, left out of the scores "
            f"and retried by the next run; first: row {rid!r}: {error}")
    return run


def _mean_tree(trees: list[Any]) -> Any:
    """The element-wise mean of metric dicts with the same shape (metrics per sample index)."""
    first = trees[0]
    if all(isinstance(t, dict) for t in trees):
        keys = [k for k in first if all(k in t for t in trees)]
        return {k: _mean_tree([t[k] for t in trees]) for k in keys}
    if all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in trees):
        return sum(trees) / len(trees)
    return first


def metrics_of(bench: Benchmark, records: list[Record], n: int) -> dict[str, Any]:
    """`Benchmark.metrics`; with several samples per prompt, the mean over sample indices of the
    metrics of each index (mean@n), so set-level metrics stay well defined."""
    if n == 1:
        return bench.metrics(records)
    per_sample = [bench.metrics([r for r in records if r.get("sample", 0) == k]) for k in range(n)]
    return _mean_tree(per_sample)


def read_counts(records: list[Record]) -> dict[str, Any]:
    """How the replies were read (eval.answers.reading): by their answer tags, by the fallback
    for untagged replies, or not at all (`extraction_failed`: scored wrong, counted apart)."""
    counts = {how: sum(1 for r in records if r.get("read") == how) for how in HOW}
    return {"read": {"tag": counts[TAG], "fallback": counts[FALLBACK], "unparsed": counts[NONE]},
            "extraction_failed": counts[NONE]}


def chance_and_positions(bench: Benchmark, rows: list[Row], records: list[Record]) -> dict[str, Any]:
    """The accuracy a uniform random answerer would get on these rows (None where some row's
    answers are open), and for multiple-choice rows the share of each position among the options
    chosen: a model that mostly answers one letter shows it here (`top_position_share`)."""
    chances = [bench.chance(r) for r in rows]
    out: dict[str, Any] = {"chance": (sum(chances) / len(chances)
                                      if chances and None not in chances else None)}
    chosen = [r["chosen"] for r in records if r.get("chosen")]
    if chosen:
        counts = Counter(chosen)
        top, n = max(sorted(counts.items()), key=lambda kv: kv[1])
        out.update(positions={k: counts[k] / len(chosen) for k in sorted(counts)},
                   top_position=top, top_position_share=n / len(chosen))
    return out


def summarise(task: Task, run: BenchmarkRun, seconds: float) -> dict[str, Any]:
    bench, config = task.benchmark, task.config
    metrics = metrics_of(bench, run.records, config.n) if run.records else {}
    score = metrics.get(bench.primary_metric)
    tokens = [line["completion_tokens"] for line in run.lines
              if isinstance(line.get("completion_tokens"), (int, float))]
    return {
        "category": bench.category,
        "primary_metric": bench.primary_metric,
        "score": score if isinstance(score, (int, float)) and math.isfinite(score) else None,
        "metrics": metrics,
        "n": len({r["id"] for r in run.records}),
        "n_failed": len(run.failed),
        "n_cached": run.cached,
        "samples_per_prompt": config.n,
        "format_ok_rate": mean([bool(r["format_ok"]) for r in run.records if "format_ok" in r], empty=None),
        **read_counts(run.records),
        **chance_and_positions(bench, task.rows, run.records),
        "mean_completion_tokens": mean(tokens, empty=None),
        "generation": config.as_dict(),
        "data": task.data,
        "selection": task.selection,
        "prompts_sha256": _sha([r["prompt"] for r in task.rows]),
        "samples_file": f"samples/{bench.name}.jsonl",
        "duration_s": round(seconds, 3),
        "notes": bench.notes,
    }


# ------------------------------------------------------------------------------------ suite


def load_tasks(suite: Suite, *, limit: int | None = None, sample: int | None = None,
               data: dict[str, str] | None = None,
               bench_options: dict[str, dict[str, Any]] | None = None,
               overrides: dict[str, Any] | None = None, skip_missing: bool = False,
               system_prompt: str | None = None, permutations: int | None = None,
               log: Log = _stderr) -> list[Task]:
    """Every benchmark's rows and settings; raises on the first missing or malformed input
    (with `skip_missing`, a benchmark without data at its default place is left out instead).
    `limit` (the first N items), `sample` (N random items, seeded by the run's `seed`) and
    `bench_options` (per benchmark name: its loader's options) override the suite's entries, as
    do `system_prompt` (`eval.rows.resolve_system_prompt`: the benchmark's own convention by
    default) and `permutations` (option orders of multiple-choice items, `eval.option_orders`)."""
    data, bench_options = data or {}, bench_options or {}
    named = {e.name for e in suite.benchmarks}
    for flag, given in (("--data", data), ("--bench-option", bench_options)):
        unknown = sorted(set(given) - named)
        if unknown:
            raise ValueError(f"{flag} names {', '.join(unknown)}, not in suite {suite.name!r} "
                             f"({', '.join(e.name for e in suite.benchmarks)})")
    tasks = []
    for entry in suite.benchmarks:
        bench = get_benchmark(entry.name)
        path = data.get(entry.name) or entry.data
        loader_options = {**entry.options, **bench_options.get(entry.name, {})}
        check_options(entry.name, loader_options)
        config = suite.generation_for(entry, overrides)
        try:
            rows = bench.load_rows(path, **loader_options)
        except (FileNotFoundError, BenchmarkFormatError) as e:
            if skip_missing and not path:  # data named explicitly must load
                log(f"warning: {entry.name}: skipped ({' '.join(str(e).split())})")
                continue
            if path:
                raise
            raise type(e)(f"{' '.join(str(e).split())} (give --data {entry.name}=PATH, or "
                          "--skip-missing to leave out the benchmarks without data here)"
                          ) from None
        if not rows:
            raise ValueError(f"{entry.name}: no rows in {path or bench.default_path()}")
        cap = min((x for x in (limit, entry.limit) if x), default=None)
        rows, selection = select_rows(rows, limit=cap, sample=sample or entry.sample,
                                      seed=config.seed or 0, name=entry.name, log=log)
        if loader_options:
            selection["options"] = loader_options
        system = resolve_system_prompt(
            system_prompt if system_prompt is not None else
            entry.system_prompt if entry.system_prompt is not None else suite.system_prompt,
            bench.system_prompt)
        rows = [{**r, "prompt": with_system_prompt(r["prompt"], system)} for r in rows]
        selection["system_prompt"] = system
        orders = permutations or entry.permutations or suite.permutations or 1
        if orders > 1:
            rows, fixed = with_option_orders(rows, orders)
            selection["permutations"] = orders
            if fixed:
                selection["items_in_release_order"] = fixed
        tasks.append(Task(bench, rows, config, str(path) if path else None, selection))
    if not tasks:
        raise ValueError(f"suite {suite.name!r}: no benchmark has data; give --data NAME=PATH")
    return tasks


def run_suite(
    suite: Suite,
    backend: Backend,
    output_dir: str | Path,
    *,
    limit: int | None = None,
    sample: int | None = None,
    data: dict[str, str] | None = None,
    bench_options: dict[str, dict[str, Any]] | None = None,
    overrides: dict[str, Any] | None = None,
    skip_missing: bool = False,
    system_prompt: str | None = None,
    permutations: int | None = None,
    log: Log = _stderr,
    **options: Any,
) -> dict[str, Any]:
    """Evaluate `backend` on every benchmark of `suite` (`load_tasks` picks the rows; see
    `run_tasks` for the other options)."""
    tasks = load_tasks(suite, limit=limit, sample=sample, data=data, bench_options=bench_options,
                       overrides=overrides, skip_missing=skip_missing,
                       system_prompt=system_prompt, permutations=permutations, log=log)
    return run_tasks(tasks, backend, output_dir, suite_name=suite.name,
                     generation=suite.generation_for(None, overrides), log=log, **options)


def run_tasks(
    tasks: list[Task],
    backend: Backend,
    output_dir: str | Path,
    *,
    suite_name: str = "custom",
    generation: GenerationConfig | None = None,
    label: str | None = None,
    fresh: bool = False,
    progress: bool = True,
    report: bool = True,
    log: Log = _stderr,
) -> dict[str, Any]:
    """Evaluate `backend` on loaded benchmarks; returns the results dict, also written to
    `output_dir/results.json` (after each benchmark) with `samples/` and the report.
    `generation` is the run-level setting recorded at the top of the results (each benchmark
    records its own)."""
    out = Path(output_dir)
    described = backend.describe()
    if not fresh:
        check_output(out, backend.name, backend.model,
                     {k: described[k] for k in IDENTITY_KEYS if described.get(k) is not None})
    samples_dir = out / "samples"
    samples_dir.mkdir(parents=True, exist_ok=True)
    commit, dirty = git_state()
    started = time.time()
    results: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "suite": suite_name,
        "label": label or str(backend.model).rstrip("/").split("/")[-1],
        "model": backend.model,
        "backend": described,
        "generation": (generation or (tasks[0].config if tasks else GenerationConfig())).as_dict(),
        "prompt_template_hash": None,
        "git_commit": commit,
        "git_dirty": dirty,
        "started_at": _now(),
        "finished_at": None,
        "duration_s": None,
        "benchmarks": {},
    }
    path = out / "results.json"
    write_json(path, results, default=str)  # claims the folder for this model from the start (check_output)
    for task in tasks:
        t0 = time.time()
        run = run_benchmark(task, backend, samples_dir, fresh=fresh, progress=progress, log=log)
        entry = summarise(task, run, time.time() - t0)
        results["benchmarks"][task.benchmark.name] = entry
        results["prompt_template_hash"] = _sha(
            [b["prompts_sha256"] for b in results["benchmarks"].values()])
        results["duration_s"] = round(time.time() - started, 3)
        write_json(path, results, default=str)
        shown = entry["score"]
        log(f"{task.benchmark.name}: {task.benchmark.primary_metric} "
            f"{'n/a' if shown is None else f'{100 * shown:.2f}%'} on {entry['n']} rows"
            + (f", {entry['n_failed']} failed" if entry["n_failed"] else ""))
    # set once every benchmark is in: a run killed part-way keeps finished_at null, and
    # `compare` refuses it instead of comparing half a run
    results["finished_at"] = _now()
    write_json(path, results, default=str)
    if report:
        from eval.report import write_report

        write_report([results], out)
    return results
