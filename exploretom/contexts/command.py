"""`python -m exploretom contexts`: the options, the run, and its summary (exit 3, naming the file
of reasons, when fewer than `-n` contexts were written)."""
from __future__ import annotations

import argparse
import sys

from eval.backends.base import GenerationConfig
from eval.cli_common import EXIT_INCOMPLETE
from eval.jsonl import hold, resume
from eval.outputs import check_fingerprint, start_over
from exploretom.contexts.pools import load_or_make_pools, pools_path
from exploretom.contexts.sampler import ContextSampler, ContextSpec, failures_path
from exploretom.llm.backend import add_backend_arguments
from exploretom.llm.command import check_reachable, generation_configs, message_log, opened_backends


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", type=int, required=True, help="number of contexts to write")
    parser.add_argument("--people", type=int, required=True, help="characters per context")
    parser.add_argument("--containers", type=int, default=3, help="containers per object (default 3)")
    parser.add_argument("--topics", type=int, default=3, help="chit-chat topics (default 3)")
    parser.add_argument("--visible", type=int, default=4,
                        help="visible state updates to propose per context (default 4)")
    parser.add_argument("--invisible", type=int, default=3,
                        help="invisible state updates to propose per context (default 3)")
    parser.add_argument("--min-visible", type=int, default=1,
                        help="fewest visible updates a kept context has after judging (default 1)")
    parser.add_argument("--min-invisible", type=int, default=1,
                        help="fewest invisible updates a kept context has after judging (default 1)")
    parser.add_argument("--pool", choices=["lexicon", "llm"], default="lexicon",
                        help="where names and settings come from: the offline lexicon (default) "
                             "or one request to the model (kept in OUTPUT.pools.json)")
    parser.add_argument("--pool-size", type=int, default=100,
                        help="names and settings asked for with --pool llm (default 100)")
    parser.add_argument("--max-attempts", type=int,
                        help="give up after this many attempts in all (default 3n + 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", required=True, help="JSONL of contexts (appended to; "
                        "a re-run with the same settings resumes it)")
    parser.add_argument("--fresh", action="store_true", help="start -o over (and its failures "
                        "and pools files) instead of resuming it")
    parser.add_argument("-q", "--quiet", action="store_true")
    add_backend_arguments(parser, temperature=0.8, max_new_tokens=1024)


def contexts_fingerprint(args: argparse.Namespace) -> dict:
    """What changes the contexts of an output (not -n or --max-attempts, how many; nor where
    the servers are)."""
    return {k: getattr(args, k) for k in (
        "people", "containers", "topics", "visible", "invisible", "min_visible", "min_invisible",
        "pool", "pool_size", "seed", "backend", "model", "temperature",
        "max_new_tokens", "judge_backend", "judge_model")}


def run(args: argparse.Namespace) -> int:
    if args.n < 1:
        raise ValueError("-n must be >= 1")
    spec = ContextSpec(args.people, args.containers, args.topics, args.visible, args.invisible,
                       args.min_visible, args.min_invisible)
    gen_config, judge_config = generation_configs(args)
    max_attempts = args.max_attempts if args.max_attempts is not None else 3 * args.n + 10
    log = message_log(args.quiet)
    with hold(args.output):  # one writer per output
        if args.fresh:
            start_over(args.output, failures_path(args.output))
            pools_path(args.output).unlink(missing_ok=True)
        done = resume(args.output)
        check_fingerprint(args.output, "contexts", contexts_fingerprint(args), len(done))
        with opened_backends(args) as (generator, judge):
            pool_config = GenerationConfig(
                max_new_tokens=max(args.max_new_tokens, 20 * args.pool_size),
                temperature=args.temperature, seed=args.seed)
            # the servers are tried first (seconds, instead of every request's retries), but
            # after a pools file on disk is read: a bad one is named whatever the servers do
            asks_pools = args.pool == "llm" and not pools_path(args.output).exists()
            if asks_pools:
                check_reachable(generator, judge)
            pools = load_or_make_pools(args.pool, pools_path(args.output), generator,
                                       args.pool_size, pool_config)
            if not asks_pools:
                check_reachable(generator, judge)
            sampler = ContextSampler(generator, judge, spec, pools, seed=args.seed,
                                     gen_config=gen_config, judge_config=judge_config,
                                     progress=not args.quiet, log=log)
            stats = sampler.run(args.output, args.n, max_attempts)
    print(stats.summary())
    total = stats.already + stats.written
    if total < args.n:
        reasons = failures_path(args.output)
        where = (f"; reasons are in {reasons}" if reasons.is_file() and reasons.stat().st_size
                 else "")
        requests = (f"; {stats.request_errors} attempts hit request errors and will be retried"
                    if stats.request_errors else "")
        print(f"error: {total} of {args.n} contexts after {max_attempts} attempts{where}"
              f"{requests} (raise --max-attempts and run again to continue)", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0
