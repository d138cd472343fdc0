"""`python -m tomsynth plan | generate | filter | build | stats` (see docs/tomsynth.md)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from eval.backends import BackendConfigError
from eval.cli_common import EXIT_INCOMPLETE, bracketed_counts, parse_shard, share
from eval.config_file import settings_help
from eval.paths import describe_error
from tomsynth.build import NothingToBuild
from tomsynth.config import Config, ConfigError, load_config
from eval.jsonl import InputError, LogBusy


def _config(args: argparse.Namespace) -> Config:
    overrides = {"out_dir": args.out_dir} if getattr(args, "out_dir", None) else {}
    return _load(args.config, overrides)


def _load(path: str, overrides: dict | None = None) -> Config:
    try:
        return load_config(path, overrides)
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason})") from None


def _collections(args: argparse.Namespace, cfg: Config | None) -> list[str]:
    if args.collection == "all":
        return ["main", "contrast"]
    if args.collection:
        return [args.collection]
    return list(cfg.collections) if cfg else ["main", "contrast"]


def cmd_plan(args: argparse.Namespace) -> int:
    from tomsynth import plan

    cfg = _load(args.config) if args.config else None
    entries = dict(cfg.entries_per_unit) if cfg else {"main": 4, "contrast": 12}
    dd = plan.run(Path(args.output), entries, _collections(args, cfg), args.limit_units)
    for split, ds in dd.items():
        print(f"{split}: {len(ds)} units, {sum(len(e) for e in ds['entry_ids'])} prompts")
    print(f"wrote {args.output}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from tomsynth import generate

    try:
        shard = parse_shard(args.shard)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    cfg = _config(args)
    s = generate.run(cfg, shard=shard, limit_units=args.limit_units,
                     collections=_collections(args, cfg), progress=not args.quiet)
    u = s.usage
    print(f"shard {args.shard}: {s.requested} requests, {s.already_done} already done, "
          f"{s.succeeded} generated now, {s.failed} failed")
    if s.problems:
        print(f"of the replies: {sum(s.problems.values())} unusable{bracketed_counts(s.problems)} "
              "(kept in the raw log; the filter drops them)")
    if s.attempted and u:  # an HTTP backend's counts (a local model counts nothing)
        cost = "unknown (no price for this model)" if u.get("cost_usd") is None else f"${u['cost_usd']:.4f}"
        print(f"tokens: {u['prompt_tokens']} prompt + {u['completion_tokens']} completion; "
              f"{u['cached']} from cache; retries {u['retries'] or 'none'}; cost {cost}")
    if not s.complete:
        print(f"{s.failed} request(s) failed after retries; run the same command again to retry them",
              file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def cmd_filter(args: argparse.Namespace) -> int:
    from tomsynth import quality

    cfg = _config(args)
    reports = quality.run(cfg, progress=not args.quiet)
    pending = 0
    for c, r in reports.items():
        s1, s3 = r["stage1"], r["stage3"]
        print(f"{c}: {s1['generated']} generated -> stage 1 kept {s1['kept']} "
              f"({share(s1['kept'], s1['generated'])}){bracketed_counts(s1['reasons'])} -> stage 3 kept "
              f"{s3['kept']} of {s3['judged']} judged ({share(s3['kept'], s3['judged'])})"
              f"{bracketed_counts(s3['judgments'])}, pending {s3['pending']}; "
              f"report {cfg.out_dir / 'reports' / f'filter-{c}.md'}")
        pending += s3["pending"]
    if pending:
        print(f"{pending} item(s) still lack a verdict; run the same command again", file=sys.stderr)
        return EXIT_INCOMPLETE
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from tomsynth import build

    cfg = _config(args)
    from datasets import load_from_disk  # after the config check: a bad config fails fast

    built = build.run(cfg)
    for name, path in built.items():
        dd = load_from_disk(str(path))
        print(f"{name}: {', '.join(f'{k} {len(v)}' for k, v in dd.items())} rows -> {path}")
    for c in cfg.collections:
        if build.NAMES[c] not in built:
            print(f"{build.NAMES[c]}: no entry passed the filter, not built", file=sys.stderr)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from tomsynth import stats

    cfg = _config(args)
    if not any((cfg.out_dir / sub).is_dir() for sub in ("datasets", "reports")):
        raise NothingToBuild(f"{cfg.out_dir}: no filter reports or datasets yet: run `python -m "
                             "tomsynth generate`, `filter` and `build` first")
    stats.run(cfg, plots=not args.no_plots)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tomsynth", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="ToM-Synth: 6,912 social units -> LLM synthesis -> 3-stage quality filter -> datasets",
        epilog="Settings of the config file (--config; configs/tomsynth/*.yaml):\n"
               + "\n".join(settings_help(Config)))
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser, config_required: bool = True) -> None:
        sp.add_argument("--config", "-c", required=config_required, help="run configuration (YAML)")
        sp.add_argument("--out-dir", help="override the config's out_dir")

    sp = sub.add_parser("plan", help="write every unit with its rendered prompts as a dataset (offline)")
    sp.add_argument("-o", "--output", required=True, help="directory for the DatasetDict")
    sp.add_argument("--config", "-c", help="take collections and entries per unit from this config")
    sp.add_argument("--collection", choices=["main", "contrast", "all"])
    sp.add_argument("--limit-units", type=int, help="only this many units per collection (spread evenly)")
    sp.set_defaults(fn=cmd_plan)

    sp = sub.add_parser("generate", help="ask the generator for every entry not generated yet (resumable)")
    common(sp)
    sp.add_argument("--shard", default="0/1", help="i/n: this process handles requests j with j %% n == i")
    sp.add_argument("--collection", choices=["main", "contrast", "all"])
    sp.add_argument("--limit-units", type=int, help="only this many units per collection (spread evenly)")
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp.set_defaults(fn=cmd_generate)

    sp = sub.add_parser("filter", help="stage 1 format checks, stage 2 balancing, stage 3 verification")
    common(sp)
    sp.add_argument("--quiet", action="store_true", help="no progress bar")
    sp.set_defaults(fn=cmd_filter)

    sp = sub.add_parser("build", help="write the 27K / Contrast / Merged-55K DatasetDicts with cards")
    common(sp)
    sp.set_defaults(fn=cmd_build)

    sp = sub.add_parser("stats", help="print and plot the distributions of the built datasets")
    common(sp)
    sp.add_argument("--no-plots", action="store_true")
    sp.set_defaults(fn=cmd_stats)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if getattr(args, "limit_units", None) is not None and args.limit_units < 1:
        print("error: --limit-units must be >= 1", file=sys.stderr)
        return 2
    try:
        return args.fn(args)
    except (ConfigError, BackendConfigError, LogBusy, InputError, NothingToBuild, OSError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    except (json.JSONDecodeError, UnicodeDecodeError) as e:  # a report file edited or damaged
        print(f"error: a JSON file under the run's out_dir is damaged ({e}); delete it and run "
              "the step that writes it again", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; results so far are saved, run the same command to continue", file=sys.stderr)
        return 130
