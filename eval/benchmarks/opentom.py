"""OpenToM (Xu et al., ACL 2024): narratives with personalities and intentions, questions about
locations, multi-hop consequences and attitudes, from the mover's and the observer's view.

Release format (`data/opentom_data/`, also in the hub repo `SeacowX/OpenToM`): JSON objects keyed
by story id. `meta_data.json` (normal narratives) and `meta_data_long.json` (OpenToM-L; named
`metadata_long.json` on the hub) give `narrative` and `plot_info` {mover, eoi, original_place,
move_to_place, observer}; the question files map a story id to [{question, answer, type}]:
`location_cg_{fo,so}.json` (coarse: is it in its initial place? Yes/No),
`location_fg_{fo,so}_new.json` (fine: where precisely?), `multihop_{fo,so}.json` (fullness:
more/equally/less full; accessibility: more/equally/less accessible) and `attitude.json`
(positive/neutral/negative).
Scoring as `src/evaluate.py` and `src/evaluate/opentom_evaluator.py` of the release: each
question is a classification; macro-F1 per genre and order. Fine locations are classified by
role, as `check_answer_for_fg_location`: the gold is the initial or the new place (a gold naming
neither is left out of the F1), an answer is the place whose words it shares more of (the share
of the place's words it contains), and an answer sharing as much with both (none, say) is a third
class, `neither`, that counts in the F1. Multi-hop questions of one order are scored together
with the original's merged classes (less full = more accessible, more full = less accessible,
equally full = equally accessible). Answers of the other genres that name no class are
'corrupted': the original leaves them out of the F1 and reports their share, which we report as
`unparsed`; `macro_f1_strict` counts them as errors instead. The original averages the F1 of 5
batches of its result file; we compute it once over all questions (the same for one batch).

A reply without answer tags is classified as the original's `check_*` functions classify the
whole reply: a fine location by its word overlap with the two places (as above); a multi-hop
answer by the first phrase found in the order the original looks for them (fullness: "less full",
"emptier", "more empty", then "more full", "fuller", then "equally full"; accessibility: "more
accessible", then "less accessible", then "equally accessible"); an attitude by the last
paragraph's text after its last colon and before its first full stop, when that is a, b or c (the
options' order) or names exactly one of positive, neutral, negative. A coarse yes/no reply is read
by the shared reader (its first word, else its first sentence), else as the original by the words
yes and no (only one of them said); the original looks for the letters "no" anywhere, so "not",
"know", "nothing" say no there and not here. A multi-hop or attitude reply in which the
original's rule finds nothing is read by the shared careful reader (our prompt letters the
options: "B" reads as the second).
"""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval import answers
from eval.benchmarks._common import (
    LETTERS,
    choice_block,
    f1,
    fail,
    get,
    mean,
    read_json,
    require_file,
    short_repr,
)
from eval.benchmarks._reading import untagged_reply
from eval.benchmarks.base import Benchmark, Record, Row, answer_given, default_score, row_chance
from eval.rows import make_row, meta as meta_of

NAME = "opentom"
# question file -> (genre, order); for fine locations the release's revised `_new` files win
QUESTION_FILES = {
    "location_cg_fo": ("location_coarse", "first"),
    "location_cg_so": ("location_coarse", "second"),
    "location_fg_fo": ("location_fine", "first"),
    "location_fg_so": ("location_fine", "second"),
    "multihop_fo": ("multihop", "first"),
    "multihop_so": ("multihop", "second"),
    "attitude": ("attitude", "first"),
}
OPTIONS = {
    "fullness": ["more full", "equally full", "less full"],
    "accessibility": ["more accessible", "equally accessible", "less accessible"],
    "attitude": ["positive", "neutral", "negative"],
}

INSTRUCTION = "Read the story and answer the question about it."

# check_answer_for_fg_location's classes; `neither` is its tie class 3.
ROLES = ("initial", "new")
NEITHER = "neither"
# evaluate.py scores fullness and accessibility questions of one order together, as integer
# classes 1-3 shared by both subtypes: these are the pairs it merges.
MERGED_CLASS = {
    "less full": "less full | more accessible", "more accessible": "less full | more accessible",
    "more full": "more full | less accessible", "less accessible": "more full | less accessible",
    "equally full": "equally full | equally accessible",
    "equally accessible": "equally full | equally accessible",
}


def data_dir(path: Path) -> Path:
    """The folder holding `meta_data.json`: `path` itself, or its `opentom_data/` or
    `data/opentom_data/` (release and hub layouts)."""
    for candidate in (path, path / "opentom_data", path / "data" / "opentom_data"):
        if (candidate / "meta_data.json").is_file():
            return candidate
    fail(path, "", "no meta_data.json here nor in opentom_data/ (OpenToM release layout)")


