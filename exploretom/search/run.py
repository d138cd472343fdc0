"""`python -m exploretom search`: A* (and the baseline) over a grid of user conditions, written
one story per JSON line, sharded and resumable; the run config, settings and story records that
`bench-search` (exploretom/search/bench.py) shares.

A run is one YAML file (see configs/exploretom/paper-grid.yaml). Every story has a stable id and
its own random stream (derived from the seed, the setting and its index), shared by A* and the
baseline so the two are compared on the same contexts; re-running skips ids already written.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Iterator, Literal, Optional, Union

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator,
                      model_validator)

from eval import config_file
from eval.backends import BACKENDS, backend_class
from eval.backends.base import generation_model
from eval.backends.spec import ModelSpec, check_backend_options
from eval.cli_common import EXIT_INCOMPLETE, parse_shard
from eval.config_file import ConfigError, settings_help
from eval.jsonl import Appender, InputError, hold, repair, resume
from eval.outputs import check_fingerprint, refuse_inputs, start_over
from eval.paths import missing_local_model
from exploretom.sampling.action_sets import ACTION_SETS, Conditions
from exploretom.sampling.lexicon import LEXICON_PATH, Context, sample_context
from exploretom.sampling.sampler import conditions_json
from exploretom.search.astar import (AStarSearch, SearchConfig, SearchResult,
                                     overgenerate_and_filter, score_all)
from exploretom.search.reasoners import REASONERS
from exploretom.search.targets import PROMPTS, TARGET_GENERATION, Target, TargetError, make_target
from exploretom.semantics.label import story_text
from exploretom.semantics.story import Story
from exploretom.semantics.tracker import Tracker

Method = Literal["astar", "baseline"]


class Grid(BaseModel):
    """The user conditions searched: every combination of the lists (the paper's grid)."""
    model_config = ConfigDict(extra="forbid")
    action_sets: list[str] = Field(default_factory=lambda: [f"A{i}" for i in range(1, 10)],
                                   description="action sets (exploretom/sampling/action_sets.py)")
    asymmetric: list[bool] = Field([False, True], description="without and/or with an action "
                                   "carrying a peeker or a distraction")
    people: list[int] = Field([2, 3, 4], description="exactly this many people in a story")
    moves: list[int] = Field([2, 3, 4], description="exactly this many important actions "
                             "(the paper's moves)")
    rooms: list[int] = Field([1, 2], description="exactly this many rooms")
    max_actions: int = Field(15, ge=1, description="at most this many actions")

    @field_validator("action_sets")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        unknown = [a for a in v if a not in ACTION_SETS]
        if unknown:
            raise ValueError(f"unknown action set(s) {unknown}; known: {list(ACTION_SETS)}")
        return v

    @field_validator("action_sets", "asymmetric", "people", "moves", "rooms")
    @classmethod
    def _not_empty(cls, v: list) -> list:
        if not v:  # an empty list is a grid of no settings: a run that writes nothing
            raise ValueError("empty: the grid would hold no setting")
        return v

    @field_validator("people", "moves", "rooms")
    @classmethod
    def _counts(cls, v: list[int]) -> list[int]:
        if min(v) < 1:
            raise ValueError(f"every count must be >= 1, got {v}")
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
    """A scripted reader (exploretom.search.reasoners)."""
    model_config = ConfigDict(extra="forbid")
    kind: Literal["reasoner"] = "reasoner"
    name: Literal[tuple(REASONERS)] = Field(  # type: ignore[valid-type]
        "world", description="the reasoner: " + ", ".join(REASONERS))


class NoisyTargetSpec(BaseModel):
    """The labels, wrong with probability p on false-belief questions and q on the others."""
    model_config = ConfigDict(extra="forbid")
    kind: Literal["noisy"]
    p: float = Field(0.5, ge=0, le=1, description="chance of a wrong answer to a false-belief "
                     "question")
    q: float = Field(0.1, ge=0, le=1, description="chance of a wrong answer to any other question")
    seed: int = Field(0, description="seeds which answers are wrong")


class _ModelTarget(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: str = Field(description="the backend that asks the model: " + ", ".join(BACKENDS))
    model: str = Field(min_length=1, description=ModelSpec.model_fields["model"].description)


class BackendTargetSpec(generation_model("max_new_tokens", base=_ModelTarget,
                                         max_new_tokens=TARGET_GENERATION["max_new_tokens"])):
    """A model through an eval backend, asked greedily (exploretom.search.targets.ModelTarget). Any
    further key is an option of that backend, checked by it when the file loads
    (eval.backends.spec)."""
    prompt: Literal[PROMPTS] = Field(  # type: ignore[valid-type]
        "paper", description="how it is asked: paper (the paper's short-answer prompt) or row "
        "(the prompt the project's models are trained on)")

    @field_validator("kind")
    @classmethod
    def _known(cls, kind: str) -> str:
        if kind not in BACKENDS:
            raise ValueError(f"unknown kind {kind!r}; choose one of: reasoner, noisy, "
                             f"{', '.join(BACKENDS)}")
        return kind

    @model_validator(mode="after")
    def _options_known(self) -> "BackendTargetSpec":
        check_backend_options(self.kind, dict(self.model_extra or {}), list(type(self).model_fields))
        if backend_class(self.kind).local_weights:
            problem = missing_local_model(self.model)
            if problem:  # said when the file loads, not as a traceback once the search starts
                raise ValueError(f"model {self.model}: {problem}")
        return self


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
    target: TargetSpec = Field(default_factory=ReasonerTargetSpec, description=(
        "who answers: {kind: reasoner, name: world}, {kind: noisy, p, q, seed} or a model "
        "{kind: <backend>, model, max_new_tokens, prompt, <the backend's options>}"))
    methods: list[Method] = Field(["astar"], description="astar and/or baseline "
                                  "(overgenerate-and-filter at the same budget)")
    stories_per_setting: int = Field(10, ge=1, description="stories searched per setting and "
                                     "method")
    seed: int = Field(0, description="seeds every story's context and random stream")
    grid: Grid = Field(default_factory=Grid, description="the settings searched")
    search: SearchConfig = Field(default_factory=SearchConfig, description="the A* search")
    lexicon: Optional[str] = Field(None, description=(
        "a lexicon in the format of exploretom/data/contexts.json (null: the built-in one), "
        "relative to the config file's folder or absolute"))
    settings: Optional[list[str]] = Field(None, description=(
        "keep only these settings (ids) of the lexicon: a small world, e.g. for a tiny model "
        "(configs/exploretom/demo.yaml)"))
    names: Optional[list[str]] = Field(None, description="use these names instead of the "
                                       "lexicon's own")


def load_config(path: str | Path) -> RunConfig:
    """A run YAML (eval.config_file's one-line errors), its lexicon found from its folder."""
    p = Path(path)
    cfg = config_file.load_config(p, RunConfig)
    settings, skipped = cfg.grid.settings()
    if not settings:  # a run that could only write nothing is an error, not an empty success
        raise ConfigError(f"{p}: grid: no setting can be searched ({len(skipped)} infeasible, "
                          f"e.g. {skipped[0]})")
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


def setting_json(cond: Conditions) -> dict[str, Any]:
    """A record's `setting`: the action set, asymmetry and conditions it was searched under."""
    return {"action_set": cond.action_set, "asymmetric": cond.asymmetric, **conditions_json(cond)}


def accuracy_of(questions: list[dict[str, Any]]) -> float:
    """The share of scored questions answered right; 1.0 with none (nothing was got wrong)."""
    return sum(q["correct"] for q in questions) / len(questions) if questions else 1.0


def story_json(story_id: str, cond: Conditions, context: Context, t: Tracker) -> dict[str, Any]:
    """A searched story in the story format, with its context and conditions."""
    story = Story(id=story_id, actions=tuple(t.actions), context=context.to_json(),
                  extra={"action_set": cond.action_set, "asymmetric": cond.asymmetric,
                         "conditions": conditions_json(cond)})
    return story.to_json()


def record(method, cond, context, target, cfg, seed, story_id,
           result: SearchResult) -> dict[str, Any]:
    """Deterministic for a seed (no timings), so a resumed run writes what an uninterrupted
    one would."""
    base = {"id": story_id, "method": method, "setting": setting_json(cond), "seed": seed,
            "target": target.name, "evaluations": result.evaluations, "found": result.found}
    if result.tracker is None:
        return {**base, "error": "no story meeting the conditions was found"}
    t = result.tracker
    questions = score_all(t, target, cfg.scoring)
    return {**story_json(story_id, cond, context, t), **base, "accuracy": result.accuracy,
            "accuracy_all": accuracy_of(questions),
            "text": story_text(t), "questions": questions,
            "search": {"nodes_expanded": result.nodes_expanded, "orders": list(cfg.orders)}}


def jobs(cfg: RunConfig, settings: list[Conditions]) -> Iterator[tuple[str, Conditions, int, str]]:
    for cond in settings:
        for j in range(cfg.stories_per_setting):
            for method in cfg.methods:
                yield method, cond, j, f"{method}-{setting_key(cond)}-{j:03d}"


MAX_FAILED_IN_A_ROW = 10  # a target down for good: stop instead of trying every story


# a model target's options that change how fast and where it is asked, not what it answers
TARGET_PLUMBING = ("base_url", "api_key_env", "concurrency", "timeout_s", "max_attempts",
                   "backoff_base_s", "backoff_max_s", "retry_after_max_s", "cache", "prices",
                   "headers", "max_response_bytes", "python", "startup_timeout_s")


def search_fingerprint(cfg: RunConfig) -> dict[str, Any]:
    """What changes the records of a search output: the whole run config but the story count
    and methods (more stories, or another method, extend the same run) and the plumbing of a
    model target, with the lexicon's content instead of its path."""
    fp = cfg.model_dump(mode="json", exclude={"stories_per_setting", "methods"})
    for key in TARGET_PLUMBING:
        fp["target"].pop(key, None)
    if cfg.lexicon is not None:
        fp["lexicon"] = hashlib.sha256(Path(cfg.lexicon).read_bytes()).hexdigest()[:16]
    return fp


def cmd_search(args: argparse.Namespace) -> int:
    cfg = load_config(args.config)
    settings, skipped = cfg.grid.settings()
    if skipped:
        print(f"skipped {len(skipped)} infeasible setting(s), e.g. {skipped[0]}",
              file=sys.stderr)
    refuse_inputs(args.output, [args.config, cfg.lexicon])
    shard_i, shard_n = parse_shard(args.shard)
    lexicon = run_lexicon(args.config, cfg)
    with hold(args.output):  # one writer per output: a second run is refused at once
        if args.fresh:
            start_over(args.output)
        if args.repair:
            repair(args.output)
        done = resume(args.output)
        check_fingerprint(args.output, "search", search_fingerprint(cfg), len(done))
        return _search(args, cfg, settings, lexicon, done, shard_i, shard_n)


def _search(args: argparse.Namespace, cfg: RunConfig, settings: list[Conditions],
            lexicon: dict[str, Any] | None, done: set, shard_i: int, shard_n: int) -> int:
    todo = [j for k, j in enumerate(jobs(cfg, settings)) if k % shard_n == shard_i
            and j[3] not in done]
    search_cfg = cfg.search
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
        print_ended(target)
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


def run_lexicon(config: str, cfg: RunConfig) -> dict[str, Any] | None:
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


def print_ended(target: Target) -> None:
    """How many of a model target's answers were cut off or refused (to stderr)."""
    ended = getattr(target, "ended", None)
    if ended:
        print(f"target answers: {target.answers}, of which " + ", ".join(
            f"{v} {k}" for k, v in ended.most_common()) + " (read as they are)", file=sys.stderr)


def add_search_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = ("Settings of the run YAML (--config; configs/exploretom/*.yaml):\n"
                + "\n".join(settings_help(RunConfig)))
    p.add_argument("--config", required=True, help="run YAML (configs/exploretom/*.yaml)")
    p.add_argument("-o", "--output", required=True, help="JSONL of search records (appended "
                   "to; a re-run with the same config resumes it)")
    p.add_argument("--fresh", action="store_true", help="start -o over instead of resuming it")
    p.add_argument("--shard", default="0/1", help="i/n: run only jobs k with k %% n == i")
    p.add_argument("--repair", action="store_true", help="drop lines of -o that are not whole "
                   "records (a torn write in the middle of the file), saying which")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_search)
