"""`python -m exploretom search` and `bench-search`: A* (and the baseline) over a grid of user
conditions, written one story per JSON line, sharded and resumable.

A run is one YAML file (see configs/exploretom/paper-grid.yaml). Every story has a stable id and
its own random stream (derived from the seed, the setting and its index), shared by A* and the
baseline so the two are compared on the same contexts; re-running skips ids already written.
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from eval import config_file
from eval.backends import BACKENDS
from eval.cli_common import EXIT_INCOMPLETE, parse_pairs, parse_shard
from eval.config_file import ConfigError
from eval.jsonl import Appender, InputError, iter_records, repair, resume
from eval.stats import bootstrap_mean
from exploretom.action_sets import ACTION_SETS, Conditions
from exploretom.label import story_text
from exploretom.lexicon import LEXICON_PATH, Context, sample_context
from exploretom.reasoners import REASONERS
from exploretom.sampler import StorySampler, conditions_json
from exploretom.search import (AStarSearch, Evaluator, Node, SearchConfig, SearchResult,
                               overgenerate_and_filter, score_all, search_pool)
from exploretom.story import Story
from exploretom.targets import (PROMPTS, TARGET_FORMS, Target, TargetError, make_target,
                                parse_target)
from exploretom.tracker import Tracker

Method = Literal["astar", "baseline"]


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


class Grid(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action_sets: list[str] = Field(default_factory=lambda: [f"A{i}" for i in range(1, 10)])
    asymmetric: list[bool] = [False, True]
    people: list[int] = [2, 3, 4]
    moves: list[int] = [2, 3, 4]
    rooms: list[int] = [1, 2]
    max_actions: int = 15

    @field_validator("action_sets")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        unknown = [a for a in v if a not in ACTION_SETS]
        if unknown:
            raise ValueError(f"unknown action set(s) {unknown}; known: {list(ACTION_SETS)}")
        return v

    def settings(self) -> tuple[list[Conditions], list[str]]:
        """The feasible settings, and a note for each infeasible one."""
        ok, skipped = [], []
        for aset, asym, p, m, r in itertools.product(self.action_sets, self.asymmetric,
                                                     self.people, self.moves, self.rooms):
            try:
                ok.append(Conditions(aset, p, m, r, self.max_actions, asym))
            except ValueError as e:
                skipped.append(f"{aset}{'+asym' if asym else ''} p{p} m{m} r{r}: {e}")
        return ok, skipped


class ReasonerTargetSpec(BaseModel):
    """A scripted reader (exploretom.reasoners)."""
    model_config = ConfigDict(extra="forbid")
    kind: Literal["reasoner"] = "reasoner"
    name: Literal[tuple(REASONERS)] = "world"  # type: ignore[valid-type]


class NoisyTargetSpec(BaseModel):
    """The labels, wrong with probability p on false-belief questions and q on the others."""
    model_config = ConfigDict(extra="forbid")
    kind: Literal["noisy"]
    p: float = Field(0.5, ge=0, le=1)
    q: float = Field(0.1, ge=0, le=1)
    seed: int = 0


class BackendTargetSpec(BaseModel):
    """A model through an eval backend (kind: its name). Any further key is an option of that
    backend, which checks it when the command starts."""
    model_config = ConfigDict(extra="allow")
    kind: str
    model: str = Field(min_length=1)
    max_new_tokens: int = Field(32, gt=0)
    prompt: Literal[PROMPTS] = "paper"  # type: ignore[valid-type]

    @field_validator("kind")
    @classmethod
    def _known(cls, kind: str) -> str:
        if kind not in BACKENDS and kind != "served":
            raise ValueError(f"unknown kind {kind!r}; choose one of: reasoner, noisy, "
                             f"{', '.join(BACKENDS)}, served")
        return kind


def _target_kind(value: Any) -> Optional[str]:
    """Which target model checks a `target` mapping (no kind: a reasoner, as make_target)."""
    if isinstance(value, dict):
        kind = value.get("kind", "reasoner")
    else:
        kind = getattr(value, "kind", None)
    if kind is None:
        return None
    return kind if kind in ("reasoner", "noisy") else "backend"


TargetSpec = Annotated[
    Union[Annotated[ReasonerTargetSpec, Tag("reasoner")], Annotated[NoisyTargetSpec, Tag("noisy")],
          Annotated[BackendTargetSpec, Tag("backend")]],
    Discriminator(_target_kind, custom_error_type="target", custom_error_message=(
        "expected a mapping with a kind, e.g. {kind: reasoner, name: world}"))]


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: TargetSpec = Field(default_factory=ReasonerTargetSpec)  # make_target's spec
    methods: list[Method] = ["astar"]
    stories_per_setting: int = Field(10, ge=1)
    seed: int = 0
    grid: Grid = Field(default_factory=Grid)
    search: SearchConfig = Field(default_factory=SearchConfig)
    # a lexicon in the format of exploretom/data/contexts.json (null: the built-in one), relative
    # to the config file's folder or absolute
    lexicon: Optional[str] = None
    # keep only these settings (ids) of the lexicon, and/or use these names instead of its own:
    # a small world, e.g. for a tiny model (configs/exploretom/demo.yaml)
    settings: Optional[list[str]] = None
    names: Optional[list[str]] = None


def load_config(path: str | Path) -> RunConfig:
    """A run YAML (eval.config_file's one-line errors), its lexicon found from its folder."""
    p = Path(path)
    cfg = config_file.load_config(p, RunConfig)
    if cfg.lexicon is not None:
        lex = p.parent / cfg.lexicon  # an absolute path stays itself
        if not lex.is_file():
            raise ConfigError(f"{p}: lexicon: no such file {lex}")
        cfg.lexicon = str(lex)
    return cfg


def setting_key(c: Conditions) -> str:
    return (f"{c.action_set}{'-asym' if c.asymmetric else ''}-p{c.people}-m{c.moves}-r{c.rooms}"
            f"-n{c.max_actions}")


def story_streams(cond: Conditions, seed: int, index: int,
                  lexicon: dict[str, Any] | None = None) -> tuple[Context, random.Random]:
    """The context of story `index` of a setting and the random stream its search draws from;
    A*, the baseline and `search_floor` all start from these."""
    rng = random.Random(f"{seed}:{setting_key(cond)}:{index}")
    context = sample_context(rng, cond.people, cond.rooms, lexicon=lexicon)
    return context, random.Random(rng.random())


def bench_settings(n: int, seed: int, grid: "Grid | None" = None) -> list[Conditions]:
    """The `n` settings of a grid (default: the paper's) that `bench-search` compares on."""
    if n < 1:
        raise ValueError(f"--settings must be >= 1, got {n}")
    settings, _ = (grid or Grid()).settings()
    return random.Random(seed).sample(settings, min(n, len(settings)))


def run_one(method: str, cond: Conditions, target: Target, cfg: SearchConfig, seed: int,
            index: int, story_id: str, lexicon: dict[str, Any] | None = None) -> dict[str, Any]:
    """Search one story; the record the report and export commands read."""
    context, search_rng = story_streams(cond, seed, index, lexicon)
    if method == "astar":
        result = AStarSearch(cond, context, target, cfg, search_rng).run()
    else:
        result = overgenerate_and_filter(cond, context, target, cfg, search_rng)
    return record(method, cond, context, target, cfg, seed, story_id, result)


def record(method, cond, context, target, cfg, seed, story_id,
           result: SearchResult) -> dict[str, Any]:
    """Deterministic for a seed (no timings), so a resumed run writes what an uninterrupted
    one would."""
    setting = {"action_set": cond.action_set, "asymmetric": cond.asymmetric,
               **conditions_json(cond)}
    base = {"id": story_id, "method": method, "setting": setting, "seed": seed,
            "target": target.name, "evaluations": result.evaluations, "found": result.found}
    if result.tracker is None:
        return {**base, "error": "no story meeting the conditions was found"}
    t = result.tracker
    story = Story(id=story_id, actions=tuple(t.actions), context=context.to_json(),
                  extra={"action_set": cond.action_set, "asymmetric": cond.asymmetric,
                         "conditions": conditions_json(cond)})
    questions = score_all(t, target, cfg.scoring)
    return {**story.to_json(), **base, "accuracy": result.accuracy,
            "accuracy_all": sum(q["correct"] for q in questions) / len(questions)
            if questions else 1.0,
            "text": story_text(t), "questions": questions,
            "search": {"nodes_expanded": result.nodes_expanded, "orders": list(cfg.orders)}}


def jobs(cfg: RunConfig, settings: list[Conditions]) -> Iterator[tuple[str, Conditions, int, str]]:
    for cond in settings:
        for j in range(cfg.stories_per_setting):
            for method in cfg.methods:
                yield method, cond, j, f"{method}-{setting_key(cond)}-{j:03d}"


MAX_FAILED_IN_A_ROW = 10  # a target down for good: stop instead of trying every story


def cmd_search(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    settings, skipped = cfg.grid.settings()
    if skipped:
        print(f"skipped {len(skipped)} infeasible setting(s), e.g. {skipped[0]}",
              file=sys.stderr)
    shard_i, shard_n = parse_shard(args.shard)
    if args.repair:
        repair(args.output)
    done = resume(args.output)
    todo = [j for k, j in enumerate(jobs(cfg, settings)) if k % shard_n == shard_i
            and j[3] not in done]
    search_cfg = cfg.search
    lexicon = _lexicon(args.config, cfg)
    print(f"{len(settings)} settings x {cfg.stories_per_setting} stories x {len(cfg.methods)} "
          f"method(s); {len(todo)} to do in shard {args.shard} ({len(done)} already written)",
          file=sys.stderr)
    from tqdm.auto import tqdm

    failures = Failures()
    reads: Counter = Counter()
    with make_target(cfg.target.model_dump()) as target, Appender(args.output) as out:
        for method, cond, j, sid in tqdm(todo, desc="search", unit="story", file=sys.stderr,
                                         disable=args.quiet):
            try:
                rec = run_one(method, cond, target, search_cfg, cfg.seed, j, sid, lexicon)
                out.write(rec)
                reads.update(q.get("read", "?") for q in rec.get("questions", ()))
                failures.ok()
            except TargetError as e:
                if failures.add(sid, e):
                    break
        if reads:
            # an unreadable answer is scored wrong: its share says how much of "hard" is that
            n = sum(reads.values())
            print(f"answers in the written stories: {n}; read by tag {reads['tag']}, by fallback "
                  f"{reads['fallback']}, unreadable {reads['none']} ({100 * reads['none'] / n:.1f}%)",
                  file=sys.stderr)
        _print_ended(target)
    return failures.report("stories", len(todo))


class Failures:
    """Stories (or bench units) left out because the target failed: never written, so the
    next run retries them; the command ends with their count and exit 3."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.requests = 0
        self.first = ""
        self.in_a_row = 0

    def ok(self) -> None:
        self.in_a_row = 0

    def add(self, what: str, e: TargetError) -> bool:
        """Count one; True when the target looks down for good (stop now)."""
        self.ids.append(what)
        self.requests += e.failed
        self.first = self.first or str(e)
        self.in_a_row += 1
        print(f"warning: {what}: {e}; left for a re-run", file=sys.stderr)
        return self.in_a_row >= MAX_FAILED_IN_A_ROW

    def report(self, what: str, total: int) -> int:
        if not self.ids:
            return 0
        stopped = (f"; stopped after {MAX_FAILED_IN_A_ROW} in a row failed"
                   if self.in_a_row >= MAX_FAILED_IN_A_ROW else "")
        print(f"error: {len(self.ids)} of {total} {what} not written: {self.requests} request(s) "
              f"to the target failed ({self.first}){stopped}; running the same command again "
              "retries them", file=sys.stderr)
        return EXIT_INCOMPLETE


def _lexicon(config: str, cfg: RunConfig) -> dict[str, Any] | None:
    """The run's lexicon: its own file or the built-in one, cut to `settings` and `names`."""
    if cfg.lexicon is None and cfg.settings is None and cfg.names is None:
        return None
    path = cfg.lexicon or str(LEXICON_PATH)
    try:
        lex = json.loads(Path(path).read_text(encoding="utf-8"))
        if not lex["names"] or not lex["settings"]:
            raise ValueError("no names or no settings")
        ids = [s["id"] for s in lex["settings"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{config}: lexicon {path}: not a lexicon in the format of "
                         f"exploretom/data/contexts.json ({type(e).__name__}: {e})") from None
    if cfg.settings is not None:
        unknown = [s for s in cfg.settings if s not in ids]
        if unknown:
            raise ConfigError(f"{config}: settings: unknown setting(s) {unknown} (known: "
                              f"{', '.join(ids)})")
        if not cfg.settings:
            raise ConfigError(f"{config}: settings: empty")
        lex = {**lex, "settings": [s for s in lex["settings"] if s["id"] in cfg.settings]}
    if cfg.names is not None:
        if len(set(cfg.names)) < max(cfg.grid.people):
            raise ConfigError(f"{config}: names: {len(set(cfg.names))} distinct name(s), "
                              f"but the grid asks for up to {max(cfg.grid.people)} people")
        lex = {**lex, "names": list(dict.fromkeys(cfg.names))}
    return lex


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
            acc = sum(q["correct"] for q in counted) / len(counted) if counted else 1.0
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
    from exploretom.questions import generate_questions
    from exploretom.search import scored_question
    from exploretom.targets import Item

    per_story = [(t, story_text(t), generate_questions(t)) for t in trackers]
    items = [Item(t, text, q) for t, text, qs in per_story for q in qs]
    responses = iter(target.answer(items) if items else [])
    return [[scored_question(q, r, scoring, t) for q, r in zip(qs, responses)]
            for t, _, qs in per_story]


def bench_record(method, cond, context, target, cfg, seed, unit: Unit, j: int, node: Node,
                 accuracy: float, questions: list[dict]) -> dict[str, Any]:
    sid = f"{method}-s{seed}-{setting_key(cond)}-{unit.index:03d}-{j:03d}"
    t = node.tracker
    story = Story(id=sid, actions=tuple(t.actions), context=context.to_json(),
                  extra={"action_set": cond.action_set, "asymmetric": cond.asymmetric,
                         "conditions": conditions_json(cond)})
    setting = {"action_set": cond.action_set, "asymmetric": cond.asymmetric,
               **conditions_json(cond)}
    return {**story.to_json(), "id": sid, "method": method, "setting": setting, "seed": seed,
            "target": target.name, "unit": unit.id, "evaluations": cfg.budget,
            "found": node.goal, "selected_accuracy": node.g, "accuracy": accuracy,
            "accuracy_all": sum(q["correct"] for q in questions) / len(questions)
            if questions else 1.0,
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
        lexicon, grid = _lexicon(args.world, run), run.grid
    chosen = bench_settings(args.settings, args.seed, grid)
    options = bench_options(args, cfg)
    done: dict[str, dict[str, Any]] = {}
    written: set = set()
    if args.output:
        if args.overwrite:
            Path(args.output).unlink(missing_ok=True)
            units_path(args.output).unlink(missing_ok=True)
        if args.repair:
            repair(args.output)
            repair(units_path(args.output))
        written = resume(args.output)
        resume(units_path(args.output))
        done = read_units(units_path(args.output), options)
    seeds = [args.seed + i for i in range(args.seeds)]
    with make_target(parse_target(args.target, args.seed, prompt=args.target_prompt)) as target:
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
    _print_ended(target)
    return 0


def _print_ended(target: Target) -> None:
    """How many of a model target's answers were cut off or refused (to stderr)."""
    ended = getattr(target, "ended", None)
    if ended:
        print(f"target answers: {target.answers}, of which " + ", ".join(
            f"{v} {k}" for k, v in ended.most_common()) + " (read as they are)", file=sys.stderr)


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


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, help="run YAML (configs/exploretom/*.yaml)")
    p.add_argument("-o", "--output", required=True, help="JSONL of search records (appended)")
    p.add_argument("--shard", default="0/1", help="i/n: run only jobs k with k %% n == i")
    p.add_argument("--repair", action="store_true", help="drop lines of -o that are not whole "
                   "records (a torn write in the middle of the file), saying which")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_search)


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", "--reasoner", dest="target", default="world",
                   help=f"who answers: {TARGET_FORMS} (default: world)")
    p.add_argument("--target-prompt", choices=PROMPTS, default="row",
                   help="how a local model target is asked: row (the prompt the project's models "
                        "are trained on, default) or paper (the paper's short-answer prompt)")
    p.add_argument("--settings", type=int, default=20, help="settings of the grid")
    p.add_argument("--stories", type=positive, default=10,
                   help="stories per setting each method returns (default 10)")
    p.add_argument("--budget", type=int, default=50,
                   help="evaluations per story: each setting's pool is stories x budget")
    p.add_argument("--seeds", type=positive, default=3, help="seeds SEED.. (default 3)")
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