def load(path: Path, *, long: bool = False) -> list[Row]:
    """Rows for the normal narratives, or with `long=True` for the long ones (OpenToM-L: the
    same questions over the stories that have a long version)."""
    folder = data_dir(Path(path))
    if long:
        meta_path = next((folder / n for n in ("meta_data_long.json", "metadata_long.json")
                          if (folder / n).is_file()), folder / "meta_data_long.json")
    else:
        meta_path = folder / "meta_data.json"
    stories = read_json(meta_path)
    if not isinstance(stories, dict):
        fail(meta_path, "", "expected a JSON object keyed by story id")
    files = {stem: _question_file(folder, stem) for stem in QUESTION_FILES}
    rows: list[Row] = []
    for stem, (genre, order) in QUESTION_FILES.items():
        file = files[stem]
        questions = read_json(file)
        if not isinstance(questions, dict):
            fail(file, "", "expected a JSON object keyed by story id")
        for key, items in questions.items():
            if key not in stories:
                if long:
                    continue  # only some stories have a long version
                fail(file, f"record {key!r}", f"story id not found in {meta_path.name}")
            if not isinstance(items, list):
                fail(file, f"record {key!r}", "expected a list of questions")
            story = stories[key]
            for i, item in enumerate(items):
                rows.append(_row(item, story, key, i, file, meta_path, genre, order, long))
    return rows


def _question_file(folder: Path, stem: str) -> Path:
    revised = folder / f"{stem}_new.json"
    return revised if revised.is_file() else require_file(folder / f"{stem}.json", "an OpenToM question file")


def _row(item, story, key: str, i: int, file: Path, meta_path: Path, genre: str, order: str,
         long: bool) -> Row:
    where, in_meta = f"record {key!r} question {i}", f"record {key!r}"
    narrative = get(story, "narrative", meta_path, in_meta)
    plot = get(story, "plot_info", meta_path, in_meta, dict)
    in_plot = f"{in_meta} plot_info"
    places = [get(plot, k, meta_path, in_plot) for k in ("original_place", "move_to_place")]
    mover = get(plot, "mover", meta_path, in_plot)
    observer = get(plot, "observer", meta_path, in_plot)
    question = get(item, "question", file, where).strip()
    raw = get(item, "answer", file, where, (str, list))
    if isinstance(raw, list):  # a few multi-hop answers are lists padded with 'corrupted'
        kept = [a for a in raw if isinstance(a, str) and a != "corrupted"]
        if len(kept) != 1 or not kept[0].strip():
            fail(file, where, f"field 'answer' lists no single answer: {short_repr(raw)}")
        raw = kept[0]
    gold = raw.strip()
    subtype = genre
    choices: list[str] = []
    if genre == "location_coarse":
        answer_type, answer = "yes_no", gold.lower()
        if answer not in ("yes", "no"):
            fail(file, where, f"field 'answer' must be Yes or No, got {gold!r}")
        labels, gold_label = ["yes", "no"], answer
        ask = f"Question: {question}\n\nAnswer yes or no."
    elif genre == "location_fine":
        answer_type, answer = "short", gold
        labels, gold_label = list(ROLES), fine_gold_role(gold, *places)
        ask = f"Question: {question}\n\nAnswer with the location only."
    else:
        if genre == "attitude":
            subtype = "attitude"  # asked as released, as the original's attitude prompt does
        else:
            subtype = "fullness" if "fullness" in question else "accessibility"
            if subtype == "accessibility" and "|" in gold:
                gold = "equally accessible"  # the release's rule for tied accessibility answers
        choices = OPTIONS[subtype]
        if gold.lower() not in choices:
            fail(file, where, f"field 'answer' {gold!r} is not one of {', '.join(choices)}")
        answer_type, answer = "choice", LETTERS[choices.index(gold.lower())]
        labels, gold_label = list(choices), gold.lower()
        ask = choice_block(question, choices)
    stem = file.stem.removesuffix("_new")
    return make_row(
        id=f"{NAME}/{'long' if long else 'normal'}/{key}/{stem}/{i}",
        source=NAME,
        user=f"{INSTRUCTION}\n\nStory:\n{narrative.strip()}\n\n{ask}",
        answer=answer,
        answer_type=answer_type,
        choices=choices,
        meta={
            "genre": genre,
            "order": order,
            "task": f"{genre}/{order}" if genre != "attitude" else genre,
            "subtype": subtype,
            "perspective": _perspective(question, mover, observer),
            "labels": labels,
            "gold_label": gold_label,
            **({"places": dict(zip(ROLES, places)), "candidates": places}
               if genre == "location_fine" else {}),
            "story": key,
            "narrative": "long" if long else "normal",
        },
    )


