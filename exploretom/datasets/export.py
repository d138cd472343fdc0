"""`python -m exploretom export`: labelled stories -> a Hugging Face `DatasetDict` of contract rows.

One row per (story, question) in the row contract of DESIGN.md, split by story into train,
validation and test (no story crosses splits), saved with `save_to_disk` next to a dataset card
(`README.md`) and the same statistics as JSON (`export_stats.json`).

Selection runs in this order, each step seeded so the same inputs and seed give the same rows:
1. question orders and properties (`--orders`, `--properties`), 2. at most K questions per story
(`--max-questions-per-story`), 3. split by story, then per split: 4. the share of interesting
questions (`--interesting-ratio`, the knob of the paper's figure 5) and/or equal counts per
(kind, property, order) group (`--balance`). With both, groups are equalised and the share is
met across them where the groups allow it (order-0 questions are never interesting); the card
reports what was achieved.

The steps are modules of their own in this folder: `stories` (reading), `split` (splits and
selection), `rows` (rows and reasoning traces) and `card` (statistics and the card); this module
runs them in order and writes the result.
"""
from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from eval.cli_common import positive_int
from eval.jsonl import InputError, hold
from eval.outputs import refuse_inputs
from exploretom.cli_args import PROPERTIES, orders_arg, properties_arg
from exploretom.datasets.card import dataset_card, split_stats
from exploretom.datasets.rows import add_reasoning, build_dataset, distractor_pools
from exploretom.datasets.draws import stable_hash
from exploretom.datasets.split import SPLITS, assign_splits, cap_per_story, select
from exploretom.datasets.stories import Item, read_stories

STATS_FILE = "export_stats.json"


def _splits_arg(text: str) -> list[float]:
    try:
        fractions = [float(x) for x in text.split(",")]
    except ValueError:
        fractions = []
    if len(fractions) != 3 or min(fractions) < 0 or abs(sum(fractions) - 1) > 1e-6:
        raise argparse.ArgumentTypeError(f"expected train,validation,test fractions >= 0 "
                                         f"summing to 1 (e.g. 0.8,0.1,0.1), got {text!r}")
    return fractions


def _ratio_arg(text: str) -> float:
    try:
        ratio = float(text)
    except ValueError:
        ratio = -1.0
    if not 0 <= ratio <= 1:
        raise argparse.ArgumentTypeError(f"expected a share between 0 and 1, got {text!r}")
    return ratio


