"""`python -m exploretom export`: labelled stories -> a Hugging Face `DatasetDict` of contract rows.

One row per (story, question) in the row contract of DESIGN.md, split by story into train,
validation and test (no story crosses splits), saved with `save_to_disk` next to a dataset card
(`README.md`) and the same statistics as JSON (`export_stats.json`).

Selection runs in this order, each step seeded so the same inputs and seed give the same rows:
1. question orders (`--orders`), 2. at most K questions per story (`--max-questions-per-story`),
3. split by story, then per split: 4. the share of interesting questions (`--interesting-ratio`,
the knob of the paper's figure 5) and/or equal counts per (kind, property, order) group
(`--balance`). With both, groups are equalised and the share is met across them where the
groups allow it (order-0 questions are never interesting); the card reports what was achieved.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import shlex
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from eval.rows import features as row_features
from eval.rows import make_row
from exploretom.action_sets import ACTION_SETS
from exploretom.jsonl import InputError, iter_records
from exploretom.story import parse_story
from exploretom.trace import StoryTracer

SOURCE = "exploretom"
SPLITS = ("train", "validation", "test")
ANSWER_TYPES = ("short", "yes_no", "knowledge")
STATS_FILE = "export_stats.json"
# Fields every question needs to become a row (questions.py writes them all).
QUESTION_FIELDS = {"order": int, "kind": str, "property": str, "question": str, "answer": str,
                   "answer_type": str, "interesting": bool, "false_belief": bool}
# Candidate state updates the sampler did not use: large and not part of the story.
CONTEXT_DROP = ("state_updates",)

Group = tuple[str, str, int]  # (kind, property, order)


# ------------------------------------------------------------------------------------------
# Reading stories


@dataclass
class StoryIn:
    id: str
    text: str  # shown in the prompt
    info: dict[str, Any]  # the story's part of every row's meta (story_meta)
    stratum: str  # its setting, for stratified splits
    questions: list[tuple[int, dict[str, Any]]]  # (index in the story's question list, question)
    max_order: int = 2  # highest order of all its questions: the order it was labelled at


@dataclass
class ReadCounts:
    lines: int = 0
    stories: int = 0
    errors: int = 0  # {"id", "error"} lines written by label/sample for invalid stories
    infilled_failed: int = 0  # "infilled"."ok" false
    not_infilled: int = 0  # no "infilled" field in --text infilled mode
    per_file: dict[str, int] = field(default_factory=dict)


def _check_question(q: Any, at: str) -> None:
    if not isinstance(q, dict):
        raise InputError(f"{at}: expected an object")
    for name, typ in QUESTION_FIELDS.items():
        if name not in q:
            raise InputError(f"{at}: missing field '{name}'")
        value = q[name]
        if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
            raise InputError(f"{at}: field '{name}' must be {typ.__name__}, got {value!r:.40}")
    if q["answer_type"] not in ANSWER_TYPES:
        raise InputError(f"{at}: field 'answer_type' is {q['answer_type']!r}, expected one of "
                         f"{', '.join(ANSWER_TYPES)}")
    if not q["answer"].strip() or not q["question"].strip():
        raise InputError(f"{at}: empty question or answer")


def _story_text(rec: dict[str, Any], mode: str, at: str, counts: ReadCounts) -> str | None:
    """The text shown in the prompt, or None when the story is skipped (counted)."""
    if mode == "structure":
        text = rec.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{at}: missing field 'text' (label the stories first: "
                             f"python -m exploretom label)")
        return text
    inf = rec.get("infilled")
    if inf is None:
        counts.not_infilled += 1
        return None
    if not isinstance(inf, dict):
        raise InputError(f"{at}: field 'infilled' must be an object")
    if not isinstance(inf.get("ok"), bool):
        raise InputError(f"{at}: field 'infilled.ok' must be true or false")
    if not inf["ok"]:
        counts.infilled_failed += 1
        return None
    text = inf.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{at}: field 'infilled.text' must be a non-empty string")
    return text


def read_stories(paths: Sequence[str | Path], text_mode: str = "structure",
                 orders: set[int] | None = None) -> tuple[list[StoryIn], ReadCounts]:
    """Every usable labelled story of `paths`, with its questions of the chosen orders."""
    counts = ReadCounts()
    stories: list[StoryIn] = []
    seen: dict[str, str] = {}
    for path in paths:
        n_file = 0
        for at, rec in iter_records(path):
            counts.lines += 1
            if "error" in rec:
                counts.errors += 1
                continue
            if rec.get("id") is None or isinstance(rec["id"], (dict, list)):
                raise InputError(f"{at}: missing field 'id'")
            sid = str(rec["id"])
            if sid in seen:
                raise InputError(f"{at}: story id {sid!r} already read at {seen[sid]}")
            seen[sid] = at
            if not isinstance(rec.get("actions"), list):
                raise InputError(f"{at}: story {sid!r}: missing field 'actions'")
            questions = rec.get("questions")
            if not isinstance(questions, list):
                raise InputError(f"{at}: story {sid!r}: missing field 'questions' (label the "
                                 f"stories first: python -m exploretom label)")
            for i, q in enumerate(questions):
                _check_question(q, f"{at}: story {sid!r}: questions[{i}]")
            text = _story_text(rec, text_mode, f"{at}: story {sid!r}", counts)
            if text is None:
                continue
            chosen = [(i, q) for i, q in enumerate(questions) if orders is None or q["order"] in orders]
            # keep only what rows need: the whole record of thousands of stories is large
            stories.append(StoryIn(sid, text, story_meta(rec, text_mode), stratum(rec), chosen,
                                   max([q["order"] for q in questions] + [1])))
            n_file += 1
        counts.per_file[str(path)] = n_file
    counts.stories = len(stories)
    return stories, counts


# ------------------------------------------------------------------------------------------
# Splitting and selecting


def _hash(*parts: Any) -> str:
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


def stratum(rec: dict[str, Any]) -> str:
    """Stories of one setting (action set, asymmetry, people, moves, rooms, length) share a
    stratum, so every split gets its share of each setting."""
    action_set, asym = action_set_of(rec)
    cond = rec.get("setting") if isinstance(rec.get("setting"), dict) else rec.get("conditions")
    cond = {k: v for k, v in cond.items() if k not in ("action_set", "asymmetric")} \
        if isinstance(cond, dict) else {}
    return json.dumps([action_set, bool(asym), cond], sort_keys=True, default=str)


def assign_splits(stories: Sequence[tuple[str, str]], fractions: Sequence[float],
                  seed: int) -> dict[str, str]:
    """story id -> split, for (story id, stratum) pairs. Stories are ordered by stratum, then
    by a seeded hash of their id (so input order does not matter), and dealt one by one to the
    split furthest below its quota: every split gets its fraction of every stratum (within one
    story) and of the whole, and a story is in exactly one split."""
    ordered = sorted(stories, key=lambda s: (s[1], _hash(seed, "split", s[0]), s[0]))
    counts = [0] * len(SPLITS)
    out: dict[str, str] = {}
    for i, (sid, _) in enumerate(ordered, 1):
        j = max(range(len(SPLITS)), key=lambda j: (i * fractions[j] - counts[j], -j))
        counts[j] += 1
        out[sid] = SPLITS[j]
    return out


def cap_per_story(questions: list[tuple[int, dict]], k: int | None, seed: int, sid: str):
    if k is None or len(questions) <= k:
        return questions
    keep = set(random.Random(_hash(seed, "cap", sid)).sample(range(len(questions)), k))
    return [q for j, q in enumerate(questions) if j in keep]


@dataclass
class Item:
    story: StoryIn
    index: int
    q: dict[str, Any]
    reasoning: str = ""  # the trace, filled by add_reasoning once the items are selected

    @property
    def group(self) -> Group:
        return (self.q["kind"], self.q["property"], self.q["order"])


def _target_counts(n_int: int, n_non: int, ratio: float) -> tuple[int, int]:
    """How many interesting / not interesting items to keep for the share `ratio`; all of
    both when the share cannot be reached (one side is empty)."""
    if (ratio > 0 and n_int == 0) or (ratio < 1 and n_non == 0):
        return n_int, n_non
    if ratio >= 1:
        return n_int, 0
    if ratio <= 0:
        return 0, n_non
    if n_int / (n_int + n_non) < ratio:
        return n_int, min(n_non, round(n_int * (1 - ratio) / ratio))
    return min(n_int, round(n_non * ratio / (1 - ratio))), n_non


def _spread(total: int, lo: dict[Group, int], hi: dict[Group, int]) -> dict[Group, int]:
    """Integers lo[g] <= x[g] <= hi[g] summing to `total` (lo <= total <= sum hi), the extra
    above lo spread in proportion to each group's room, so no group is emptied first."""
    x = dict(lo)
    extra = total - sum(lo.values())
    room = {g: hi[g] - lo[g] for g in lo}
    cap = sum(room.values())
    if extra <= 0 or cap == 0:
        return x
    shares = {g: extra * room[g] / cap for g in lo}
    for g in lo:
        x[g] += int(shares[g])
    left = total - sum(x.values())
    for g in sorted(lo, key=lambda g: (shares[g] - int(shares[g]), str(g)), reverse=True):
        if left == 0:
            break
        if x[g] < hi[g]:
            x[g] += 1
            left -= 1
    return x


