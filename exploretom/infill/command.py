"""`python -m exploretom infill`: the options, the input read one story at a time (invalid lines
reported and skipped), the run, and its summary (exit 3 when a request failed for good: those
stories are left for the next run)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Iterator

from eval.cli_common import EXIT_INCOMPLETE
from eval.jsonl import Appender, InputError, hold, iter_lines, resume
from eval.outputs import check_fingerprint, refuse_inputs, start_over
from exploretom.infill.infiller import Infiller, InfillStats
from exploretom.infill.jobs import StoryJob, prepare
from exploretom.llm.backend import add_backend_arguments
from exploretom.llm.command import check_reachable, generation_configs, message_log, opened_backends
from exploretom.semantics.story import StoryFormatError
from exploretom.semantics.tracker import StoryError


def read_jobs(path: str, done: set, seed: int, max_order: int, goals: bool, narration: bool,
              stats: InfillStats, log: Callable[[str], None], limit: int | None = None
              ) -> Iterator[StoryJob]:
    """Jobs for the stories of a labelled JSONL not yet in `done`; invalid lines are reported
    (file and line) and skipped."""
    seen: set = set()
    given = 0
    for n, line in iter_lines(path):
        if limit is not None and given >= limit:
            return
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            stats.invalid_input += 1
            log(f"{path}: line {n}: not valid JSON, skipped")
            continue
        if not isinstance(raw, dict) or "error" in raw:
            stats.invalid_input += 1
            log(f"{path}: line {n}: not a labelled story, skipped")
            continue
        sid = raw.get("id")
        if not isinstance(sid, (str, int)) or sid in seen:
            stats.invalid_input += 1
            log(f"{path}: line {n}: missing or repeated id {sid!r}, skipped")
            continue
        seen.add(sid)
        if sid in done:
            stats.already += 1
            continue
        try:
            job = prepare(raw, seed, max_order, goals, narration)
        except (StoryFormatError, StoryError) as e:
            stats.invalid_input += 1
            log(f"{path}: line {n}: {e}, skipped")
            continue
        given += 1
        yield job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", help="labelled stories (JSONL from sample --label, label or search)")
    parser.add_argument("-o", "--output", required=True, help="infilled stories (JSONL, appended "
                        "to; a re-run with the same settings resumes it)")
    parser.add_argument("--fresh", action="store_true", help="start -o over instead of resuming it")
    parser.add_argument("--candidates", type=int, default=3,
                        help="continuations asked for in each generator call (default 3)")
    parser.add_argument("--max-retries", type=int, default=2,
                        help="extra generator calls per step once all candidates are rejected "
                             "(default 2)")
    parser.add_argument("--goals", action="store_true", help="sample a goal per character first")
    parser.add_argument("--narration", action="store_true",
                        help="open the story with a two-sentence scene without people")
    parser.add_argument("--judge-order", type=int, default=2,
                        help="highest belief order of the facts the judge checks (default 2)")
    parser.add_argument("--active", type=int, default=64,
                        help="stories infilled in parallel (default 64)")
    parser.add_argument("--limit", type=int, help="infill at most this many new stories")
    parser.add_argument("--seed", type=int, default=0, help="seed of the desiderata and sampling")
    parser.add_argument("-q", "--quiet", action="store_true")
    add_backend_arguments(parser, temperature=0.8, max_new_tokens=768)


def _check_input(path: str) -> None:
    """InputError (one line naming the file) unless some line looks like a labelled story."""
    lines = 0
    for _, line in iter_lines(path):
        lines += 1
        try:
            raw = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(raw, dict) and "error" not in raw and isinstance(raw.get("actions"), list):
            return
    raise InputError(f"{path}: no labelled story in {lines} line(s) (make them with "
                     "python -m exploretom sample --label or label)")


def infill_fingerprint(args: argparse.Namespace) -> dict:
    """What changes the stories of an infill output (not --limit, --active, -O, --cache or the
    servers' addresses: they change how much is done, how fast and where, not what)."""
    return {"input": str(Path(args.input).resolve()), **{k: getattr(args, k) for k in (
        "candidates", "max_retries", "goals", "narration", "judge_order", "seed",
        "backend", "model", "temperature", "max_new_tokens", "judge_backend",
        "judge_model")}}


def run(args: argparse.Namespace) -> int:
    if args.judge_order < 1 or args.active < 1 or (args.limit is not None and args.limit < 1):
        raise ValueError("--judge-order, --active and --limit must be >= 1")
    if args.candidates < 1 or args.max_retries < 0:
        raise ValueError("--candidates must be >= 1 and --max-retries >= 0")
    refuse_inputs(args.output, [args.input])
    _check_input(args.input)  # a missing, unreadable or storyless input fails before any model loads
    log = message_log(args.quiet)
    with hold(args.output):  # one writer per output
        if args.fresh:
            start_over(args.output)
        done = resume(args.output)
        check_fingerprint(args.output, "infill", infill_fingerprint(args), len(done))
        with opened_backends(args) as (generator, judge):
            check_reachable(generator, judge)
            gen_config, judge_config = generation_configs(args)
            infiller = Infiller(generator, judge, candidates=args.candidates,
                                max_retries=args.max_retries, gen_config=gen_config,
                                judge_config=judge_config, progress=not args.quiet, log=log)
            jobs = read_jobs(args.input, done, args.seed, args.judge_order, args.goals,
                             args.narration, infiller.stats, log, args.limit)
            total = sum(1 for _ in iter_lines(args.input))
            if args.limit is not None:
                total = min(total, args.limit)
            with Appender(args.output) as out:
                stats = infiller.run(jobs, out.write, args.active, total=max(total - len(done), 0))
    print(stats.summary())
    if stats.request_errors:
        print(f"error: {stats.request_errors} stories were not written because a request failed "
              "(see the messages above); run the same command again to infill them",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
