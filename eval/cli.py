"""`python -m eval`: run suites, compare runs, rebuild reports, list benchmarks and suites.

    python -m eval run tom --model runs/grpo/final --backend hf --limit 100
    python -m eval run tomi,hitom --model Qwen/Qwen2.5-7B-Instruct --backend vllm -O tensor_parallel_size=2
    python -m eval run configs/eval/iq.yaml --model gpt-4o --backend openai --data aime2025=/data/aime
    python -m eval compare runs/eval/base/tom/results.json runs/eval/trained/tom/results.json -o cmp/
    python -m eval report runs/eval/base/tom/results.json
    python -m eval list

Expected failures (missing or malformed files, unknown names, invalid suites, a backend that
cannot start) print one line `error: ...` and exit with status 2. A run whose backend gave up on
some prompts (after its retries) exits 3; an interrupted run exits 130. Either continues where it
stopped when the same command is run again.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from eval.backends.base import GenerationSettings
from eval.cli_common import (EXIT_ERROR, EXIT_INCOMPLETE, EXIT_INTERRUPTED, add_model_arguments,
                             parse_pairs)
from eval.jsonl import hold, make_parent
from eval.outputs import refuse_inputs
from eval.paths import describe_error


class CliError(ValueError):
    pass


# a run's flags override every generation setting
GENERATION = tuple(GenerationSettings.model_fields)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-") or "model"


def _suite_settings() -> str:
    """The settings of a suite file, from its fields (imports every benchmark: only for --help)."""
    from eval.config_file import settings_help
    from eval.suites import BenchmarkEntry, Suite

    return ("Settings of a suite file (configs/eval/*.yaml):\n"
            + "\n".join(settings_help(Suite, indent="  ")) + "\n  each entry of benchmarks:\n"
            + "\n".join(settings_help(BenchmarkEntry, indent="    ")))


def _parser(helping: bool = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m eval",
                                description="Evaluate models on ToM, EI and IQ benchmarks.")
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate a model on a suite or on named benchmarks",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=_suite_settings() if helping else None)
    run.add_argument("suite", nargs="+", metavar="SUITE_OR_NAMES",
                     help="a suite YAML, a suite name from configs/eval (tom, ei, iq, all, "
                          "tom-synth-paper, exploretom-paper) or benchmark names (tomi,hitom)")
    add_model_arguments(run, generation=GENERATION, generation_title="generation (override the suite)",
                        notes={"seed": "; also draws the items of --sample (default 0)"})
    run.add_argument("--limit", type=int,
                     help="the first N items of each benchmark (release order), for quick checks")
    run.add_argument("--sample", type=int,
                     help="N items of each benchmark drawn at random with --seed (default 0), "
                          "as papers sample; overrides the suite's 'sample'")
    run.add_argument("--system-prompt", metavar="PROMPT",
                     help="the system message: default (each benchmark's own convention), tags "
                          "(the think/answer prompt everywhere), none, the text itself or @FILE; "
                          "overrides the suite's")
    run.add_argument("--permutations", type=int, metavar="K",
                     help="ask each multiple-choice item in K option orders (cyclic shifts) and "
                          "score the mean, so a habit of answering one position scores chance")
    run.add_argument("--bench-option", action="append", metavar="NAME.KEY=VALUE",
                     help="a benchmark loader's option, repeatable; values are read as YAML "
                          "(tombench.permutations=5: five option orders, majority vote)")
    run.add_argument("-o", "--output", help="output folder (default runs/eval/<label>/<suite>)")
    run.add_argument("--data", action="append", metavar="NAME=PATH",
                     help="a benchmark's data in its release format, repeatable")
    run.add_argument("--label", help="the run's name in tables (default: the model's name)")
    run.add_argument("--fresh", action="store_true", help="ignore cached samples and start over")
    run.add_argument("--skip-missing", action="store_true",
                     help="leave out benchmarks with no data at their default place instead of failing")
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    run.add_argument("--no-report", action="store_true", help="write results.json and samples only")

    cmp = sub.add_parser("compare", help="table of several runs with deltas against the first")
    cmp.add_argument("results", nargs="+", help="results.json files (or their folders)")
    cmp.add_argument("-o", "--output", help="write compare.md, compare.html and charts here")

    rep = sub.add_parser("report", help="rebuild report.md/report.html from results")
    rep.add_argument("results", nargs="+", help="results.json files (or their folders)")
    rep.add_argument("-o", "--output", help="folder (default: the first results file's folder)")

    sub.add_parser("list", help="list benchmarks (with their default data) and suites")
    return p


def _run(args: argparse.Namespace) -> int:
    from eval.backends import load_backend
    from eval.runner import check_output, load_tasks, run_tasks
    from eval.suites import resolve_suite

    try:
        suite = resolve_suite(args.suite)
    except UnicodeDecodeError as e:
        raise CliError(f"{' '.join(args.suite)}: not a UTF-8 text file ({e.reason})") from None
    for flag, value in (("--limit", args.limit), ("--sample", args.sample),
                        ("--permutations", args.permutations)):
        if value is not None and value < 1:
            raise CliError(f"{flag} must be >= 1, got {value}")
    if args.limit is not None and args.sample is not None:
        raise CliError("--limit and --sample both choose the items: give one (--limit N: the "
                       "first N of each benchmark; --sample N: N drawn at random)")
    system_prompt = args.system_prompt
    if system_prompt and system_prompt.startswith("@"):
        system_prompt = Path(system_prompt[1:]).read_text(encoding="utf-8")
    overrides = {name: getattr(args, name) for name in GENERATION}
    data = parse_pairs(args.data, "--data", yaml_values=False)
    options = parse_pairs(args.backend_option, "--backend-option")
    bench_options: dict[str, dict[str, Any]] = {}
    for key, value in parse_pairs(args.bench_option, "--bench-option").items():
        name, dot, option = key.partition(".")
        if not dot or not option:
            raise CliError(f"--bench-option expects NAME.KEY=VALUE, got {key!r}")
        bench_options.setdefault(name, {})[option] = value
    # every input is read and checked before the (possibly slow) model load
    tasks = load_tasks(suite, limit=args.limit, sample=args.sample, data=data,
                       bench_options=bench_options, overrides=overrides,
                       skip_missing=args.skip_missing, system_prompt=system_prompt,
                       permutations=args.permutations)
    label = args.label or Path(str(args.model).rstrip("/")).name or str(args.model)
    output = Path(args.output) if args.output else Path("runs/eval") / _slug(label) / _slug(suite.name)
    refuse_inputs(output, data.values())
    if not args.fresh:  # before the model load; run_suite checks again with the loaded backend
        check_output(output, args.backend, str(args.model))
    created = not output.exists()
    make_parent(output / "results.json")  # the folder, or one line when a part of it is a file
    try:
        with hold(output):  # one writer per output folder, before the (slow) model load
            backend = load_backend(args.backend, args.model, **options)
            try:
                results = run_tasks(tasks, backend, output, suite_name=suite.name,
                                    generation=suite.generation_for(None, overrides), label=label,
                                    fresh=args.fresh, progress=not args.no_progress,
                                    report=not args.no_report)
            finally:
                backend.close()
    except BaseException:
        if created and not any(output.iterdir()):
            output.rmdir()  # a run that failed before writing leaves no empty folder
        raise
    from eval.report import build_table, table_markdown

    print(table_markdown(build_table([results])))
    print(f"\nwrote {output / 'results.json'}" + ("" if args.no_report else
          f", {output / 'report.md'} and {output / 'report.html'}"))
    failed = sum(b.get("n_failed", 0) for b in results["benchmarks"].values())
    if failed:
        print(f"error: {failed} prompt(s) failed (see the warnings above) and are left out of "
              "the scores; running the same command again retries them", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def _list() -> int:
    from eval.benchmarks import BENCHMARKS, get_benchmark
    from eval.suites import SUITES_DIR, available_suites, load_suite_file, loader_options

    print("benchmarks:")
    for name in BENCHMARKS:
        try:
            b = get_benchmark(name)
            where = b.default_path()
            options = loader_options(name)
            print(f"  {name:<13} {b.category:<4} default data {where}"
                  + ("" if where.exists() else " (missing)")
                  + (f"; --bench-option {name}.{{{','.join(options)}}}" if options else ""))
        except (ImportError, KeyError) as e:
            print(f"  {name:<13} unavailable ({e})")
    print("suites:")
    for name in available_suites():
        suite = load_suite_file(SUITES_DIR / f"{name}.yaml")
        print(f"  {name:<17} {', '.join(b.name for b in suite.benchmarks)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser(helping="-h" in argv or "--help" in argv).parse_args(argv)
    from eval.backends import BackendError
    from eval.benchmarks import UnknownBenchmark

    try:
        if args.command == "run":
            return _run(args)
        if args.command == "compare":
            from eval.compare import compare

            print(compare(args.results, args.output))
            if args.output:
                print(f"\nwrote {Path(args.output) / 'compare.md'} and {Path(args.output) / 'compare.html'}")
            return 0
        if args.command == "report":
            from eval.report import write_report
            from eval.results import load_results

            runs = [load_results(p) for p in args.results]
            out = Path(args.output) if args.output else Path(runs[0]["_path"]).parent
            written = write_report(runs, out, deltas=len(runs) > 1)
            print("wrote " + ", ".join(str(p) for p in written.values()))
            return 0
        return _list()
    except KeyboardInterrupt:
        print("interrupted: answers so far are saved; run the same command again to continue",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ValueError, OSError, UnknownBenchmark, BackendError, ImportError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return EXIT_ERROR