def plan_counts(avail: dict[Group, tuple[int, int]], ratio: float | None,
                balance: bool) -> tuple[dict[Group, tuple[int, int]], bool]:
    """Per group, how many (interesting, not interesting) items to keep, given what each group
    has (`avail`); and False when balancing made the share unreachable."""
    if not avail:
        return {}, True
    if not balance:
        if ratio is None:
            return dict(avail), True
        # One pool: which items go is decided uniformly over all groups by the caller.
        n_int = sum(a for a, _ in avail.values())
        n_non = sum(b for _, b in avail.values())
        return {"*": _target_counts(n_int, n_non, ratio)}, True  # type: ignore[dict-item]
    groups = sorted(avail)
    m_max = min(a + b for a, b in avail.values())
    if ratio is None:
        return {g: _natural_split(avail[g], m_max) for g in groups}, True
    # Largest per-group count m at which the share can be met exactly. The reachable range of
    # shares narrows as m grows (max(0, m - non)/m rises, min(m, int)/m falls): scan downwards.
    for m in range(m_max, 0, -1):
        lo = {g: max(0, m - avail[g][1]) for g in groups}
        hi = {g: min(m, avail[g][0]) for g in groups}
        target = round(ratio * m * len(groups))
        if sum(lo.values()) <= target <= sum(hi.values()):
            x = _spread(target, lo, hi)
            return {g: (x[g], m - x[g]) for g in groups}, True
    # Unreachable at any size: keep the balanced maximum, as close to the share as it allows.
    lo = {g: max(0, m_max - avail[g][1]) for g in groups}
    hi = {g: min(m_max, avail[g][0]) for g in groups}
    target = min(max(round(ratio * m_max * len(groups)), sum(lo.values())), sum(hi.values()))
    x = _spread(target, lo, hi)
    return {g: (x[g], m_max - x[g]) for g in groups}, False


