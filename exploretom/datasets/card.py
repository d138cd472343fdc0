"""The statistics of each split (`split_stats`) and the dataset card (`README.md`) written from
them: how the data was made, what each selection step kept, and rows per split, order, question
type, action set and answer."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable, Sequence

from exploretom.datasets.split import SPLITS
from exploretom.datasets.stories import ANSWER_TYPES, Item
from exploretom.sampling.action_sets import ACTION_SETS


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def split_stats(items: Sequence[Item]) -> dict[str, Any]:
    by_order: Counter = Counter()
    by_type: Counter = Counter()
    by_set: Counter = Counter()
    stories_by_set: dict[str, set] = defaultdict(set)
    answers: dict[str, Counter] = defaultdict(Counter)
    n_int = n_fb = 0
    for it in items:
        q = it.q
        by_order[str(q["order"])] += 1
        by_type[f"{q['kind']}/{q['property']}/{q['order']}"] += 1
        aset, asym = it.story.info["action_set"], it.story.info["asymmetric"]
        key = f"{aset or '?'}{'+asym' if asym else ''}"
        by_set[key] += 1
        stories_by_set[key].add(it.story.id)
        answers[q["answer_type"]][q["answer"]] += 1
        n_int += bool(q["interesting"])
        n_fb += bool(q["false_belief"])
    n = len(items)
    return {
        "rows": n,
        "stories": len({it.story.id for it in items}),
        "interesting": n_int,
        "false_belief": n_fb,
        "interesting_share": _share(n_int, n),
        "false_belief_share": _share(n_fb, n),
        "by_order": dict(sorted(by_order.items())),
        "by_type": dict(sorted(by_type.items())),
        "by_action_set": {k: {"rows": by_set[k], "stories": len(stories_by_set[k])}
                          for k in sorted(by_set)},
        "answers": {t: dict(c.most_common()) for t, c in sorted(answers.items())},
    }


def _set_sort_key(name: str) -> tuple:
    base, _, asym = name.partition("+")
    order = list(ACTION_SETS)
    return (order.index(base) if base in order else len(order), base, asym)


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def _by_split_table(stats: dict[str, Any], key: str, label: str, sort=sorted) -> list[str]:
    splits = stats["splits"]
    names = sort({k for s in splits.values() for k in s[key]})
    rows = [[n, *(splits[s][key].get(n, 0) for s in SPLITS),
             sum(splits[s][key].get(n, 0) for s in SPLITS)] for n in names]
    return _table([label, *SPLITS, "total"], rows)


def dataset_card(stats: dict[str, Any]) -> str:
    import yaml

    splits = stats["splits"]
    total_rows = sum(s["rows"] for s in splits.values())
    size = ("n<1K" if total_rows < 1_000 else "1K<n<10K" if total_rows < 10_000 else
            "10K<n<100K" if total_rows < 100_000 else "100K<n<1M" if total_rows < 1_000_000
            else "n>1M")
    header = {
        "pretty_name": "ExploreToM synthetic theory-of-mind questions",
        "language": ["en"],
        "task_categories": ["question-answering"],
        "tags": ["theory-of-mind", "exploretom", "synthetic", "belief-tracking"],
        "size_categories": [size],
        "dataset_info": {
            "features": [
                {"name": "id", "dtype": "string"}, {"name": "source", "dtype": "string"},
                {"name": "prompt", "list": [{"name": "role", "dtype": "string"},
                                            {"name": "content", "dtype": "string"}]},
                {"name": "answer", "dtype": "string"}, {"name": "answer_type", "dtype": "string"},
                {"name": "choices", "sequence": "string"}, {"name": "meta", "dtype": "string"},
            ],
            "splits": [{"name": s, "num_examples": splits[s]["rows"]} for s in SPLITS],
        },
    }
    sel = stats["selection"]
    opts = stats["options"]
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
             "# ExploreToM synthetic theory-of-mind questions", "",
             "Stories generated with the ExploreToM story language (Sclar et al.) by this "
             "project's `exploretom` package, one row per (story, question) in the project's "
             "row contract (`docs/DESIGN.md`): `prompt` is a system message plus a user turn "
             "with the story, the question and a request for a short answer; `answer` is the "
             "canonical gold answer checked under `answer_type` (`short`, `yes_no`, "
             "`knowledge`); `meta` is a JSON string with the question's order, kind, property, "
             "people, interesting and false-belief flags, the action set, the story "
             "structure and `reasoning`, a step-by-step derivation of the answer written "
             "from the tracker (exploretom.semantics.trace). Splits are by story: no story "
             "appears in two splits.", "",
             "```python", "from datasets import load_from_disk",
             "ds = load_from_disk(\"<this folder>\")", "```", "",
             "## How it was made", "", "```bash", stats["command"], "```", "",
             f"Text shown in prompts: `{opts['text']}`"
             + (" (the LLM-infilled narration)" if opts["text"] == "infilled"
                else " (the canonical rendering of the story structure)") + ".", ""]
    lines += _table(["input", "stories used"], stats["inputs"].items()) + [""]
    lines += _table(["selection step", "count"], [
        ["lines read", sel["lines"]],
        ["invalid stories skipped (error lines)", sel["errors"]],
        ["stories skipped: infilling failed the judge", sel["infilled_failed"]],
        ["stories skipped: not infilled", sel["not_infilled"]],
        ["stories used", sel["stories"]],
        [f"questions of orders {opts['orders'] or 'all'}", sel["questions_of_orders"]],
        ["after the per-story cap", sel["questions_after_cap"]],
        ["rows written", total_rows],
    ]) + [""]
    ratio = opts["interesting_ratio"]
    achieved = _share(sum(s["interesting"] for s in splits.values()), total_rows)
    lines.append(f"Interesting share: requested {'natural (no subsampling)' if ratio is None else f'{ratio:.1%}'}, "
                 f"achieved {achieved:.1%}"
                 + ("" if sel["ratio_reached"] else " (the requested share was not reachable "
                    "in every split; see the warning printed by the export)") + ".")
    lines.append(f"Balanced per (kind, property, order) group: {'yes' if opts['balance'] else 'no'}.")
    lines += ["", "## Splits", ""]
    lines += _table(["split", "rows", "stories", "interesting", "false belief"],
                    [[s, splits[s]["rows"], splits[s]["stories"],
                      f"{splits[s]['interesting_share']:.1%}", f"{splits[s]['false_belief_share']:.1%}"]
                     for s in SPLITS])
    lines += ["", "## Rows per question order", "",
              "Order 0: ground truth and memory questions; order n: n-th order beliefs.", ""]
    lines += _by_split_table(stats, "by_order", "order", sort=lambda s: sorted(s, key=int))
    lines += ["", "## Rows per question type (kind/property/order)", ""]
    lines += _by_split_table(stats, "by_type", "type")
    lines += ["", "## Action sets", "", "`+asym`: stories with an asymmetry modifier (a secret "
              "witness or a distracted one). Rows (stories) per split.", ""]
    sets = sorted({k for s in splits.values() for k in s["by_action_set"]}, key=_set_sort_key)
    lines += _table(["action set", *SPLITS], [
        [k, *(f"{splits[s]['by_action_set'].get(k, {}).get('rows', 0)} "
              f"({splits[s]['by_action_set'].get(k, {}).get('stories', 0)})" for s in SPLITS)]
        for k in sets])
    lines += ["", "## Answers", ""]
    for t in ANSWER_TYPES:
        merged: Counter = Counter()
        for s in splits.values():
            merged.update(s["answers"].get(t, {}))
        if not merged:
            continue
        n = sum(merged.values())
        top = merged.most_common(10)
        lines += [f"`{t}`: {n} rows, {len(merged)} distinct answers"
                  + (" (the 10 most frequent below)" if len(merged) > 10 else "") + ".", ""]
        lines += _table(["answer", "rows", "share"], [[a, c, f"{c / n:.1%}"] for a, c in top])
        lines.append("")
    lines += ["## Loading for evaluation and training", "",
              "- Evaluation: `python -m eval run exploretom --data exploretom=<this folder>` "
              "(the `test` split; accuracy per order, property, interesting and kind).",
              "- Training: list this folder as a `data.train` path in an `rl` config (the "
              "`train` split).", ""]
    return "\n".join(lines)
