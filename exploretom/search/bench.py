"""`python -m exploretom bench-search`: the A* search against the pooled and the block baseline at
equal pooled budget, over settings x seeds, each method's stories re-scored on fresh answers from
the target; paired per-unit differences and their bootstrap interval. Resumable: finished units
are kept in `<output>.units.jsonl` with the options they were run with.
"""
from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval import config_file
from eval.cli_common import parse_pairs, positive_int
from eval.config_file import settings_help
from eval.jsonl import Appender, InputError, hold, iter_records, repair, resume
from eval.outputs import refuse_inputs, start_over
from eval.stats import bootstrap_mean
from exploretom.sampling.action_sets import Conditions
from exploretom.sampling.sampler import StorySampler
from exploretom.search.astar import Evaluator, Node, SearchConfig, search_pool
from exploretom.search.run import (Failures, Grid, RunConfig, accuracy_of, bench_settings,
                                   load_config, print_ended, run_lexicon, setting_json,
                                   setting_key, story_json, story_streams)
from exploretom.search.targets import (PROMPTS, TARGET_FORMS, Target, TargetError, check_target,
                                       make_target, parse_target)
from exploretom.semantics.label import story_text
from exploretom.semantics.tracker import Tracker


BENCH_METHODS = ("astar", "baseline", "block_baseline")  # search, pooled, the paper's blocks


@dataclass
class Unit:
    """One setting of one seed: the stories each method picked and their fresh accuracy."""

    seed: int
    index: int
    cond: Conditions
    accuracy: dict[str, float] = field(default_factory=dict)
    unparsed: dict[str, float] = field(default_factory=dict)  # share of replies not read
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"unit-s{self.seed}-{self.index:03d}-{setting_key(self.cond)}"


def pick_hardest(nodes: list[Node], n: int) -> list[Node]:
    """The n hardest distinct stories (fewest right answers first, shorter on ties)."""
    distinct = {nd.key: nd for nd in nodes}.values()
    return sorted(distinct, key=lambda nd: (nd.g, len(nd.key)))[:n]


def bench_unit(cond: Conditions, k: int, seed: int, target: Target, cfg: SearchConfig,
               stories: int, lexicon: dict[str, Any] | None) -> Unit:
    """The three datasets of one setting at one pooled budget (stories x cfg.budget), each
    re-scored on fresh answers from the target."""
    pool = stories * cfg.budget
    context, search_rng = story_streams(cond, seed, k, lexicon)
    found, _ = search_pool(cond, context, target, cfg, search_rng, pool)
    sampler = StorySampler(cond, context, random.Random(f"baseline:{seed}:{setting_key(cond)}:{k}"),
                           cfg.max_order)
    randoms = [Node(t, desired=True) for t in sampler.walks(pool)]
    Evaluator(target, cfg).evaluate(randoms)
    picks = {"astar": pick_hardest(found, stories),
             "baseline": pick_hardest(randoms, stories),
             "block_baseline": [pick_hardest(randoms[i:i + cfg.budget], 1)[0]
                                for i in range(0, len(randoms), cfg.budget)][:stories]}
    fresh = target.fresh(1)
    scored = score_many([nd.tracker for m in BENCH_METHODS for nd in picks[m]], fresh,
                        cfg.scoring)
    unit = Unit(seed, k, cond)
    evaluator = Evaluator(fresh, cfg)  # only for which questions count
    for method in BENCH_METHODS:
        accs, unread, asked = [], 0, 0
        for j, nd in enumerate(picks[method]):
            questions = scored.pop(0)
            counted = [q for q in questions if q["order"] in cfg.orders
                       and (q["interesting"] or not cfg.interesting_only)]
            acc = accuracy_of(counted)
            accs.append(acc)
            unread += sum(q["read"] == "none" for q in counted)
            asked += len(counted)
            unit.records.append(bench_record(method, cond, context, target, cfg, seed, unit,
                                             j, nd, acc, questions))
        unit.accuracy[method] = sum(accs) / len(accs) if accs else 1.0
        unit.unparsed[method] = unread / asked if asked else 0.0
    del evaluator
    return unit


def score_many(trackers: list[Tracker], target: Target, scoring: str) -> list[list[dict]]:
    """score_all for many stories in one batch to the target."""
    from exploretom.semantics.questions import generate_questions
    from exploretom.search.astar import scored_question
    from exploretom.search.targets import Item

    per_story = [(t, story_text(t), generate_questions(t)) for t in trackers]
    items = [Item(t, text, q) for t, text, qs in per_story for q in qs]
    responses = iter(target.answer(items) if items else [])
    return [[scored_question(q, r, scoring, t) for q, r in zip(qs, responses)]
            for t, _, qs in per_story]