def _natural_split(have: tuple[int, int], m: int) -> tuple[int, int]:
    """m items of a group keeping its own interesting share (stratified)."""
    n_int, n_non = have
    k_int = round(m * n_int / (n_int + n_non)) if n_int + n_non else 0
    k_int = min(max(k_int, m - n_non), n_int)
    return k_int, m - k_int


def select(items: list[Item], ratio: float | None, balance: bool, seed: int,
           split: str) -> tuple[list[Item], bool]:
    """The items of one split kept by --interesting-ratio/--balance (seeded), in input order."""
    if (ratio is None and not balance) or not items:
        return items, True
    pools: dict[Any, tuple[list[Item], list[Item]]] = defaultdict(lambda: ([], []))
    for it in items:
        key = it.group if balance else "*"
        pools[key][0 if it.q["interesting"] else 1].append(it)
    avail = {k: (len(a), len(b)) for k, (a, b) in pools.items()}
    plan, reached = plan_counts(avail, ratio, balance)
    rng = random.Random(_hash(seed, "select", split))
    keep: set[int] = set()
    for key in sorted(pools, key=str):
        for pool, k in zip(pools[key], plan[key]):
            keep.update(id(it) for it in rng.sample(pool, k))
    kept = [it for it in items if id(it) in keep]
    if ratio is not None and kept:
        share = sum(bool(it.q["interesting"]) for it in kept) / len(kept)
        reached &= abs(share - ratio) <= 1 / len(kept)  # within one row of rounding
    return kept, reached


# ------------------------------------------------------------------------------------------
# Rows


