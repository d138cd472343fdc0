"""`python -m exploretom`: ExploreToM data commands (label, sample, stats, search, export, ...)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Sequence

from eval.cli_common import parse_shard, positive_int
from eval.jsonl import Appender, InputError, hold, iter_lines, iter_records, resume
from eval.outputs import check_fingerprint, refuse_inputs, start_over
from eval.paths import describe_error
from exploretom.cli_args import UsageError, sample_one, story_id
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.sampler import ConditionsUnreachable
from exploretom.semantics.label import label_line, validate
from exploretom.semantics.story import StoryFormatError
from exploretom.semantics.tracker import StoryError


def cmd_sample(args: argparse.Namespace) -> int:
    try:
        cond = Conditions(args.action_set, args.people, args.moves, args.rooms, args.max_actions,
                          args.asymmetric, args.max_asymmetric)
    except ValueError as e:
        raise UsageError(str(e)) from None
    refuse_inputs(args.output, [args.contexts])
    contexts = load_contexts(args.contexts, cond) if args.contexts else None
    shard_i, shard_n = parse_shard(args.shard)
    with hold(args.output):  # one writer per output
        if args.fresh:
            start_over(args.output)
        done = resume(args.output)
        check_fingerprint(args.output, "sample", sample_fingerprint(args), len(done))
        todo = [k for k in range(args.n) if k % shard_n == shard_i
                and story_id(cond, args.seed, k) not in done]
        start = time.perf_counter()
        with Appender(args.output) as out:
            for k in _progress(todo, "sampling", args.quiet):
                out.write(sample_one(cond, args.seed, k, args.label, args.max_order, contexts,
                                     not args.unsteered, not args.unconstrained))
    secs = time.perf_counter() - start
    if not args.quiet:
        print(f"wrote {len(todo)} stories to {args.output} ({len(done)} already there) "
              f"in {secs:.1f}s", file=sys.stderr)
    return 0


def sample_fingerprint(args: argparse.Namespace) -> dict:
    """What changes the stories of a `sample` output (not -n: a larger -n extends the same
    stories; not --shard: shards write different stories of one run)."""
    return {k: getattr(args, k) for k in (
        "action_set", "asymmetric", "max_asymmetric", "people", "moves", "rooms", "max_actions",
        "seed", "label", "max_order", "contexts", "unsteered", "unconstrained")}


def load_contexts(path: str, cond: Conditions) -> list:
    """Contexts from a `contexts` output file with enough people and rooms for `cond`."""
    from exploretom.contexts.records import context_from_record, read_contexts

    records = [r for r in read_contexts(path)
               if len(r["people"]) >= cond.people and len(r["rooms"]) >= cond.rooms]
    if not records:
        raise UsageError(f"{path}: no context has {cond.people} people and {cond.rooms} rooms")
    return [context_from_record(r, people=cond.people, rooms=cond.rooms) for r in records]


def cmd_label(args: argparse.Namespace) -> int:
    refuse_inputs(args.output, [args.input])
    n = questions = 0
    errors: list[str] = []  # printed at the end: a file with no valid story is one error line
    # labelling is fast: always a fresh file, written beside the output and renamed over it
    # once complete, so a failed or killed run leaves any earlier output as it was, and two
    # runs on one output each replace it whole (no lock needed)
    out_path = Path(args.output)
    if out_path.is_dir():
        raise InputError(f"{out_path}: is a folder, expected a file")
    tmp = out_path.with_name(f"{out_path.name}.tmp{os.getpid()}")
    try:
        with Appender(tmp) as out:
            for line_no, line in iter_lines(args.input):
                result = label_line(line, args.max_order, line_no)
                n += 1
                if "error" in result:
                    errors.append(result["error"])
                else:
                    questions += len(result["questions"])
                out.write(result)
            if n == 0:
                raise InputError(f"{args.input}: no stories (the file is empty)")
            if len(errors) == n:
                more = f"; {n - 1} more invalid" if n > 1 else ""
                raise InputError(f"{args.input}: no valid story ({errors[0]}{more})")
            out.close()
            os.replace(tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    for message in errors:
        print(f"{args.input}: {message}", file=sys.stderr)
    print(f"labelled {n - len(errors)} of {n} stories ({questions} questions, {len(errors)} errors) "
          f"-> {args.output}", file=sys.stderr)
    return 1 if (args.strict and errors) else 0


def cmd_stats(args: argparse.Namespace) -> int:
    from exploretom.datasets.stats import format_stats, story_stats

    def stories():
        for at, story in iter_records(args.input):
            if "error" not in story:  # a story `label` rejected is counted as invalid
                try:
                    validate(story)  # what `label` would say of it
                except (StoryFormatError, StoryError) as e:
                    raise InputError(f"{at}: not a valid story: {e}") from None
            yield story

    try:
        st = story_stats(stories())
    except (KeyError, TypeError, AttributeError) as e:  # questions not as `label` writes them
        raise InputError(f"{args.input}: not a labelled story file ({type(e).__name__}: {e})") from None
    if st["stories"] + st["errors"] == 0:
        raise InputError(f"{args.input}: no stories (the file is empty)")
    print(format_stats(st))
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    from exploretom.semantics.label import label_story
    from exploretom.semantics.story import parse_story
    from exploretom.semantics.trace import StoryTracer
    from exploretom.semantics.replay import Replay
    from exploretom.semantics.trace_check import TraceError, check_trace

    failed = 0
    for at, record in iter_records(args.stories):
        try:
            st = parse_story(record)
        except StoryFormatError as e:
            raise InputError(f"{at}: not a valid story: {e}") from None
        qs = label_story(st, args.max_order)["questions"]
        tracer, replay = StoryTracer(st.actions, args.max_order), Replay(st.actions,
                                                                         args.max_order)
        for q in qs:
            tr = tracer.trace(q)
            try:
                ok = check_trace(tr, replay, q) == q["answer"]
            except TraceError as e:
                ok, tr = False, f"{tr}\n(check failed: {e})"
            failed += not ok
            head = f"{q['question']} -> {q['answer']}" + ("" if ok else "  [CHECK FAILED]")
            print(f"**{head}**\n```text\n{tr}\n```\n" if args.markdown
                  else f"{head}\n{tr}\n")
    return 1 if failed else 0


def _progress(items: list, desc: str, quiet: bool):
    if quiet or len(items) < 50:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, unit="story", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m exploretom", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("label", help="add rendered text and questions to story structures")
    p.add_argument("input", help="JSONL of story structures (STORY_FORMAT.md)")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--max-order", type=int, default=2, help="highest belief order (default 2)")
    p.add_argument("--strict", action="store_true", help="exit non-zero if any story is invalid")
    p.set_defaults(func=cmd_label)

    p = sub.add_parser("sample", help="random valid stories meeting user conditions")
    p.add_argument("--action-set", required=True, choices=list(ACTION_SETS))
    p.add_argument("--asymmetric", action="store_true", help="one action gets a peeker or a "
                   "distracted witness")
    p.add_argument("--max-asymmetric", type=int, default=1)
    p.add_argument("--people", type=int, required=True)
    p.add_argument("--moves", type=int, required=True, help="number of important actions")
    p.add_argument("--rooms", type=int, required=True)
    p.add_argument("--max-actions", type=int, required=True)
    p.add_argument("-n", type=positive_int, required=True, help="number of stories")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--label", action="store_true", help="also write text and questions")
    p.add_argument("--max-order", type=int, default=2)
    p.add_argument("--shard", default="0/1", help="i/n: write only stories k with k %% n == i")
    p.add_argument("--contexts", help="draw contexts from a `contexts` output file instead of "
                   "the offline lexicon")
    p.add_argument("--unsteered", action="store_true", help="uniform random walks kept only "
                   "when they meet the conditions (the paper's randomly sampled stories), "
                   "instead of walks steered towards the conditions")
    p.add_argument("--unconstrained", action="store_true", help="allow what the default "
                   "sampler forbids (the paper's sampler): an action repeated back to back, "
                   "entering and at once leaving a room, talk before the people entered")
    p.add_argument("-o", "--output", required=True, help="JSONL of stories (appended to; a "
                   "re-run with the same settings resumes it)")
    p.add_argument("--fresh", action="store_true", help="start -o over instead of resuming it")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("stats", help="counts of stories and questions in a labelled JSONL")
    p.add_argument("input")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("trace", help="every question of each story with its answer and its "
                       "reasoning trace, each checked by exploretom.semantics.trace_check; exits 1 "
                       "if one fails the check")
    p.add_argument("stories", help="story structures, JSON Lines (STORY_FORMAT.md)")
    p.add_argument("--max-order", type=int, default=2)
    p.add_argument("--markdown", action="store_true", help="one block per question")
    p.set_defaults(func=cmd_trace)

    from exploretom.report import command as report
    from exploretom.search import bench as search_bench, run as search_run
    from exploretom.datasets import export
    from exploretom.contexts import command as contexts_command
    from exploretom.infill import command as infill_command

    search_run.add_search_arguments(sub.add_parser(
        "search", help="A* (and/or the baseline) over a grid of settings, from a run YAML"))
    search_bench.add_bench_arguments(sub.add_parser(
        "bench-search", help="A* vs overgenerate-and-filter at equal budget, scripted target"))
    for name, module, text in (("export", export, "labelled stories -> Hugging Face DatasetDict"),
                               ("report", report, "the paper's tables from search runs"),
                               ("contexts", contexts_command, "sample story contexts with an LLM"),
                               ("infill", infill_command, "turn story structures into natural text "
                                "with an LLM, judged step by step")):
        p = sub.add_parser(name, help=text)
        module.add_arguments(p)
        p.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "max_order", 2) < 1:
        print("error: --max-order must be >= 1", file=sys.stderr)
        return 2
    from eval.backends import BackendError

    try:
        return args.func(args)
    except (UsageError, InputError, ConditionsUnreachable, OSError, ValueError,
            BackendError) as e:  # a target or model that cannot start: one line too
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: re-run the same command to continue", file=sys.stderr)
        return 130