def bench_record(method, cond, context, target, cfg, seed, unit: Unit, j: int, node: Node,
                 accuracy: float, questions: list[dict]) -> dict[str, Any]:
    sid = f"{method}-s{seed}-{setting_key(cond)}-{unit.index:03d}-{j:03d}"
    t = node.tracker
    return {**story_json(sid, cond, context, t), "id": sid, "method": method,
            "setting": setting_json(cond), "seed": seed,
            "target": target.name, "unit": unit.id, "evaluations": cfg.budget,
            "found": node.goal, "selected_accuracy": node.g, "accuracy": accuracy,
            "accuracy_all": accuracy_of(questions),
            "text": story_text(t), "questions": questions,
            "search": {"orders": list(cfg.orders)}}


def bench_options(args: argparse.Namespace, cfg: SearchConfig) -> dict[str, Any]:
    """What a bench output file was written with: a resumed run must match it."""
    return {"target": args.target, "target_prompt": args.target_prompt, "settings": args.settings,
            "stories": args.stories,
            "seed": args.seed, "world": args.world,
            "search": {k: list(v) if isinstance(v, tuple) else v
                       for k, v in dataclasses.asdict(cfg).items()}}


def units_path(output: str | Path) -> Path:
    return Path(str(output) + ".units.jsonl")


def cmd_bench_search(args: argparse.Namespace) -> int:
    """The search against the pooled and the block baseline at equal pooled budget, over
    settings x seeds; paired per-unit differences and their bootstrap interval."""
    # the flags as overrides of a run config's search section (the --world file's is not used)
    flags = {"budget": args.budget, "orders": list(args.orders), **parse_pairs(args.search, "--search")}
    overrides = {f"search.{k}": v for k, v in flags.items()}
    cfg = config_file.load_config(None, RunConfig, overrides).search
    lexicon, grid = None, Grid()
    if args.world:
        run = load_config(args.world)
        lexicon, grid = run_lexicon(args.world, run), run.grid
    chosen = bench_settings(args.settings, args.seed, grid)
    # the target is checked before any output is touched: a missing model is one line
    spec = check_target(args.target, parse_target(args.target, args.seed,
                                                  prompt=args.target_prompt))
    options = bench_options(args, cfg)
    if not args.output:
        return _bench_target(args, cfg, chosen, spec, options, {}, set(), lexicon)
    refuse_inputs(args.output, [args.world])
    with hold(units_path(args.output)):  # one writer per output
        return _bench_output(args, cfg, chosen, spec, options, lexicon)


def _bench_output(args: argparse.Namespace, cfg: SearchConfig, chosen: list[Conditions],
                  spec: dict[str, Any], options: dict[str, Any],
                  lexicon: dict[str, Any] | None) -> int:
    done: dict[str, dict[str, Any]] = {}
    written: set = set()
    if args.output:
        if args.overwrite:  # emptied in place: the lock of the units file stays held
            start_over(args.output, units_path(args.output))
        if args.repair:
            repair(args.output)
            repair(units_path(args.output))
        written = resume(args.output)
        resume(units_path(args.output))
        done = read_units(units_path(args.output), options)
    return _bench_target(args, cfg, chosen, spec, options, done, written, lexicon)


def _bench_target(args: argparse.Namespace, cfg: SearchConfig, chosen: list[Conditions],
                  spec: dict[str, Any], options: dict[str, Any], done: dict[str, dict[str, Any]],
                  written: set, lexicon: dict[str, Any] | None) -> int:
    seeds = [args.seed + i for i in range(args.seeds)]
    with make_target(spec) as target:
        return _bench(args, cfg, chosen, seeds, target, options, done, written, lexicon)