def _drop_article(text: str) -> str:
    """opentom_evaluator.remove_determinant, kept exact so every answer gets the original's class:
    it cuts a leading 'a', 'an' or 'the' without looking for a word boundary ('attic' -> 'ttic')."""
    for article in ("a", "an", "the"):
        if text.startswith(article):
            return text[len(article):].strip()
    return text


def _overlap(answer: str, place: str) -> float:
    """The share of the place's words found in the answer (compute_lexical_overlap)."""
    said = answer.lower().replace("_", " ").replace("'s", "").replace(".", "").split()
    words = place.lower().replace("_", " ").replace("'s", "").split()
    return len({w for w in said if w in words}) / len(words) if words else 0.0


def fine_gold_role(answer: str, original_place: str, move_to_place: str) -> str | None:
    """`initial`, `new`, or None when the gold names neither place (left out of the F1)."""
    gold = _drop_article(answer).lower()
    if _drop_article(original_place).lower() == gold:
        return "initial"
    if _drop_article(move_to_place).lower() == gold:
        return "new"
    return None


def fine_answer_role(answer: str, original_place: str, move_to_place: str) -> str:
    """The place the answer shares more words with; `neither` on a tie (no words of either)."""
    initial = _overlap(answer, _drop_article(original_place).lower())
    new = _overlap(answer, _drop_article(move_to_place).lower())
    return "initial" if initial > new else "new" if new > initial else NEITHER


def _perspective(question: str, mover: str, observer: str) -> str:
    """Whose view the question takes: the character named first ('From X's perspective, does
    Y think ...'), as the release's evaluator splits mover and observer questions."""
    found = []
    for role, name in (("mover", mover), ("observer", observer)):
        m = re.search(rf"\b{re.escape(name)}\b", question)
        if m:
            found.append((m.start(), role))
    return min(found)[1] if found else "narrator"


def predicted_label(row: Row, extracted: str | None, correct: bool) -> str | None:
    """The class an answer names, decided by the shared parser: the gold class when it is
    correct, else the first other class it would be correct for, else None (unparsed)."""
    meta = meta_of(row)
    if meta["genre"] == "location_fine":
        return fine_answer_role(extracted or "", meta["places"]["initial"], meta["places"]["new"])
    if correct:
        return meta["gold_label"]
    if extracted is None:
        return None
    for label in meta["labels"]:
        if label == meta["gold_label"]:
            continue
        gold = LETTERS[row["choices"].index(label)] if row["answer_type"] == "choice" else label
        if answers.is_correct(extracted, gold, row["answer_type"], row["choices"]):
            return label
    return None


# check_fullness_answer's and check_accessibility_answer's phrases, in the order looked for
_PHRASES = {
    "fullness": (("less full", ("less full", "emptier", "more empty")),
                 ("more full", ("more full", "fuller")),
                 ("equally full", ("equally full",))),
    "accessibility": (("more accessible", ("more accessible",)),
                      ("less accessible", ("less accessible",)),
                      ("equally accessible", ("equally accessible",))),
}
_ATTITUDES = ("positive", "neutral", "negative")


def original_label(meta: dict, reply: str, shared_read: bool) -> str | None:
    """The class the original gives an untagged reply (see the module docstring), or None where
    its rule finds none; a coarse reply the shared reader read (`shared_read`) keeps that."""
    genre = meta["genre"]
    if genre == "location_fine":
        return fine_answer_role(reply, meta["places"]["initial"], meta["places"]["new"])
    if genre == "location_coarse":
        if shared_read:
            return None
        words = set(re.findall(r"[a-z]+", reply.lower()))
        said = [w for w in ("yes", "no") if w in words]
        return said[0] if len(said) == 1 else None
    if genre == "multihop":
        text = reply.replace(".", "").lower()
        for label, phrases in _PHRASES[meta["subtype"]]:
            if any(p in text for p in phrases):
                return label
        return None
    token = reply.lower().split("\n\n")[-1].split(":")[-1].split(".")[0].strip()
    if token in ("a", "b", "c"):
        return _ATTITUDES["abc".index(token)]
    named = [a for a in _ATTITUDES if a in token]
    return named[0] if len(named) == 1 else None


def score(row: Row, response: str) -> Record:
    """The careful reading: the shared parser's verdict and the class it names (a reply that
    gives no answer names none; a fine location's class is then `neither`)."""
    rec = default_score(row, response)
    given = answer_given(rec)
    rec["label"] = predicted_label(row, rec["extracted"] if given else None, rec["correct"])
    return rec