def instruction(q: dict[str, Any]) -> str:
    """The short-answer request matching the question's answer type (paper: story, question,
    short answer)."""
    if q["answer_type"] == "yes_no":
        return "Give a short answer: yes or no."
    if q["answer_type"] == "knowledge":
        return 'Give a short answer: "knows about it" or "does not know about it".'
    what = {"room_location": "room", "container_location": "container"}.get(q["property"], "place")
    return f"Give a short answer: only the name of the {what}, as the story calls it."


def user_prompt(text: str, q: dict[str, Any]) -> str:
    return (f"Read the story, then answer the question about it.\n\nStory:\n{text.strip()}\n\n"
            f"Question: {q['question']}\n{instruction(q)}")


def _compact_context(context: Any) -> Any:
    if not isinstance(context, dict):
        return context
    return {k: v for k, v in context.items() if k not in CONTEXT_DROP}


def action_set_of(rec: dict[str, Any]) -> tuple[Any, Any]:
    """(action set, asymmetric) of a story: from a search run's "setting" or the sampler's keys."""
    setting = rec.get("setting") if isinstance(rec.get("setting"), dict) else {}
    return (setting.get("action_set", rec.get("action_set")),
            setting.get("asymmetric", rec.get("asymmetric")))


def story_meta(rec: dict[str, Any], text_mode: str) -> dict[str, Any]:
    """The part of a row's meta that comes from its story (shared by the story's rows)."""
    action_set, asymmetric = action_set_of(rec)
    info = {"action_set": action_set, "asymmetric": asymmetric, "text_source": text_mode,
            "story": {"actions": rec["actions"], "context": _compact_context(rec.get("context"))}}
    if isinstance(rec.get("conditions"), dict):
        info["conditions"] = rec["conditions"]
    for key in ("method", "target"):  # stories that come out of the adversarial search
        if key in rec:
            info[key] = rec[key]
    inf = rec.get("infilled")
    if text_mode == "structure" and isinstance(inf, dict) and inf.get("ok") and \
            isinstance(inf.get("text"), str):
        info["infilled_text"] = inf["text"]  # in infilled mode the prompt already holds it
    return info


def row_meta(it: Item) -> dict[str, Any]:
    q = it.q
    return {"story_id": it.story.id, "question_index": it.index,
            **{k: q.get(k) for k in ("order", "kind", "property", "people", "thing",
                                     "state_value", "before_action", "interesting",
                                     "false_belief")},
            **it.story.info}


def story_tracer(story: StoryIn) -> StoryTracer:
    """The tracker's replay of a story, to the order it was labelled at (an order-1 belief can
    depend on it: what a receiver knows of the speaker's belief decides which message wins)."""
    actions = parse_story({"id": story.id, "actions": story.info["story"]["actions"]}).actions
    return StoryTracer(actions, story.max_order)


def add_reasoning(items: Sequence[Item]) -> None:
    """Each item's trace (exploretom.trace). A stored answer the tracker no longer derives is an
    error: the file was labelled by another version of the tracker."""
    tracers: dict[str, StoryTracer] = {}
    for it in items:
        tracer = tracers.get(it.story.id)
        if tracer is None:
            if len(tracers) >= 256:  # items mostly come grouped by story
                tracers.clear()
            tracer = tracers[it.story.id] = story_tracer(it.story)
        got = tracer.answer(it.q)
        if got != it.q["answer"]:
            raise InputError(f"story {it.story.id!r}: questions[{it.index}] "
                             f"({it.q['question']!r}): the file says {it.q['answer']!r}, the "
                             f"tracker now derives {got!r} (relabel the stories: python -m "
                             f"exploretom label)")
        it.reasoning = tracer.trace(it.q)


def make_rows(items: Sequence[Item]) -> Iterator[dict[str, Any]]:
    for it in items:
        yield make_row(id=f"{it.story.id}-q{it.index}", source=SOURCE,
                       user=user_prompt(it.story.text, it.q), answer=it.q["answer"],
                       answer_type=it.q["answer_type"],
                       meta={**row_meta(it), "reasoning": it.reasoning})


def build_dataset(items: Sequence[Item], cache_dir: Path, fingerprint: str):
    """A `Dataset` of the items' rows, streamed to Arrow files under `cache_dir` (rows repeat
    their story's structure, so holding them all in memory does not scale)."""
    from datasets import Dataset

    return Dataset.from_generator(make_rows, features=row_features(), cache_dir=str(cache_dir),
                                  gen_kwargs={"items": items}, fingerprint=fingerprint)