def _bench(args: argparse.Namespace, cfg: SearchConfig, chosen: list[Conditions], seeds: list[int],
           target: Target, options: dict[str, Any], done: dict[str, dict[str, Any]], written: set,
           lexicon: dict[str, Any] | None) -> int:
    units: list[Unit] = []
    failures = Failures()
    start = time.perf_counter()
    out = Appender(args.output) if args.output else None
    unit_out = Appender(units_path(args.output)) if args.output else None
    try:
        for seed in seeds:
            for k, cond in enumerate(chosen):
                unit = Unit(seed, k, cond)
                if unit.id in done:
                    unit.accuracy = done[unit.id]["accuracy"]
                    unit.unparsed = done[unit.id].get("unparsed", {})
                else:
                    try:
                        unit = bench_unit(cond, k, seed, target, cfg, args.stories, lexicon)
                        failures.ok()
                    except TargetError as e:
                        if failures.add(unit.id, e):
                            break
                        continue
                    if out and unit_out:
                        for rec in unit.records:
                            if rec["id"] not in written:
                                out.write(rec)
                        unit_out.write({"id": unit.id, "accuracy": unit.accuracy,
                                        "unparsed": unit.unparsed, "options": options})
                units.append(unit)
                if not args.quiet:
                    print(f"[{len(units)}/{len(seeds) * len(chosen)}] {unit.id}: " + "  ".join(
                        f"{m}={unit.accuracy[m]:.3f}" for m in BENCH_METHODS), file=sys.stderr)
            else:
                continue
            break
    finally:
        for f in (out, unit_out):
            if f:
                f.close()
    code = failures.report("settings x seeds", len(seeds) * len(chosen))
    if code:
        return code
    mean = {m: sum(u.accuracy[m] for u in units) / len(units) for m in BENCH_METHODS}
    diffs = [100 * (u.accuracy["baseline"] - u.accuracy["astar"]) for u in units]
    _, lo, hi = bootstrap_mean(diffs, reps=10000, seed=args.seed)
    print(f"# world={args.world or 'paper grid'} stories={args.stories} budget={cfg.budget} "
          f"pool={args.stories * cfg.budget} orders={','.join(map(str, cfg.orders))} "
          f"policy={cfg.policy} complete={cfg.complete} seeds={seeds[0]}..{seeds[-1]} "
          f"seconds={time.perf_counter() - start:.0f}", file=sys.stderr)
    print(f"target={args.target} search_acc={mean['astar']:.4f} "
          f"pooled_baseline_acc={mean['baseline']:.4f} "
          f"block_baseline_acc={mean['block_baseline']:.4f} "
          f"diff_points={100 * (mean['baseline'] - mean['astar']):+.1f} ci_low={lo:+.1f} "
          f"ci_high={hi:+.1f} settings={len(chosen)} seeds={len(seeds)}")
    # replies nobody could read count as wrong above; their share says how much of a
    # difference is unreadable answers rather than wrong ones
    unread = {m: [u.unparsed[m] for u in units if m in u.unparsed] for m in BENCH_METHODS}
    if any(unread.values()):
        print("unparsed " + " ".join(f"{m}={sum(v) / len(v):.4f}" for m, v in unread.items() if v))
    print_ended(target)
    return 0


def read_units(path: Path, options: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Units a previous run finished, refusing a file written with other options."""
    done = {}
    if not path.exists():
        return done
    for at, rec in iter_records(path):
        if rec.get("options") != options:
            raise InputError(f"{at}: written by a bench-search with other options; pass "
                             "--overwrite to start over (or another -o)")
        done[rec["id"]] = rec
    return done


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("Search settings (--search KEY=VALUE):\n"
                + "\n".join(settings_help(SearchConfig, indent="  ")))
    p.add_argument("--target", "--reasoner", dest="target", default="world",
                   help=f"who answers: {TARGET_FORMS} (default: world)")
    p.add_argument("--target-prompt", choices=PROMPTS, default="row",
                   help="how a local model target is asked: row (the prompt the project's models "
                        "are trained on, default) or paper (the paper's short-answer prompt)")
    p.add_argument("--settings", type=positive_int, default=20, help="settings of the grid")
    p.add_argument("--stories", type=positive_int, default=10,
                   help="stories per setting each method returns (default 10)")
    p.add_argument("--budget", type=positive_int, default=50,
                   help="evaluations per story: each setting's pool is stories x budget")
    p.add_argument("--seeds", type=positive_int, default=3, help="seeds SEED.. (default 3)")
    p.add_argument("--orders", type=int, nargs="+", default=[1], help="orders g(s) scores")
    p.add_argument("--search", action="append", default=[], metavar="KEY=VALUE",
                   help="search settings (SearchConfig), e.g. --search complete=true "
                   "--search policy=paper")
    p.add_argument("--world", help="a run YAML whose grid, lexicon, settings and names to use "
                   "(default: the paper's grid and the built-in lexicon)")
    p.add_argument("--seed", type=int, default=0, help="first seed; also picks the settings")
    p.add_argument("-o", "--output", help="also write the chosen stories (for `report`); a "
                   "re-run with the same options resumes it")
    p.add_argument("--overwrite", action="store_true", help="start -o over")
    p.add_argument("--repair", action="store_true", help="drop torn lines from -o first")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_bench_search)