def _options_arg(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not (n == 0 or 2 <= n <= 26):
        raise argparse.ArgumentTypeError(f"expected 0 or a number of options from 2 to 26, got {text!r}")
    return n


def _command(args: argparse.Namespace) -> str:
    parts = ["python", "-m", "exploretom", "export", *map(str, args.inputs), "-o", str(args.output)]
    if args.orders is not None:
        parts += ["--orders", ",".join(map(str, args.orders))]
    if args.properties is not None:
        parts += ["--properties", ",".join(args.properties)]
    if args.interesting_ratio is not None:
        parts += ["--interesting-ratio", f"{args.interesting_ratio:g}"]
    if args.balance:
        parts.append("--balance")
    if getattr(args, "balance_shortcuts", False):
        parts.append("--balance-shortcuts")
    parts += ["--text", args.text, "--splits", ",".join(f"{f:g}" for f in args.splits),
              "--seed", str(args.seed)]
    if args.max_questions_per_story is not None:
        parts += ["--max-questions-per-story", str(args.max_questions_per_story)]
    if args.choice_share:
        parts += ["--choice-share", f"{args.choice_share:g}"]
    if args.choice_options:
        parts += ["--choice-options", str(args.choice_options)]
    if args.choice_sentences:
        parts += ["--choice-sentences", f"{args.choice_sentences:g}"]
    if args.stated_placements:
        parts += ["--stated-placements", f"{args.stated_placements:g}"]
    if getattr(args, "trace_rooms", False):
        parts.append("--trace-rooms")
    if getattr(args, "short_traces", False):
        parts.append("--short-traces")
    return shlex.join(parts)


def export(args: argparse.Namespace) -> dict[str, Any]:
    """Read, select, build rows, save the DatasetDict and its card; returns the statistics."""
    orders = set(args.orders) if args.orders is not None else None
    fractions, ratio, k = args.splits, args.interesting_ratio, args.max_questions_per_story
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    refuse_inputs(out, args.inputs, folder=True)  # replacing the folder would lose them
    if out.is_dir() and any(out.iterdir()) and not (out / "dataset_dict.json").is_file() \
            and not args.overwrite:
        raise InputError(f"{out}: folder is not empty and holds no exported dataset "
                         f"(pass --overwrite to replace it)")

    properties = set(args.properties) if args.properties is not None else None
    stories, counts = read_stories(args.inputs, args.text, orders, properties,
                                   args.stated_placements, args.seed)
    if not stories:
        raise InputError(f"no usable stories in {', '.join(map(str, args.inputs))} "
                         f"({counts.errors} error lines, {counts.infilled_failed} failed "
                         f"infillings, {counts.not_infilled} not infilled)")
    n_orders = sum(len(s.questions) for s in stories)
    split_of = assign_splits([(s.id, s.stratum) for s in stories], fractions, args.seed)
    order_of = {sid: stable_hash(args.seed, "split", sid) for sid in split_of}
    stories.sort(key=lambda s: (order_of[s.id], s.id))  # rows grouped by story, seeded order
    per_split: dict[str, list[Item]] = {s: [] for s in SPLITS}
    for st in stories:
        for idx, q in cap_per_story(st.questions, k, args.seed, st.id):
            per_split[split_of[st.id]].append(Item(st, idx, q))
    n_cap = sum(len(v) for v in per_split.values())
    reached = True
    for name in SPLITS:
        per_split[name], ok = select(per_split[name], ratio, args.balance, args.seed, name)
        reached &= ok
    if not any(per_split.values()):
        raise InputError("no rows left after selection (check --orders and --properties)")
    for name in SPLITS:
        add_reasoning(per_split[name], getattr(args, "trace_rooms", False),
                      getattr(args, "short_traces", False))
    shortcuts = {}
    if getattr(args, "balance_shortcuts", False):  # needs the candidates add_reasoning lists
        from exploretom.datasets.shortcuts import balance
        for name in SPLITS:
            per_split[name], shortcuts[name] = balance(per_split[name], args.seed, name)

    stats = {
        "command": _command(args),
        "options": {"orders": sorted(orders) if orders else None,
                    "properties": sorted(properties) if properties else None,
                    "interesting_ratio": ratio,
                    "balance": bool(args.balance),
                    "balance_shortcuts": bool(getattr(args, "balance_shortcuts", False)),
                    "text": args.text, "splits": fractions,
                    "seed": args.seed, "max_questions_per_story": k,
                    "choice_share": args.choice_share, "choice_options": args.choice_options,
                    "choice_sentences": args.choice_sentences,
                    "stated_placements": args.stated_placements,
                    "trace_rooms": bool(getattr(args, "trace_rooms", False)),
                    "short_traces": bool(getattr(args, "short_traces", False))},
        "inputs": counts.per_file,
        "selection": {"lines": counts.lines, "errors": counts.errors,
                      "infilled_failed": counts.infilled_failed,
                      "not_infilled": counts.not_infilled, "stories": counts.stories,
                      "questions_of_orders": n_orders, "questions_after_cap": n_cap,
                      "ratio_reached": reached,
                      **({"shortcut_balance": shortcuts} if shortcuts else {})},
        "splits": {name: split_stats(per_split[name]) for name in SPLITS},
    }
    _write(per_split, stats, out)
    return stats


def _write(per_split: dict[str, list[Item]], stats: dict[str, Any], out: Path) -> None:
    """Build and save next to `out`, then swap it in: a failed export never leaves half a
    dataset, and the Arrow build cache is removed."""
    from datasets import DatasetDict
    from datasets.utils.logging import (disable_progress_bar, enable_progress_bar,
                                        is_progress_bar_enabled)

    tmp = out.with_name(out.name + ".partial")
    cache = out.with_name(out.name + ".cache")
    for d in (tmp, cache):
        shutil.rmtree(d, ignore_errors=True)
    bars = is_progress_bar_enabled()
    disable_progress_bar()  # six bars per export say nothing the summary does not
    try:
        options = stats["options"]
        # distractor options of a split come from its own stories only: no name leaks between
        # splits
        dd = DatasetDict({name: build_dataset(per_split[name], cache,
                                              stable_hash(stats["command"], name)[:16],
                                              options["choice_share"], options["seed"],
                                              options["choice_options"],
                                              distractor_pools(per_split[name]),
                                              options["choice_sentences"])
                          for name in SPLITS})
        # an empty split needs one (empty) shard written, or load_from_disk cannot read it
        dd.save_to_disk(str(tmp), num_shards={n: 1 for n in SPLITS if not per_split[n]})
    finally:
        if bars:
            enable_progress_bar()
        shutil.rmtree(cache, ignore_errors=True)
    (tmp / "README.md").write_text(dataset_card(stats), encoding="utf-8")
    (tmp / STATS_FILE).write_text(json.dumps(stats, indent=1, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT.jsonl",
                   help="labelled stories (sample --label, label, search or infill output)")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="folder for the DatasetDict (save_to_disk) and its README.md card")
    p.add_argument("--orders", type=orders_arg, default=None,
                   help="question orders to keep, e.g. 0,1,2 (default: all; 0 = ground truth "
                        "and memory questions)")
    p.add_argument("--properties", type=properties_arg, default=None, metavar="P[,P...]",
                   help="question properties to keep, e.g. container_location (default: all; "
                        f"{', '.join(PROPERTIES)})")
    p.add_argument("--interesting-ratio", type=_ratio_arg, default=None, metavar="R",
                   help="share of interesting questions per split, by subsampling the other "
                        "kind (paper figure 5; default: as generated)")
    p.add_argument("--balance", action="store_true",
                   help="equal row counts per (kind, property, order) group, by subsampling")
    p.add_argument("--balance-shortcuts", action="store_true",
                   help="per split and belief order, keep the most container belief questions "
                        "on which no shortcut (the last, first or most mentioned container, the "
                        "true place) is right more or less often than chance "
                        "(exploretom/datasets/shortcuts.py)")
    p.add_argument("--text", choices=("structure", "infilled"), default="structure",
                   help="story text in prompts: the canonical rendering, or the infilled "
                        "narration (stories whose infilling failed the judge are skipped)")
    p.add_argument("--stated-placements", type=_ratio_arg, default=0.0, metavar="F",
                   help="with --text structure: tell this share (seeded) of the objects' first "
                        "placements as facts, 'The apple is in the box.', as ToMi and Hi-ToM do, "
                        "instead of as someone's move; everyone in the room sees it either way, "
                        "so no answer changes (default 0)")
    p.add_argument("--trace-rooms", action="store_true",
                   help="the rows' traces (meta.reasoning) also name each step where a person "
                        "of the question enters or leaves a room, so that 'was elsewhere' rests "
                        "on a line of the trace (exploretom/semantics/trace.py)")
    p.add_argument("--short-traces", action="store_true",
                   help="the rows' traces keep only the decisive steps: the last one that changed "
                        "the asked view's value and, for a belief, the world's last change after "
                        "it, which the view missed (with --trace-rooms, also the room steps "
                        "between them)")
    p.add_argument("--splits", type=_splits_arg, default=[0.8, 0.1, 0.1],
                   help="train,validation,test fractions of the stories (default 0.8,0.1,0.1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-questions-per-story", type=positive_int, default=None, metavar="K",
                   help="keep at most K questions per story (seeded sample)")
    p.add_argument("--choice-share", type=_ratio_arg, default=0.0, metavar="F",
                   help="ask this share of the location questions (seeded) as multiple choice "
                        "among the story's containers or rooms, answered with a letter "
                        "(default 0: every question asks for the name)")
    p.add_argument("--choice-options", type=_options_arg, default=0, metavar="N",
                   help="with --choice-share: pad a multiple-choice question's options to a "
                        "seeded number up to N (at most 26) with containers or rooms of the "
                        "split's other stories (default 0: the story's own only)")
    p.add_argument("--choice-sentences", type=_ratio_arg, default=0.0, metavar="F",
                   help="with --choice-share: list the options of this share (seeded) of the "
                        "multiple-choice questions as sentences that each state one answer "
                        "('Ruth thinks that Miriam will search for the phone in the bag.'), as "
                        "BigToM and ToMATO list theirs (default 0: the places' names)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a non-empty output folder that is not a previous export")


def run(args: argparse.Namespace) -> int:
    lock = Path(f"{args.output}.lock")  # one writer per output folder
    with hold(lock):
        try:
            stats = export(args)
        finally:
            lock.unlink(missing_ok=True)
    sel = stats["selection"]
    for name in SPLITS:
        s = stats["splits"][name]
        print(f"{name}: {s['rows']} rows from {s['stories']} stories (interesting "
              f"{s['interesting_share']:.1%}, false belief {s['false_belief_share']:.1%})",
              file=sys.stderr)
    skipped = [f"{sel['errors']} error lines"]
    if args.text == "infilled":
        skipped += [f"{sel['infilled_failed']} failed infillings",
                    f"{sel['not_infilled']} not infilled"]
    print(f"used {sel['stories']} stories; skipped {', '.join(skipped)}", file=sys.stderr)
    empty = [n for n, f in zip(SPLITS, stats["options"]["splits"]) if f > 0
             and not stats["splits"][n]["rows"]]
    if empty:
        print(f"warning: split(s) {', '.join(empty)} got no rows (too few stories for "
              f"--splits {','.join(f'{f:g}' for f in args.splits)})", file=sys.stderr)
    if args.interesting_ratio is not None and not sel["ratio_reached"]:
        print(f"warning: interesting share {args.interesting_ratio:g} not reachable in every "
              f"split (order-0 questions are never interesting; with --balance try --orders "
              f"1,2); see {Path(args.output) / 'README.md'} for the achieved share",
              file=sys.stderr)
    print(f"wrote {args.output} (dataset card: {Path(args.output) / 'README.md'})", file=sys.stderr)
    return 0
