"""`python -m exploretom search` and `bench-search`: A* (and the baseline) over a grid of user
conditions, written one story per JSON line, sharded and resumable.

A run is one YAML file (see configs/exploretom/paper-grid.yaml). Every story has a stable id and
its own random stream (derived from the seed, the setting and its index), shared by A* and the
baseline so the two are compared on the same contexts; re-running skips ids already written.
"""
from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from eval.yaml_file import YamlFileError, read_yaml
from exploretom.action_sets import ACTION_SETS, Conditions
from exploretom.jsonl import Appender, InputError, resume
from exploretom.label import story_text
from exploretom.lexicon import LEXICON_PATH, Context, sample_context
from exploretom.sampler import conditions_json
from exploretom.search import (AStarSearch, SearchConfig, SearchResult, overgenerate_and_filter,
                               score_all)
from exploretom.story import Story
from exploretom.targets import Target, make_target

Method = Literal["astar", "baseline"]


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


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: dict[str, Any] = Field(default_factory=lambda: {"kind": "reasoner", "name": "world"})
    methods: list[Method] = ["astar"]
    stories_per_setting: int = Field(10, ge=1)
    seed: int = 0
    grid: Grid = Field(default_factory=Grid)
    search: dict[str, Any] = Field(default_factory=dict)
    # a lexicon in the format of exploretom/data/contexts.json (null: the built-in one), relative
    # to the config file's folder or absolute
    lexicon: Optional[str] = None
    # keep only these settings (ids) of the lexicon, and/or use these names instead of its own:
    # a small world, e.g. for a tiny model (configs/exploretom/demo.yaml)
    settings: Optional[list[str]] = None
    names: Optional[list[str]] = None

    def search_config(self) -> SearchConfig:
        cfg = dict(self.search)
        if "orders" in cfg:
            cfg["orders"] = tuple(cfg["orders"])
        try:
            return SearchConfig(**cfg)
        except TypeError as e:
            raise ValueError(f"search: {e}") from None


def load_config(path: str | Path) -> RunConfig:
    p = Path(path)
    try:  # read_yaml names a missing file or a folder itself
        raw = read_yaml(p) or {}
        cfg = RunConfig.model_validate(raw)
        cfg.search_config()
    except YamlFileError as e:
        raise InputError(str(e)) from None
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "(top level)"
        raise InputError(f"{p}: field '{where}': {err['msg']}") from None
    except ValueError as e:
        raise InputError(f"{p}: {e}") from None
    if cfg.lexicon is not None:
        lex = p.parent / cfg.lexicon  # an absolute path stays itself
        if not lex.is_file():
            raise InputError(f"{p}: field 'lexicon': no such file {lex}")
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


def bench_settings(n: int, seed: int) -> list[Conditions]:
    """The `n` settings of the paper's grid that `bench-search` compares on."""
    if n < 1:
        raise ValueError(f"--settings must be >= 1, got {n}")
    settings, _ = Grid().settings()
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


def cmd_search(args: argparse.Namespace) -> int:
    from exploretom.cli import parse_shard

    cfg = load_config(args.config)
    settings, skipped = cfg.grid.settings()
    for note in skipped:
        print(f"skipped infeasible setting {note}", file=sys.stderr)
    shard_i, shard_n = parse_shard(args.shard)
    done = resume(args.output)
    todo = [j for k, j in enumerate(jobs(cfg, settings)) if k % shard_n == shard_i
            and j[3] not in done]
    target = make_target(cfg.target)
    search_cfg = cfg.search_config()
    lexicon = _lexicon(args.config, cfg)
    print(f"{len(settings)} settings x {cfg.stories_per_setting} stories x {len(cfg.methods)} "
          f"method(s); {len(todo)} to do in shard {args.shard} ({len(done)} already written)",
          file=sys.stderr)
    from tqdm import tqdm

    with Appender(args.output) as out:
        for method, cond, j, sid in tqdm(todo, desc="search", unit="story", file=sys.stderr,
                                         disable=args.quiet):
            out.write(run_one(method, cond, target, search_cfg, cfg.seed, j, sid, lexicon))
    return 0


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
            raise InputError(f"{config}: field 'settings': unknown setting(s) {unknown} (known: "
                             f"{', '.join(ids)})")
        if not cfg.settings:
            raise InputError(f"{config}: field 'settings' is empty")
        lex = {**lex, "settings": [s for s in lex["settings"] if s["id"] in cfg.settings]}
    if cfg.names is not None:
        if len(set(cfg.names)) < max(cfg.grid.people):
            raise InputError(f"{config}: field 'names': {len(set(cfg.names))} distinct name(s), "
                             f"but the grid asks for up to {max(cfg.grid.people)} people")
        lex = {**lex, "names": list(dict.fromkeys(cfg.names))}
    return lex


def cmd_bench_search(args: argparse.Namespace) -> int:
    """A* against the baseline at equal budget over N settings of the paper's grid."""
    chosen = bench_settings(args.settings, args.seed)
    cfg = SearchConfig(budget=args.budget, orders=tuple(args.orders))
    target = make_target({"kind": "reasoner", "name": args.reasoner})
    out = Appender(args.output) if args.output else None
    acc = {"astar": [], "baseline": []}
    start = time.perf_counter()
    for k, cond in enumerate(chosen):
        line = []
        for method in ("astar", "baseline"):
            rec = run_one(method, cond, target, cfg, args.seed, k,
                          f"{method}-{setting_key(cond)}-{k:03d}")
            acc[method].append(rec.get("accuracy", 1.0))
            line.append(f"{method}={acc[method][-1]:.2f}{'' if rec['found'] else ' (no goal)'}")
            if out:
                out.write(rec)
        if not args.quiet:
            print(f"[{k + 1}/{len(chosen)}] {setting_key(cond)}: {'  '.join(line)}",
                  file=sys.stderr)
    if out:
        out.close()
    a = sum(acc["astar"]) / len(chosen)
    b = sum(acc["baseline"]) / len(chosen)
    print(f"# reasoner={args.reasoner} settings={len(chosen)} budget={args.budget} "
          f"orders={','.join(map(str, args.orders))} seed={args.seed} "
          f"seconds={time.perf_counter() - start:.0f}", file=sys.stderr)
    print(f"astar_acc={a:.4f} baseline_acc={b:.4f} diff={100 * (a - b):+.1f}")
    return 0


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", required=True, help="run YAML (configs/exploretom/*.yaml)")
    p.add_argument("-o", "--output", required=True, help="JSONL of search records (appended)")
    p.add_argument("--shard", default="0/1", help="i/n: run only jobs k with k %% n == i")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_search)


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--reasoner", default="world", help="scripted target (default: world)")
    p.add_argument("--settings", type=int, default=20, help="settings of the paper's grid")
    p.add_argument("--budget", type=int, default=50, help="node evaluations per story")
    p.add_argument("--orders", type=int, nargs="+", default=[1], help="orders g(s) scores")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", help="also write the search records (for `report`)")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_bench_search)