# ------------------------------------------------------------------------------------------
# Statistics and the dataset card


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
             "from the tracker (exploretom.trace). Splits are by story: no story appears in "
             "two splits.", "",
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


# ------------------------------------------------------------------------------------------
# Command


def orders_arg(text: str) -> list[int] | None:
    """--orders: comma-separated orders, or `all` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        orders = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated orders like 0,1,2 or 'all', "
                                         f"got {text!r}") from None
    if not orders or orders[0] < 0:
        raise argparse.ArgumentTypeError(f"orders must be >= 0, got {text!r}")
    return orders


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


def _positive_int(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return k


def _command(args: argparse.Namespace) -> str:
    parts = ["python", "-m", "exploretom", "export", *map(str, args.inputs), "-o", str(args.output)]
    if args.orders is not None:
        parts += ["--orders", ",".join(map(str, args.orders))]
    if args.interesting_ratio is not None:
        parts += ["--interesting-ratio", f"{args.interesting_ratio:g}"]
    if args.balance:
        parts.append("--balance")
    parts += ["--text", args.text, "--splits", ",".join(f"{f:g}" for f in args.splits),
              "--seed", str(args.seed)]
    if args.max_questions_per_story is not None:
        parts += ["--max-questions-per-story", str(args.max_questions_per_story)]
    return shlex.join(parts)


def export(args: argparse.Namespace) -> dict[str, Any]:
    """Read, select, build rows, save the DatasetDict and its card; returns the statistics."""
    orders = set(args.orders) if args.orders is not None else None
    fractions, ratio, k = args.splits, args.interesting_ratio, args.max_questions_per_story
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "dataset_dict.json").is_file() \
            and not args.overwrite:
        raise InputError(f"{out}: folder is not empty and holds no exported dataset "
                         f"(pass --overwrite to replace it)")

    stories, counts = read_stories(args.inputs, args.text, orders)
    if not stories:
        raise InputError(f"no usable stories in {', '.join(map(str, args.inputs))} "
                         f"({counts.errors} error lines, {counts.infilled_failed} failed "
                         f"infillings, {counts.not_infilled} not infilled)")
    n_orders = sum(len(s.questions) for s in stories)
    split_of = assign_splits([(s.id, s.stratum) for s in stories], fractions, args.seed)
    order_of = {sid: _hash(args.seed, "split", sid) for sid in split_of}
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
        raise InputError("no rows left after selection (check --orders)")
    for name in SPLITS:
        add_reasoning(per_split[name])

    stats = {
        "command": _command(args),
        "options": {"orders": sorted(orders) if orders else None, "interesting_ratio": ratio,
                    "balance": bool(args.balance), "text": args.text, "splits": fractions,
                    "seed": args.seed, "max_questions_per_story": k},
        "inputs": counts.per_file,
        "selection": {"lines": counts.lines, "errors": counts.errors,
                      "infilled_failed": counts.infilled_failed,
                      "not_infilled": counts.not_infilled, "stories": counts.stories,
                      "questions_of_orders": n_orders, "questions_after_cap": n_cap,
                      "ratio_reached": reached},
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
        dd = DatasetDict({name: build_dataset(per_split[name], cache,
                                              _hash(stats["command"], name)[:16])
                          for name in SPLITS})
        dd.save_to_disk(str(tmp))
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
    p.add_argument("--interesting-ratio", type=_ratio_arg, default=None, metavar="R",
                   help="share of interesting questions per split, by subsampling the other "
                        "kind (paper figure 5; default: as generated)")
    p.add_argument("--balance", action="store_true",
                   help="equal row counts per (kind, property, order) group, by subsampling")
    p.add_argument("--text", choices=("structure", "infilled"), default="structure",
                   help="story text in prompts: the canonical rendering, or the infilled "
                        "narration (stories whose infilling failed the judge are skipped)")
    p.add_argument("--splits", type=_splits_arg, default=[0.8, 0.1, 0.1],
                   help="train,validation,test fractions of the stories (default 0.8,0.1,0.1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-questions-per-story", type=_positive_int, default=None, metavar="K",
                   help="keep at most K questions per story (seeded sample)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a non-empty output folder that is not a previous export")


def run(args: argparse.Namespace) -> int:
    stats = export(args)
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