def original_score(row: Row, response: str) -> Record:
    """The original's reading: the shared parser's verdict and the class it names; a reply
    without answer tags is classified by the original's rule where that finds a class
    (`original_label`)."""
    rec = default_score(row, response)
    meta = meta_of(row)
    reply = untagged_reply(response)
    label = original_label(meta, reply, rec["read"] != "none") if reply is not None else None
    if label is None:
        rec["label"] = predicted_label(row, rec["extracted"], rec["correct"])
        return rec
    if meta["genre"] == "location_fine":
        said, correct = reply, (label == meta["gold_label"] if meta["gold_label"] else rec["correct"])
    else:
        said = LETTERS[row["choices"].index(label)] if row["answer_type"] == "choice" else label
        correct = label == meta["gold_label"]
    return {**rec, "extracted": said, "correct": correct, "read": "fallback", "label": label}


def chance_of(row: Row) -> float | None:
    """A uniform random answerer's chance on a row: a fine location is one of the story's two
    places (initial, new), 1/2; the other questions as every benchmark's (yes/no 1/2, the three
    multi-hop and attitude classes 1/3)."""
    if meta_of(row)["genre"] == "location_fine":
        return 0.5
    return row_chance(row)


def _f1_block(records: list[Record]) -> dict[str, Any]:
    """F1 over the records whose gold has a class (evaluate.py drops a gold of None); classes of
    the two multi-hop subtypes merged as the original."""
    graded = [r for r in records if r["meta"]["gold_label"] is not None]
    gold = [MERGED_CLASS.get(r["meta"]["gold_label"], r["meta"]["gold_label"]) for r in graded]
    pred = [MERGED_CLASS.get(r.get("label"), r.get("label")) for r in graded]
    valid = [(g, p) for g, p in zip(gold, pred) if p is not None]
    classes = {g for g in gold} | {p for p in pred if p is not None}
    return {
        "macro_f1": f1([g for g, _ in valid], [p for _, p in valid]) if valid else 0.0,
        "macro_f1_strict": f1(gold, ["\0unparsed" if p is None else p for p in pred], labels=classes)
        if gold else 0.0,
        "accuracy": mean(r["correct"] for r in records),
        "unparsed": mean(r.get("label") is None for r in records),
        "n": len(records),
        "no_gold_class": len(records) - len(graded),
    }


def aggregate(records: list[Record]) -> dict[str, Any]:
    """Macro-F1 per task (genre x order) as the paper's table, their mean as the headline, and
    the same per genre, per multi-hop subtype; accuracy per perspective."""
    out: dict[str, Any] = {"accuracy": mean(r["correct"] for r in records), "n": len(records)}
    for key in ("task", "genre", "subtype"):
        groups: dict[str, list[Record]] = defaultdict(list)
        for r in records:
            groups[r["meta"][key]].append(r)
        out[f"by_{key}"] = {k: _f1_block(v) for k, v in sorted(groups.items())}
    # evaluate.py also prints each multi-hop subtype of each order on its own
    hops: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r["meta"]["genre"] == "multihop":
            hops[f"{r['meta']['task']}/{r['meta']['subtype']}"].append(r)
    if hops:
        out["by_multihop_task"] = {k: _f1_block(v) for k, v in sorted(hops.items())}
    tasks = out["by_task"].values()
    out["macro_f1"] = mean(t["macro_f1"] for t in tasks)
    out["macro_f1_strict"] = mean(t["macro_f1_strict"] for t in tasks)
    out["unparsed"] = mean(r.get("label") is None for r in records)
    persp: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        persp[r["meta"]["perspective"]].append(bool(r["correct"]))
    out["by_perspective"] = {k: {"accuracy": mean(v), "n": len(v)} for k, v in sorted(persp.items())}
    return out


BENCHMARK = Benchmark(
    display="OpenToM",
    rank=60,
    name=NAME,
    category="tom",
    load=load,
    default_dir="opentom",
    hub_id="SeacowX/OpenToM",
    breakdowns=("task", "genre", "subtype", "perspective"),
    primary_metric="macro_f1",
    score=score,
    original_score=original_score,
    aggregate=aggregate,
    chance=chance_of,
    notes="Macro-F1 per genre (coarse/fine location, multi-hop, attitude) and order, as "
    "src/evaluate.py: fine locations by role (initial/new/neither), multi-hop subtypes with merged "
    "classes, unparsable answers left out (their share reported); headline = mean over tasks.",
)
